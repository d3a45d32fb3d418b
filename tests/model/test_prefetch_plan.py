"""The shared pieces of the host-memory tier's faces (docs/host_tier.md, "The faces"): the design
field, the images (lists in host memory, zeroed cache regions on the PQ channels), and the planner's
descriptors — applied to an array model of the cache regions they leave every cached list's beats
where the mirrored table says, byte for byte the list's beats in host memory, and the mirrored
table is the ring's and the pinned lists' (placed at the region's end at every load, skipped by
prefetches, never evicted)."""

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fanns.boards import HOST_MEMORY
from fanns.design.ivfpq import IvfPqDesign
from fanns.errors import FannsError
from fanns.images.ivfpq import TABLE_WORDS, cache_list_beats, pack, pq_layouts
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.prefetch import RingCache
from fanns.model.ivfpq.prefetch_plan import EVICT, FROM_HOST, MOVE, CachePlan, apply_regions, apply_table

CACHE = 3000


@pytest.fixture(scope="module")
def packed():
    data = random_index(nlist=12, n=900, d=32, m=8, empty=2)
    design = pinned_design(data, random_format(32, 8), nprobe=4, k=10, pq=(4, 2), host_cache_bytes=CACHE)
    return design, data, pack(design, data)


def test_the_design_field_round_trips_and_is_checked(packed):
    design = packed[0]
    assert IvfPqDesign.from_dict(yaml.safe_load(design.to_yaml())) == design
    doc = design.to_dict()
    assert doc["stages"]["pq_dist"]["host_tier"] == {"cache_bytes": CACHE}
    for bad, what in (({"cache_bytes": 0}, "cache_bytes"), ({"cache": 5}, "unknown key"), (7, "mapping")):
        doc["stages"]["pq_dist"]["host_tier"] = bad
        with pytest.raises(FannsError, match=what):
            IvfPqDesign.from_dict(doc)
    doc["stages"]["pq_dist"]["host_tier"] = {"cache_bytes": 10}  # less than one beat a channel
    with pytest.raises(FannsError, match="no whole beat"):
        IvfPqDesign.from_dict(doc)
    doc["stages"]["pq_dist"]["host_tier"] = {"cache_bytes": CACHE}
    doc["stages"]["pq_dist"]["tiers"] = {"memory": "hbm", "channels": 2, "hot": [1]}
    with pytest.raises(FannsError, match="either"):
        IvfPqDesign.from_dict(doc)


def test_lists_in_host_memory_and_zeroed_caches_on_the_pq_channels(packed):
    design, data, images = packed
    pq = design.stages.pq_dist
    beats = CACHE // (pq.channels * pq.port_bits // 8)
    assert images.info["host_tier"] == {"cache_bytes": CACHE, "cache_beats": beats, "port_bits": pq.port_bits}
    for c, (ch, _layout) in enumerate(pq_layouts(design)):
        codes, cache = images.get(f"pq_codes_{c}"), images.get(f"pq_cache_{c}")
        assert (codes.memory, codes.channel) == (HOST_MEMORY, 0)
        assert (cache.memory, cache.channel, cache.use) == (ch.memory, ch.channel, "pq_cache")
        assert cache.data == bytes(beats * pq.port_bits // 8)
    tables = [_table(images, c) for c in range(pq.channels)]
    assert np.array_equal(cache_list_beats(images), np.max([t[:, 1] for t in tables], axis=0))
    assert cache_list_beats(images)[np.diff(data.offsets) == 0].sum() == 0


def _table(images, c):
    img = images.get(f"pq_codes_{c}")
    nlist = img.layout["nlist"]
    return np.frombuffer(img.data[: nlist * TABLE_WORDS * 4], dtype="<u4").reshape(nlist, TABLE_WORDS)


def _pin(beats: np.ndarray, room: int) -> tuple[int, ...]:
    """Non-empty lists, smallest first, while they fit `room` beats; returned largest first (the
    region keeps the design's order, not the cells')."""
    out, used = [], 0
    for cell in np.argsort(beats, kind="stable"):
        if beats[cell] and used + beats[cell] <= room:
            out.append(int(cell))
            used += int(beats[cell])
    return tuple(reversed(out))


def _with_pinned(packed, pinned):
    design, data, _ = packed
    return pinned_design(data, design.format, nprobe=4, k=10, pq=(4, 2), host_cache_bytes=CACHE, host_pinned=pinned)


def test_pinned_lists_are_a_checked_design_field(packed):
    design, data, images = packed
    beats, cache_beats = cache_list_beats(images), images.info["host_tier"]["cache_beats"]
    pinned = _pin(beats, cache_beats // 2)
    assert len(pinned) >= 2 and list(pinned) != sorted(pinned)
    pinned_one = _with_pinned(packed, pinned)
    assert IvfPqDesign.from_dict(yaml.safe_load(pinned_one.to_yaml())) == pinned_one
    doc = pinned_one.to_dict()
    assert doc["stages"]["pq_dist"]["host_tier"] == {"cache_bytes": CACHE, "pinned": list(pinned)}
    assert design.stages.pq_dist.host_tier.pinned == ()  # a design.yaml without the key: nothing pinned
    for bad, what in (
        ([pinned[0], pinned[0]], "more than once"),
        ([data.nlist], "not a list of the index"),
        ([-1], "not a list of the index"),
        ([True], "list of list ids"),
        ("3", "list of list ids"),
    ):
        doc["stages"]["pq_dist"]["host_tier"]["pinned"] = bad
        with pytest.raises(FannsError, match=f"host_tier.pinned.*{what}"):
            IvfPqDesign.from_dict(doc)
    info = pack(pinned_one, data).info["host_tier"]
    assert info["pinned"] == list(pinned) and info["ring_beats"] == cache_beats - beats[list(pinned)].sum()
    every = tuple(int(c) for c in np.nonzero(beats)[0])  # more beats than the region: refused at packing
    with pytest.raises(FannsError, match="pinned lists take"):
        pack(_with_pinned(packed, every), data)


@pytest.mark.parametrize("seed", range(3))
def test_descriptors_fill_the_cache_regions_as_the_table_says(packed, seed):
    """Seed 0 pins nothing; 1 and 2 pin lists in up to half the region: placed at load (`reset`),
    at the region's end in the design's order, skipped by every prefetch and never evicted."""
    design, data, images = packed
    pq = design.stages.pq_dist
    pb = pq.port_bits // 8
    rng = np.random.default_rng(seed)
    host = [np.frombuffer(images.get(f"pq_codes_{c}").data, dtype=np.uint8) for c in range(pq.channels)]
    tables = [_table(images, c) for c in range(pq.channels)]
    beats = images.info["host_tier"]["cache_beats"]
    list_beats = cache_list_beats(images)
    pinned = _pin(list_beats, seed * beats // 4)
    assert bool(pinned) == bool(seed)
    caches = [np.zeros(beats * pb, dtype=np.uint8) for _ in range(pq.channels)]
    plan = CachePlan(beats, list_beats, pq.channels * pb, pinned)
    placed = plan.reset()  # an index load: the pinned lists' copies
    assert placed[:, 0].tolist() == list(pinned) and set(placed[:, 1].tolist()) <= {FROM_HOST}
    sizes = list_beats[list(pinned)]
    assert placed[:, 2].tolist() == (beats - sizes.sum() + np.cumsum(sizes) - sizes).tolist()  # the region's end
    assert plan.ring.capacity == beats - sizes.sum()
    apply_regions(placed, host, caches, tables, pb)
    ops = set()
    for _ in range(16):
        desc = plan.prefetch(rng.permutation(data.nlist), rng.integers(0, 2 * CACHE))
        ops |= set(desc[:, 1].tolist())
        assert not np.isin(desc[:, 0], pinned).any()  # skipped, never evicted or moved
        apply_regions(desc, host, caches, tables, pb)
        assert plan.table == {**plan.ring.table, **plan.pinned} and set(pinned) <= set(plan.table)
        assert all(at + list_beats[c] <= plan.ring.capacity for c, at in plan.ring.table.items())
        for cell, at in plan.table.items():
            for img, cache, table in zip(host, caches, tables):
                start, n = int(table[cell, 0]), int(table[cell, 1])
                assert np.array_equal(cache[at * pb : (at + n) * pb], img[start * pb : (start + n) * pb])
    assert ops == {EVICT, FROM_HOST, MOVE}  # the draws exercise every op
    assert np.array_equal(plan.reset(), placed) and plan.table == plan.pinned  # a reload places them again


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 9), min_size=1, max_size=20),
    capacity=st.integers(0, 40),
    rounds=st.lists(st.tuples(st.randoms(use_true_random=False), st.integers(0, 60)), min_size=1, max_size=6),
    pins=st.lists(st.integers(0, 19), unique=True, max_size=4),
)
def test_the_mirrored_table_is_the_rings(sizes, capacity, rounds, pins):
    sizes = np.array(sizes)
    pinned = [p for p in pins if p < len(sizes)]
    if sizes[pinned].sum() > capacity:
        with pytest.raises(FannsError, match="pinned lists take"):
            CachePlan(capacity, sizes, 1, pinned)
        return
    plan = CachePlan(capacity, sizes, 1, pinned)
    ring = capacity - sizes[pinned].sum()
    assert plan.ring.capacity == ring and plan.table == plan.pinned == {p: plan.pinned[p] for p in pinned if sizes[p]}
    for rnd, budget in rounds:
        order = list(range(len(sizes)))
        rnd.shuffle(order)
        before = dict(plan.table)
        desc = plan.prefetch(np.array(order), budget)
        assert plan.table == {**plan.ring.table, **plan.pinned}
        for cell, op, at, source in desc.tolist():
            assert cell not in pinned
            if op == EVICT:
                assert cell in before
                before.pop(cell)
            else:
                assert at + sizes[cell] <= ring and sizes[cell] > 0
                if op == MOVE:
                    assert before.get(cell) == source and (at <= source or at >= source + sizes[cell])
                before[cell] = at
        assert before == plan.table
        live = sorted((at, at + sizes[c]) for c, at in plan.table.items())
        assert all(a[1] <= b[0] for a, b in zip(live, live[1:]))  # cached lists never overlap


def test_the_ring_reports_its_evictions():
    ring = RingCache(10)
    sizes = np.array([4, 4, 4, 4])
    assert [e for *_, e in ring.plan([0, 1], sizes, 10)] == [[], []]
    assert ring.plan([2], sizes, 10) == [(2, 0, None, [0])]  # wraps: overwrites list 0
    assert apply_table({0: 0, 1: 4}, np.array([[0, EVICT, 0, 0], [2, FROM_HOST, 0, 0]])) == ring.table
