"""A PQ-code channel image written a list at a time: the same bytes as the packed image, and
memory bounded by a list, not by the codes of the index."""

import hashlib
import tracemalloc

import numpy as np
import pytest

from fanns.images import ivfpq as ivfpq_images
from fanns.images.ivfpq_channel import iter_pq_channel, pq_channel_bytes, write_pq_channel
from fanns.index.ivfpq import IvfPqIndexData
from fanns.model.ivfpq import skew as skew_model
from fanns.model.ivfpq.pinned import pinned_design
from tests.codegen.helpers import random_format, random_index
from tests.codegen.test_memimage import CASES


def _channels(design, use="pq_codes"):
    return ivfpq_images.pq_layouts(design, use)


@pytest.mark.parametrize("board,d,m,pq", CASES, ids=lambda c: str(c))
def test_streamed_channel_equals_packed_image(tmp_path, board, d, m, pq):
    data = random_index(nlist=12, n=900, d=d, m=m, seed=3)
    design = pinned_design(data, random_format(d, m), board=board, nprobe=3, k=7, pq=pq)
    images = ivfpq_images.pack(design, data)
    for c, (_ch, layout) in enumerate(_channels(design)):
        img = images.get(f"pq_codes_{c}")
        path = tmp_path / f"pq_codes_{c}.bin"
        record = write_pq_channel(layout, data, path)
        assert path.read_bytes() == img.data
        assert record == {"bytes": img.nbytes, "sha256": img.sha256}
        assert pq_channel_bytes(layout, data) == img.nbytes


def test_streamed_tier_images_equal_packed_ones(tmp_path):
    data = random_index(nlist=16, n=1200, d=32, m=8, seed=5)
    hot = np.zeros(data.nlist, dtype=bool)
    hot[[1, 4, 9]] = True
    base = pinned_design(data, random_format(32, 8), nprobe=3, k=7, ivf=(2, 16, "bram"), lut=(3, 32, "bram"), pq=(4, 2))
    design = skew_model.with_tiers(base, hot, "hbm")
    images = ivfpq_images.pack(design, data)
    mask = ivfpq_images.hot_lists(design)
    for use, lists in (("pq_codes", ~mask), ("pq_hot", mask)):
        for c, (_ch, layout) in enumerate(_channels(design, use)):
            record = write_pq_channel(layout, data, tmp_path / f"{use}_{c}.bin", lists)
            assert (tmp_path / f"{use}_{c}.bin").read_bytes() == images.get(f"{use}_{c}").data
            assert record["sha256"] == hashlib.sha256(images.get(f"{use}_{c}").data).hexdigest()


def test_pieces_are_the_header_then_one_list_each():
    data = random_index(nlist=20, n=3000, d=32, m=8, seed=2, empty=3)
    design = pinned_design(data, random_format(32, 8), board="u55c", nprobe=3, k=7, pq=(4, 2))
    (_ch, layout), *_ = _channels(design)
    pieces = list(iter_pq_channel(layout, data))
    nonempty = int((data.list_sizes > 0).sum())
    assert len(pieces) == 1 + nonempty
    assert len(pieces[0]) == layout.header_beats * layout.port_bytes
    beats = [layout.list_beats(int(n)) * layout.port_bytes for n in data.list_sizes if n]
    assert [len(p) for p in pieces[1:]] == beats


def test_writing_holds_a_list_not_the_codes(tmp_path):
    """About 200,000 codes of 16 bytes in 512 lists of similar size: writing a channel allocates
    (tracemalloc: numpy and Python objects) a small multiple of the largest list's image, far
    below the 3.2 MB of codes."""
    rng = np.random.default_rng(7)
    nlist, d, m = 512, 64, 16
    sizes = rng.integers(300, 480, nlist)
    n = int(sizes.sum())
    data = IvfPqIndexData(
        centroids=rng.standard_normal((nlist, d)).astype(np.float32),
        codebook=rng.standard_normal((m, 256, d // m)).astype(np.float32),
        opq_matrix=None,
        offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        ids=rng.permutation(n).astype(np.int64),
        codes=rng.integers(0, 256, (n, m), dtype=np.uint8),
        metric="l2",
    )
    design = pinned_design(data, random_format(d, m), board="u55c", nprobe=3, k=7, pq=(4, 1))
    (_ch, layout), *_ = _channels(design)
    largest = layout.list_beats(int(data.list_sizes.max())) * layout.port_bytes
    tracemalloc.start()
    try:
        record = write_pq_channel(layout, data, tmp_path / "pq_codes_0.bin")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert record["bytes"] > data.codes.nbytes  # the image holds every code (and its id)
    assert peak < 16 * largest + (1 << 19)
    assert peak < data.codes.nbytes / 4
    raw = (tmp_path / "pq_codes_0.bin").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == record["sha256"]
    shares = ivfpq_images.unpack_pq_channel(layout, raw)
    for cell in range(nlist):
        ids = np.empty(int(sizes[cell]), dtype=np.int64)
        for pe, (share_ids, _codes, pad) in shares[cell].items():
            ids[pe :: layout.pes] = share_ids[~pad]
        assert np.array_equal(ids, data.list_ids(cell)), cell
