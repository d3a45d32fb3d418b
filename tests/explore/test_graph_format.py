"""Unified graph format: faiss extraction, number format, per-channel memory image, persistence."""

import faiss
import numpy as np
import pytest
from faiss.contrib.inspect_tools import get_NSG_neighbors

from fanns.errors import FannsError
from fanns.index.graph import PAD_ID, WORD_BYTES, GraphImage, build_graph, graph_format_for


def test_hnsw_base_layer_is_faiss_level_zero():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((800, 12)).astype(np.float32)
    g = build_graph(base, "hnsw", max_degree=12, ef_construction=40)
    index = faiss.IndexHNSWFlat(12, 6)
    index.hnsw.efConstruction = 40
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    index.add(base)
    faiss.omp_set_num_threads(threads)
    hnsw = index.hnsw
    neighbors, offsets = faiss.vector_to_array(hnsw.neighbors), faiss.vector_to_array(hnsw.offsets)
    for node in range(0, 800, 37):
        begin = int(offsets[node]) + hnsw.cum_nb_neighbors(0)
        want = [int(v) for v in neighbors[begin : begin + hnsw.nb_neighbors(0)] if v >= 0]
        assert list(g.neighbors[node, : g.degree[node]]) == want
    assert g.entry == hnsw.entry_point
    assert g.max_degree == 12 and g.build == {"M": 6, "efConstruction": 40}


def test_nsg_graph_and_entry():
    rng = np.random.default_rng(2)
    base = rng.standard_normal((600, 8)).astype(np.float32)
    g = build_graph(base, "nsg", max_degree=10)
    index = faiss.IndexNSGFlat(8, 10)
    index.add(base)
    want = get_NSG_neighbors(index.nsg)
    for node in range(0, 600, 17):
        assert list(g.neighbors[node, : g.degree[node]]) == [v for v in want[node] if v >= 0]
    assert g.entry == index.nsg.enterpoint


def test_padding_is_last_and_degrees_bounded(synthetic):
    for g in synthetic["graphs"].values():
        valid = g.neighbors >= 0
        assert not np.any(valid[:, 1:] & ~valid[:, :-1])
        assert g.degree.max() <= g.max_degree and g.degree.min() >= 1
        assert g.neighbors.max() < g.n


def test_number_format_is_exact_for_integer_data_and_scaled_otherwise():
    ints = np.random.default_rng(3).integers(0, 256, (50, 16)).astype(np.float32)
    fmt = graph_format_for(ints)
    assert not fmt.signed and fmt.scale == 1.0 and np.array_equal(fmt.quantize(ints), ints.astype(np.int64))
    floats = np.random.default_rng(4).standard_normal((50, 16))
    fmt = graph_format_for(floats)
    q = fmt.quantize(floats)
    assert fmt.signed and np.abs(q).max() == 127
    assert np.abs(q / fmt.scale - floats).max() <= 0.5 / fmt.scale + 1e-12


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_channel_image_round_trip_and_layout(synthetic, channels):
    g = synthetic["graphs"]["hnsw"]
    images = g.pack(channels)
    assert len(images) == channels
    back = GraphImage.unpack(images, g.n, g.max_degree, g.entry, g.fmt, g.kind)
    assert np.array_equal(back.neighbors, g.neighbors) and np.array_equal(back.vectors, g.vectors)
    assert g.adjacency_row_bytes % WORD_BYTES == 0 and g.vector_row_bytes % WORD_BYTES == 0
    node = g.n - 2
    image = images[node % channels]
    row = image["adjacency"][(node // channels) * g.adjacency_row_bytes :][: g.adjacency_row_bytes].view("<u4")
    assert row[0] == g.degree[node]
    assert list(row[1 : 1 + g.degree[node]]) == list(g.neighbors[node, : g.degree[node]])
    assert np.all(row[1 + g.degree[node] :] == PAD_ID)
    vec = image["vectors"][(node // channels) * g.vector_row_bytes :][: g.fmt.d].view(g.elem_dtype())
    assert np.array_equal(vec.astype(np.int64), g.vectors[node])


def test_save_and_load(synthetic, tmp_path):
    g = synthetic["graphs"]["nsg"]
    g.save(tmp_path / "g.npz")
    back = GraphImage.load(tmp_path / "g.npz")
    assert back.kind == "nsg" and back.entry == g.entry and back.fmt == g.fmt and back.build == g.build
    assert np.array_equal(back.neighbors, g.neighbors) and np.array_equal(back.vectors, g.vectors)


def test_bad_input_is_reported():
    base = np.zeros((10, 4), dtype=np.float32)
    with pytest.raises(FannsError, match="unknown graph kind"):
        build_graph(base, "ivf")
    with pytest.raises(FannsError, match="max_degree"):
        build_graph(base, "hnsw", max_degree=7)
    with pytest.raises(FannsError, match="entry"):
        GraphImage(
            kind="nsg",
            neighbors=np.zeros((3, 2), dtype=np.int32),
            entry=5,
            vectors=np.zeros((3, 4)),
            fmt=graph_format_for(base),
        )
