"""The memory-image packer: round trip to the index content, the beat schedule, the list table,
the centroid and ROM images, manifest integrity and determinism."""

import json

import numpy as np
import pytest

from fanns.design.ivfpq_stages import Packing
from fanns.errors import FannsError
from fanns.images import ivfpq as ivfpq_images
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq import IvfPqReference

# (board, d, m, pq (PEs, channels)): 256-bit HBM, 512-bit DDR, 128-bit ports with codes wider than a beat
CASES = [
    ("u55c", 32, 8, (4, 2)),
    ("u55c", 32, 8, (7, 3)),
    ("u55c", 32, 4, (5, 1)),
    ("u250", 32, 8, (11, 2)),  # io + 2 PQ channels + LUT centroids: the 4 DDR4 channels
    ("u250", 48, 2, (3, 3)),
    ("zcu104", 64, 32, (5, 2)),
]


def _design(board, d, m, pq, opq=False, seed=0, **kw):
    data = random_index(d=d, m=m, opq=opq, seed=seed)
    fmt = random_format(d, m)
    return pinned_design(data, fmt, board=board, nprobe=3, k=7, pq=pq, **kw), data


@pytest.mark.parametrize("board,d,m,pq", CASES, ids=lambda c: str(c))
def test_round_trip_equals_index_content(board, d, m, pq):
    design, data = _design(board, d, m, pq)
    images = ivfpq_images.pack(design, data)
    lists = ivfpq_images.unpack_lists(images, pq[0])
    assert len(lists) == data.nlist
    for cell, (ids, codes) in enumerate(lists):
        assert np.array_equal(ids, data.list_ids(cell)), cell
        assert np.array_equal(codes, data.list_codes(cell)), cell
    assert sum(ids.shape[0] for ids, _ in lists) == data.ntotal


@pytest.mark.parametrize("board,d,m,pq", CASES, ids=lambda c: str(c))
def test_shares_padding_and_table(board, d, m, pq):
    design, data = _design(board, d, m, pq)
    images = ivfpq_images.pack(design, data)
    pes = pq[0]
    packing = Packing(m, design.stages.pq_dist.port_bits)
    for img in images.by_use("pq_codes"):
        lay = img.layout
        layout = ivfpq_images.PqLayout(m, lay["port_bits"], pes, tuple(lay["channel_pes"]), data.nlist)
        table = np.frombuffer(img.data[: data.nlist * 16], dtype="<u4").reshape(data.nlist, 4)
        expect_start = layout.header_beats
        for cell in range(data.nlist):
            start, beats, share, count = (int(v) for v in table[cell])
            n = int(data.list_sizes[cell])
            assert (start, count) == (expect_start, n)
            assert beats == len(layout.channel_pes) * int(packing.beats(n, pes))
            assert share == (0 if n == 0 else int(packing.items(n, pes)))
            expect_start += beats
        assert img.nbytes == expect_start * layout.port_bytes
        for cell, per_pe in ivfpq_images.unpack_pq_channel(layout, img.data).items():
            n = int(data.list_sizes[cell])
            for p, (ids, _codes, pad) in per_pe.items():
                real = len(range(p, n, pes))
                assert ids.shape[0] == (0 if n == 0 else int(packing.items(n, pes)))
                assert not pad[:real].any() and pad[real:].all()


def test_channel_pes_are_contiguous_blocks():
    design, _ = _design("u55c", 32, 8, (11, 4))
    blocks = [lay.channel_pes for _, lay in ivfpq_images.pq_layouts(design)]
    assert blocks == [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10)]


@pytest.mark.parametrize("ipb_case", [(32, 8, 256), (48, 2, 512), (64, 32, 128), (32, 16, 64)])
def test_schedule_delivers_ids_just_in_time(ipb_case):
    """Every code unit of a PE is preceded by all the id beats it needs and by no id beat that
    a later unit is the first to need; units run u-major over the channel's PEs."""
    d, m, port = ipb_case
    for pch in (1, 2, 3):
        layout = ivfpq_images.PqLayout(m, port, 5, tuple(range(pch)), 4)
        for count in (1, 5, 17, 64, 333):
            share = layout.share_items(count)
            sched = layout.schedule(share)
            ipu, bpu, ipb = layout.codes_per_unit, layout.beats_per_unit, layout.ids_per_beat
            assert sched.shape[0] == pch * int(Packing(m, port).beats(count, 5))
            got_ids = [0] * pch
            order = []
            for q, kind, index in sched:
                if kind == ivfpq_images.ID_KIND:
                    assert index == got_ids[q]
                    got_ids[q] += 1
                else:
                    unit = index // bpu
                    need_items = (unit + 1) * ipu
                    assert got_ids[q] * ipb >= min(need_items, share)
                    assert (got_ids[q] - 1) * ipb < need_items  # no id beat delivered early
                    if index % bpu == 0:
                        order.append((unit, q))
            assert order == sorted(order)
            assert got_ids == [-(-share // ipb)] * pch


def test_centroid_and_rom_images_equal_reference_arrays():
    data = random_index(d=32, m=8, opq=True, seed=4)
    fmt = random_format(32, 8)
    ref = IvfPqReference(data, fmt)
    design = pinned_design(data, fmt, nprobe=3, k=5, ivf=(5, 8, "stream"), lut=(2, 8, "memory"), pq=(3, 2))
    images = ivfpq_images.pack(design, data)
    assert np.array_equal(images.get("opq_matrix").array(), ref.opq_fx)
    book = images.get("codebook").array()
    assert book.shape == (256, 32)
    for s in range(8):
        assert np.array_equal(book[:, s * 4 : (s + 1) * 4], ref.codebook_fx[s])
    cells = images.get("lut_centroids")
    pb = cells.layout["port_bits"] // 8
    raw = np.frombuffer(cells.data, dtype=np.uint8).reshape(data.nlist, cells.layout["cell_beats"] * pb)
    assert np.array_equal(raw[:, :64].copy().view("<i2"), ref.centroids_fx)
    # streamed IVF centroids: decode every channel's word order and compare to each PE's chunk
    seen = {}
    for img in images.by_use("ivf_centroids"):
        lay = img.layout
        elems = np.frombuffer(img.data, dtype="<i2")
        words = elems[: lay["words"] * 8].reshape(-1, 8)
        pos = 0
        chunks = [tuple(c) for c in lay["chunks"]]
        for i in range(max(n for _, n in chunks)):
            for k in range(4):
                for base, n in chunks:
                    if i < n:
                        seen.setdefault((base + i), {})[k] = words[pos]
                        pos += 1
        assert pos == lay["words"]
    assert sorted(seen) == list(range(data.nlist))
    for cell, parts in seen.items():
        assert np.array_equal(np.concatenate([parts[k] for k in range(4)]), ref.centroids_fx[cell])
    assert "centroids" not in [img.name for img in images.images]  # nothing on chip needs them


def test_io_layout_round_trip():
    io = ivfpq_images.IoLayout(d=20, k=5, elem_bytes=2, port_bits=256)
    q = np.arange(-60, 0).reshape(3, 20)
    raw = io.pack_queries(q)
    assert len(raw) == 3 * io.query_beats * 32 and io.query_beats == 2
    back = np.frombuffer(raw, dtype="<i2").reshape(3, 32)[:, :20]
    assert np.array_equal(back, q)
    keys = np.arange(15, dtype=np.uint64).reshape(3, 5) << np.uint64(40)
    buf = np.zeros((3, io.result_beats * 32), dtype=np.uint8)
    buf[:, :40] = keys.view(np.uint8).reshape(3, 40)
    assert np.array_equal(io.unpack_results(buf.tobytes(), 3), keys)


def test_write_read_manifest_and_corruption(tmp_path):
    design, data = _design("u55c", 32, 8, (4, 2), opq=True)
    images = ivfpq_images.pack(design, data)
    path = images.write(tmp_path / "img")
    man = json.loads(path.read_text())
    assert [r["name"] for r in man["images"]] == ["pq_codes_0", "pq_codes_1", "codebook", "centroids", "opq_matrix"]
    assert [(r["memory"], r["channel"]) for r in man["images"][:2]] == [("hbm", 1), ("hbm", 2)]
    assert man["io"]["memory"] == "hbm" and man["io"]["channel"] == 0
    assert all((r["memory"], r["channel"]) == ("hbm", 0) for r in man["images"] if r["use"] == "rom")
    back = ivfpq_images.MemoryImages.read(tmp_path / "img")
    assert back == images
    f = tmp_path / "img" / "pq_codes_1.bin"
    raw = bytearray(f.read_bytes())
    raw[100] ^= 1
    f.write_bytes(bytes(raw))
    with pytest.raises(FannsError, match="sha256"):
        ivfpq_images.MemoryImages.read(tmp_path / "img")
    with pytest.raises(FannsError, match="manifest"):
        ivfpq_images.MemoryImages.read(tmp_path / "nothing")


def test_deterministic_and_checks_the_index():
    design, data = _design("u55c", 32, 8, (5, 2), seed=3)
    a, b = ivfpq_images.pack(design, data), ivfpq_images.pack(design, data)
    assert [i.sha256 for i in a.images] == [i.sha256 for i in b.images]
    other = random_index(nlist=10, d=32, m=8)
    with pytest.raises(FannsError, match="nlist"):
        ivfpq_images.pack(design, other)
    bad = random_index(d=32, m=8, seed=3)
    bad.ids[0] = ivfpq_images.PAD_ID
    with pytest.raises(FannsError, match="padding id"):
        ivfpq_images.pack(design, bad)
