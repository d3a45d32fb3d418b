"""The driver's lookahead prefetch on the model backend (issue 49, docs/host_tier.md): `prefetch`
then `search` returns the normal search's results whatever was prefetched, the bytes come from the
cache for the drafts' cells and from host memory for the rest, and the other cases get clear errors."""

import numpy as np
import pytest

import fanns.driver
from fanns.driver.ivfpq.accelerator import keys_to_results
from fanns.errors import FannsError

QUERIES = 16


def test_prefetch_then_search_gives_the_reference_results(projects):
    q = projects.queries[:QUERIES]
    want = keys_to_results(projects.reference.search_keys(q), projects.design.format)
    with fanns.driver.open(projects.hls, backend="model", cache_bytes=4000) as acc:
        ids, dist = acc.search(q)  # cold: every list from host memory
        cold = acc.stats()["host_tier"]
        assert cold["hbm_bytes"] == 0 and cold["host_bytes"] > 0 and cold["cell_hit_rate"] == 0
        assert np.array_equal(ids, want[0]) and np.array_equal(dist, want[1])
        sent = acc.prefetch(q[:1], budget_bytes=4000)  # the final query is its own draft: its cells
        ids, dist = acc.search(q[:1])
        warm = acc.stats()["host_tier"]
        assert 0 < sent <= 4000 and warm["prefetched_bytes"] == sent and warm["hbm_bytes"] > 0
        assert np.array_equal(ids, want[0][:1]) and np.array_equal(dist, want[1][:1])
        for budget in (0, 500, 10**6):
            acc.prefetch(projects.queries[100:104], budget_bytes=budget, depth=2)
            ids, dist = acc.search(q)
            assert np.array_equal(ids, want[0]) and np.array_equal(dist, want[1])
        assert acc.stats()["host_tier"]["prefetched_bytes"] >= sent


def test_prefetch_errors(projects):
    with fanns.driver.open(projects.hls, backend="model") as acc:
        with pytest.raises(FannsError, match="cache_bytes"):
            acc.prefetch(projects.queries[:1], budget_bytes=100)
        assert "host_tier" not in acc.stats()
    with fanns.driver.open(projects.hls, backend="model", cache_bytes=100) as acc:
        with pytest.raises(FannsError, match="budget_bytes"):
            acc.prefetch(projects.queries[:1], budget_bytes=-1)
        with pytest.raises(FannsError, match="depth"):
            acc.prefetch(projects.queries[:1], budget_bytes=1, depth=10**6)
    with pytest.raises(FannsError, match="cache_bytes"):
        fanns.driver.open(projects.hls, backend="model", cache_bytes=-5)
    with pytest.raises(FannsError, match="c-sim backend takes no option cache_bytes"):
        fanns.driver.open(projects.hls, backend="c-sim", cache_bytes=100)
