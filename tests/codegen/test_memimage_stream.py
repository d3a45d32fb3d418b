"""PQ-code channel images are streamed: `pack` makes them a list at a time (`Streamed`), the
folder written from them reads back whole (size, sha256, every list), and writing holds a list,
not the codes of the index."""

import hashlib
import tracemalloc

import numpy as np
import pytest

from fanns.images import ivfpq as ivfpq_images
from fanns.images.ivfpq_channel import iter_pq_channel, pq_channel_bytes
from fanns.index.ivfpq import IvfPqIndexData
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import skew as skew_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.outputs import Streamed
from tests.codegen.test_memimage import CASES


def _channels(design, use="pq_codes"):
    return ivfpq_images.pq_layouts(design, use)


def _lists_of(images, pes):
    return [(ids.tolist(), codes.tobytes()) for ids, codes in ivfpq_images.unpack_lists(images, pes)]


@pytest.mark.parametrize("board,d,m,pq", CASES, ids=lambda c: str(c))
def test_streamed_channels_write_and_read_back_whole(tmp_path, board, d, m, pq):
    data = random_index(nlist=12, n=900, d=d, m=m, seed=3)
    design = pinned_design(data, random_format(d, m), board=board, nprobe=3, k=7, pq=pq)
    images = ivfpq_images.pack(design, data)
    for c, (_ch, layout) in enumerate(_channels(design)):
        img = images.get(f"pq_codes_{c}")
        assert isinstance(img.content, Streamed)
        assert bytes(img.content) == img.data and img.content == img.data  # a streamed file equals its bytes
        assert img.nbytes == pq_channel_bytes(layout, data) == sum(len(p) for p in iter_pq_channel(layout, data))
    images.write(tmp_path)
    back = ivfpq_images.MemoryImages.read(tmp_path)  # checks every file's size and sha256
    for img in images.by_use("pq_codes"):
        assert back.get(img.name).data == img.data
        assert back.get(img.name).sha256 == img.sha256 == hashlib.sha256(img.data).hexdigest()
    expected = [(data.list_ids(c).tolist(), data.list_codes(c).tobytes()) for c in range(data.nlist)]
    assert _lists_of(back, design.stages.pq_dist.pes) == expected


def test_streamed_tier_images_hold_their_tier_lists(tmp_path):
    data = random_index(nlist=16, n=1200, d=32, m=8, seed=5)
    hot = np.zeros(data.nlist, dtype=bool)
    hot[[1, 4, 9]] = True
    base = pinned_design(data, random_format(32, 8), nprobe=3, k=7, ivf=(2, 16, "bram"), lut=(3, 32, "bram"), pq=(4, 2))
    design = skew_model.with_tiers(base, hot, "hbm")
    images = ivfpq_images.pack(design, data)
    images.write(tmp_path)
    back = ivfpq_images.MemoryImages.read(tmp_path)
    for use, lists in (("pq_codes", ~hot), ("pq_hot", hot)):
        held = np.zeros(data.nlist, dtype=int)  # codes each list has in this tier's channels
        for c, (_ch, layout) in enumerate(_channels(design, use)):
            shares = ivfpq_images.unpack_pq_channel(layout, back.get(f"{use}_{c}").data)
            for cell, per_pe in shares.items():
                held[cell] += sum(int((~pad).sum()) for _ids, _codes, pad in per_pe.values())
        assert held.tolist() == np.where(lists, data.list_sizes, 0).tolist(), use
    expected = [(data.list_ids(c).tolist(), data.list_codes(c).tobytes()) for c in range(data.nlist)]
    assert _lists_of(back, design.stages.pq_dist.pes) == expected


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
    """About 200,000 codes of 16 bytes in 512 lists of similar size. Packing allocates (tracemalloc:
    numpy and Python objects) for the centroids and codebook it quantises, nothing for the codes;
    writing the image set (hashing each streamed image for the manifest, then writing it) a small
    multiple of the largest list's image. Both far below the 3.2 MB of codes."""
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
        images = ivfpq_images.pack(design, data)
        _, pack_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        images.write(tmp_path)
        _, write_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    img = images.get("pq_codes_0")
    assert img.nbytes > data.codes.nbytes  # the image holds every code (and its id)
    assert pack_peak < 8 * (data.centroids.nbytes + data.codebook.nbytes) < data.codes.nbytes / 2
    assert write_peak < 16 * largest + (1 << 19)
    assert write_peak < data.codes.nbytes / 4
    raw = (tmp_path / "pq_codes_0.bin").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == img.sha256
    shares = ivfpq_images.unpack_pq_channel(layout, raw)
    for cell in range(nlist):
        ids = np.empty(int(sizes[cell]), dtype=np.int64)
        for pe, (share_ids, _codes, pad) in shares[cell].items():
            ids[pe :: layout.pes] = share_ids[~pad]
        assert np.array_equal(ids, data.list_ids(cell)), cell
