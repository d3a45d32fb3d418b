"""The host-memory-tier reference (issue 49, docs/host_tier.md): with any cache content (prefetches
of random drafts and cells under random budgets and capacities, a ring that wrapped) the search
returns the design reference's keys bit for bit, while its lists really are read from the cache
region where the table holds them and from the host image elsewhere (a corrupted byte shows);
pinned lists stay in the region's end whatever the prefetches."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq_host_tier import HostTierReference
from fanns.reference.ivfpq_streams import DesignReference

NPROBE, K = 4, 20


@pytest.fixture(scope="module")
def setting():
    data = random_index(nlist=12, n=900, d=32, m=8, empty=2)
    design = pinned_design(data, random_format(32, 8), nprobe=NPROBE, k=K)
    ref = DesignReference(design, data)
    queries = np.random.default_rng(1).standard_normal((40, 32)).astype(np.float32)
    q_host = ref.ref.quantize_queries(queries)
    return design, data, q_host, ref.search_keys_fx(q_host)


@pytest.mark.parametrize("seed", range(4))
def test_any_cache_content_gives_the_normal_search(setting, seed):
    design, data, q_host, want = setting
    rng = np.random.default_rng(seed)
    total = int(np.diff(data.offsets).sum()) * (data.m + 4)
    pinned = tuple(int(c) for c in rng.choice(data.nlist, seed, replace=False))  # seed 0: none
    need = int((np.diff(data.offsets)[list(pinned)] * (data.m + 4)).sum())
    tier = HostTierReference(design, data, capacity=need + int(rng.integers(0, total)), pinned=pinned)
    sent = 0
    for step in range(6):
        if step % 2:
            sent += tier.prefetch_fx(q_host[rng.choice(len(q_host), 3)], rng.integers(0, total), rng.integers(1, 13))
        else:
            sent += tier.lists.prefetch(rng.permutation(data.nlist), rng.integers(0, total))
        got = tier.search_keys_fx(q_host)
        assert np.array_equal(got, want)
        last = tier.last
        nbytes = tier.lists.list_bytes[last["cells"]]
        assert np.array_equal(last["hbm_bytes"] + last["host_bytes"], nbytes.sum(1))
        assert np.array_equal(last["hbm_bytes"], np.where(last["in_cache"], nbytes, 0).sum(1))
        pin = np.isin(last["cells"], list(tier.lists.cache.pinned))
        assert np.array_equal(last["pinned"], pin) and last["in_cache"][pin].all()  # never evicted
    ring = tier.lists.cache.ring
    assert sent > 0 and ring.head <= ring.capacity == min(tier.lists.cache.pinned.values(), default=ring.capacity)


def test_pinned_lists_are_read_from_the_cache_and_must_fit(setting):
    design, data, q_host, want = setting
    sizes = np.diff(data.offsets) * (data.m + 4)
    ref = DesignReference(design, data)
    probed = ref.probe(ref.ref.rotate(q_host), NPROBE)[0]
    first = int(np.nonzero(sizes[probed])[0][0])
    cell = int(probed[first])  # query 0's nearest non-empty cell
    tier = HostTierReference(design, data, capacity=int(sizes[cell]), pinned=(cell,))
    assert tier.lists.cache.ring.capacity == 0 and tier.lists.cache.pinned == {cell: 0}
    assert tier.prefetch_fx(q_host, 10**6, NPROBE) == 0  # a pinned-only cache: nothing to prefetch
    tier.lists.host[tier.lists.offsets[cell]] ^= 0xFF  # pinned: the host byte is not read
    assert np.array_equal(tier.search_keys_fx(q_host), want) and tier.last["pinned"][0, first]
    tier.lists.hbm[0] ^= 0xFF  # the pinned copy is
    assert not np.array_equal(tier.search_keys_fx(q_host), want)
    with pytest.raises(FannsError, match="pinned lists take"):
        HostTierReference(design, data, capacity=int(sizes[cell]) - 1, pinned=(cell,))


def test_lists_are_read_from_where_the_table_says(setting):
    design, data, q_host, want = setting
    tier = HostTierReference(design, data, capacity=10**6)
    tier.search_keys_fx(q_host)
    cell = int(tier.last["cells"][0, 0])
    assert tier.lists.sizes[cell] > 0
    assert not tier.lists.cache.holds(cell)
    tier.lists.host[tier.lists.offsets[cell]] ^= 0xFF  # a host byte of an uncached list: seen
    assert not np.array_equal(tier.search_keys_fx(q_host), want)
    tier.lists.host[tier.lists.offsets[cell]] ^= 0xFF
    assert tier.prefetch_fx(q_host[:1], 10**6, NPROBE) > 0 and tier.lists.cache.holds(cell)
    assert np.array_equal(tier.search_keys_fx(q_host), want)
    tier.lists.host[tier.lists.offsets[cell]] ^= 0xFF  # now cached: the host byte is not read
    assert np.array_equal(tier.search_keys_fx(q_host), want)
    tier.lists.hbm[tier.lists.cache.where(cell)] ^= 0xFF  # but the cached copy is
    assert not np.array_equal(tier.search_keys_fx(q_host), want)
