"""The rtl-sim backend's lookahead prefetch (docs/host_tier.md): a generated RTL core of a
host-memory design (two PQ channels, both reading host memory) under Verilator + cocotb, driven
by the driver (`fanns.driver.open(..., backend="rtl-sim")`), the hottest lists pinned (the driver
places them after the load): `prefetch` then `search` returns the reference keys cold (only the
pinned lists cached), after a prefetch and after prefetches that move and evict, and the mirror's
counts say the searches found cached lists."""

import numpy as np
import pytest

import fanns.driver
from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.images import ivfpq as ivfpq_images
from fanns.images.ivfpq import cache_list_beats
from fanns.index.ivfpq_synthetic import random_format, skewed_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.skew import place_lists
from fanns.reference.ivfpq_streams import DesignReference

NQ = 8


@pytest.mark.slow
def test_rtl_sim_prefetch_then_search_gives_the_reference_keys(tmp_path, build_root):
    data, queries = skewed_index()
    fmt = random_format(32, 8)
    shape = dict(nprobe=3, k=5, ivf=(2, 16, "bram"), lut=(3, 32, "bram"), pq=(4, 2))  # two PQ channels read host[0]
    base = pinned_design(data, fmt, **shape)
    port_bytes = base.stages.pq_dist.port_bits // 8
    beats = cache_list_beats(ivfpq_images.pack(base, data))
    cache = int(0.5 * beats.sum()) * port_bytes
    q = queries(2 * NQ, 2)
    ref = DesignReference(base, data)
    probed = ref.probe(ref.ref.rotate(ref.ref.quantize_queries(q)), 3)
    acc = np.where(beats > 0, np.bincount(probed.ravel(), minlength=data.nlist), 0)  # empty lists are never cached
    hot = place_lists(acc, beats, cache // port_bytes // 2 // 4)
    pinned = tuple(int(c) for c in np.nonzero(hot)[0])  # the hottest lists in a quarter of the cache
    design = pinned_design(data, fmt, **shape, host_cache_bytes=cache, host_pinned=pinned)
    project = generate_rtl(design, data, TestQueries(q[:NQ], np.zeros((NQ, 10), np.int64)), tmp_path / "p")
    want = DesignReference(design, data).search_keys(q)
    with fanns.driver.open(project.path, backend="rtl-sim", batch=NQ, build_dir=build_root / "rtl") as acc:
        assert np.array_equal(acc.search_keys(q[:NQ]), want[:NQ])  # cold
        cold = acc.stats()["host_tier"]  # only the pinned lists cached, placed after the load
        assert cold["cached_cells"] == cold["pinned_cells"] > 0 and cold["host_bytes"] > 0
        assert cold["pinned_lists"] == len(pinned) > 0 and cold["pinned_bytes"] > 0
        sent = acc.prefetch(q[: NQ // 2], budget_bytes=cache)  # the finals are their own drafts
        assert 0 < sent <= cache
        assert np.array_equal(acc.search_keys(q[:NQ]), want[:NQ])
        warm = acc.stats()["host_tier"]
        assert warm["cached_cells"] > 0 and warm["hbm_bytes"] > 0 and warm["prefetched_bytes"] == sent
        rng = np.random.default_rng(1)
        for step in range(4):  # later drafts: lists are evicted, cached ones moved, others copied
            acc.prefetch(q[rng.choice(2 * NQ, NQ // 2, replace=False)], budget_bytes=cache // 2 + step * cache // 4)
            assert np.array_equal(acc.search_keys(q), want)
        assert (acc.mirror.ops > 0).all() and set(pinned) <= set(acc.mirror.plan.table)
        assert acc.stats()["host_tier"]["cached_cells"] > warm["cached_cells"]
        assert acc.stats()["runs"] >= 3
