"""The lookahead-prefetch model (issue 49, docs/host_tier.md): hit rates against brute-force
counting on a small index, the ring cache against a byte-ownership simulation, and the latency
model's consistency (all cached = the untiered design; nothing cached = every byte over the link)."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import prefetch, prefetch_model
from fanns.model.ivfpq import skew as skew_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.stage_pes import design_context
from fanns.model.ivfpq.workload import synthetic_workload


def small_case(seed: int = 0, nq: int = 60, nlist: int = 40, nprobe: int = 6):
    """Draft orders (each query's cells ranked, as an IVF stage ranks them: a noisy copy of the
    final's ranking) and the final's probed cells, over skewed list sizes (some empty)."""
    rng = np.random.default_rng(seed)
    sizes = (rng.pareto(1.1, nlist) * 300).astype(np.int64)
    sizes[rng.choice(nlist, 3, replace=False)] = 0
    score = rng.standard_normal((nq, nlist))
    final = np.argsort(score, axis=1)[:, :nprobe]
    draft = np.argsort(score + 0.7 * rng.standard_normal((nq, nlist)), axis=1)
    return draft, final, sizes


def brute_cold(draft, final, sizes, budget):
    cells, nbytes, sent = [], [], []
    for d, f in zip(draft, final):
        held, total = set(), 0
        for c in d:
            if total + sizes[c] > budget:
                break
            total += sizes[c]
            held.add(int(c))
        hit = [int(c) in held and sizes[c] > 0 for c in f]
        cells.append(np.mean(hit))
        fb = sizes[f]
        nbytes.append(sum(b for b, h in zip(fb, hit) if h) / max(fb.sum(), 1))
        sent.append(total)
    return np.array(cells), np.array(nbytes), np.array(sent)


def test_cold_hit_rates_equal_brute_force_counting():
    draft, final, sizes = small_case()
    budgets = [0, 100, 1000, 3000, 10_000, int(sizes.sum())]
    got = prefetch.cold_hits(draft, final, sizes, budgets)
    for i, b in enumerate(budgets):
        cells, nbytes, sent = brute_cold(draft, final, sizes, b)
        assert np.allclose(got["cells"][i], cells) and np.allclose(got["bytes"][i], nbytes)
        assert np.array_equal(got["transferred"][i], sent)
    mean = got["cells"].mean(1)
    assert mean[0] == 0 and np.all(np.diff(mean) >= 0) and mean[-1] == pytest.approx((sizes[final] > 0).mean())


def brute_ring(draft, final, sizes, budget, capacity):
    """The ring by byte ownership: a list is cached while every byte it was last written to still
    belongs to it; a wrap abandons the region's tail."""
    owner = np.full(capacity, -1)
    where: dict[int, int] = {}
    head = 0

    def held(c):
        return c in where and sizes[c] > 0 and np.all(owner[where[c] : where[c] + sizes[c]] == c)

    out = []
    for d, f in zip(draft, final):
        sent = total = used = 0
        for c in map(int, d):
            cached = held(c)
            waste = capacity - head if head + sizes[c] > capacity else 0
            if total + sizes[c] > budget or used + waste + sizes[c] > capacity:
                break
            total += sizes[c]
            if sizes[c]:  # a cached list of the set is moved to the write pointer (refreshed)
                used += waste + sizes[c]
                sent += 0 if cached else sizes[c]
                if waste:
                    owner[head:] = -1
                    head = 0
                owner[head : head + sizes[c]] = c
                where[c] = head
                head += sizes[c]
        out.append(([held(int(c)) for c in f], sent))
    return out


@pytest.mark.parametrize("budget,capacity", [(2000, 2000), (2000, 7000), (5000, 9000), (5000, 40_000)])
def test_ring_cache_equals_byte_ownership(budget, capacity):
    draft, final, sizes = small_case(1)
    got = prefetch.ring_hits(draft, final, sizes, budget, capacity)
    want = brute_ring(draft, final, sizes, budget, capacity)
    assert np.allclose(got["cells"], [np.mean(h) for h, _ in want])
    assert np.array_equal(got["transferred"], [s for _, s in want])
    assert (got["transferred"] <= budget).all()


def test_a_shared_cache_transfers_less_for_consecutive_similar_queries():
    draft, final, sizes = small_case(2)
    draft[1::2], final[1::2] = draft[::2], final[::2]  # every query asked twice in a row
    ring = prefetch.ring_hits(draft, final, sizes, 3000, 30_000)
    cold = prefetch.cold_hits(draft, final, sizes, [3000])
    # a repeat finds its set cached: nothing crosses the link; a shared ring never hits less
    assert ring["transferred"][1::2].sum() == 0 and ring["transferred"][::2].sum() > 0
    assert np.all(ring["cells"] >= cold["cells"][0]) and ring["cells"].mean() > cold["cells"][0].mean()
    assert prefetch.interleave(np.array([[3, 1, -1], [1, 2, 4]])).tolist() == [3, 1, 2, 4]


@pytest.fixture(scope="module")
def design_setting():
    data = random_index(nlist=12, n=900, d=32, m=8, empty=2)
    design = pinned_design(data, random_format(32, 8), nprobe=3, k=20)
    u55c = load_board("u55c")
    # a 2 GB/s link: at 140 MHz the PQ channels' own host ports feed this design's PEs as fast as
    # its HBM channels do, so only a slower link tells the host tier from HBM
    board = dataclasses.replace(u55c, host=dataclasses.replace(u55c.host, bandwidth_gbps=2.0))
    ctx = design_context(design, board)
    rng = np.random.default_rng(3)
    sizes = np.diff(data.offsets) * 100  # the model only: lists long enough for the link to bind
    cells = np.stack([rng.choice(12, 3, replace=False) for _ in range(50)])
    return board, ctx, design.stages, cells, stage_model.Probes.of(sizes[cells]), sizes


def test_host_times_cached_equals_the_untiered_design_and_misses_cost_the_link(design_setting):
    board, ctx, stages, cells, probes, sizes = design_setting
    st = stages.pq_dist
    fast = skew_model.memory_tier(board, st.memory, ctx.clock_mhz, st.pes, st.channels, st.port_bits)
    slow = skew_model.host_tier(board, ctx.clock_mhz, st.pes, st.channels, st.port_bits)
    link = prefetch.host_link(board, ctx.clock_mhz, st.channels, st.port_bits)
    ports = st.channels * st.port_bits / 8 * ctx.clock_mhz * 1e6  # every PQ channel's own host port
    assert link.bandwidth_bps == min(2e9, ports)  # the link or the ports together
    u55c = prefetch.host_link(load_board("u55c"), ctx.clock_mhz, st.channels, st.port_bits).bandwidth_bps
    assert u55c == min(12e9, ports)
    nbytes = sizes * 12
    zero = np.zeros(cells.shape[0])

    def times(cached: bool, sent: np.ndarray, t_llm: float) -> dict:
        mask = np.full(cells.shape, cached)
        return prefetch.search_figures(
            prefetch.host_times(ctx, stages, probes, cells, mask, nbytes, sent, fast, slow, link, t_llm)
        )

    hot = times(True, zero, 0)
    untiered = latency_model.query_times(ctx, stages, probes)
    assert hot["search_mean_us"] == pytest.approx(float(untiered.alone().mean()) / ctx.clock_mhz, abs=1e-3)
    cold = times(False, zero, 0)
    assert cold["search_mean_us"] > hot["search_mean_us"] and cold["wait_mean_us"] == 0
    assert cold["qps"] <= link.bandwidth_bps / nbytes[cells].sum(1).mean() * (1 + 1e-6)
    sent = np.full(cells.shape[0], link.bandwidth_bps * 1e-4)  # 100 us of link: hidden by 200 us of LLM, not by 50
    t, late = times(True, sent, 2e-4), times(True, sent, 5e-5)
    assert t["wait_mean_us"] == 0 and late["wait_mean_us"] == pytest.approx(100 + 1 - 50, abs=1e-6)
    assert prefetch.budget_for(link, 1e-3, 10**9) == pytest.approx(link.bandwidth_bps * 1e-3)
    assert prefetch.budget_for(link, 1.0, 5) == 5


def test_choose_cache_takes_the_smallest_within_slack():
    rows = [{"cache_bytes": c, "latency_mean_us": v} for c, v in [(1, 50.0), (2, 30.0), (4, 20.1), (8, 20.0)]]
    assert prefetch_model.choose_cache(rows)["cache_bytes"] == 4
    assert prefetch_model.choose_cache(rows, slack=0)["cache_bytes"] == 8


def test_hit_profile_interpolates_the_measured_per_rank_hits():
    draft, final, sizes = small_case(4)
    ratios = [0.5, 1.0, 2.0]
    prof = prefetch_model.hit_profile(draft, final, sizes, ratios)
    probed = sizes[final].sum(1).mean()
    cold = prefetch.cold_hits(draft, final, sizes, np.array(ratios) * probed)
    assert np.allclose(prof.per_rank.mean(1), cold["cells"].mean(1))
    assert np.array_equal(prof.rates(0.0, final.shape[1]), np.zeros(final.shape[1]))
    assert np.allclose(prof.rates(1.0, final.shape[1]), prof.per_rank[1])
    wide = prof.rates(9.0, 2 * final.shape[1])  # beyond the last ratio, twice the ranks: interpolated by position
    assert wide[0] == prof.per_rank[2, 0] and wide[-1] == prof.per_rank[2, -1]
    assert prof.per_rank[2].min() <= wide.min() and wide.max() <= prof.per_rank[2].max()


def test_the_design_point_model(design_setting):
    board, ctx, stages = design_setting[:3]
    # the small pinned design with lists 100x as long (the model only), as a DSE point
    w = synthetic_workload(90_000, 32, 8, 12, 3, 20, False, queries=50, imbalance=3.0, seed=1)
    point = SimpleNamespace(workload=w, ctx=ctx, stages=stages)
    always = prefetch_model.HitProfile(np.array([1.0]), np.ones((1, w.nprobe)))
    model = prefetch_model.PrefetchModel(point, board, always)
    none, every = model.baseline(False), model.baseline(True)
    assert np.array_equal(model.probe_bytes, model.list_bytes[w.cells].ravel())  # per probe, from the probed sizes
    no_ids = SimpleNamespace(workload=dataclasses.replace(w, cells=None), ctx=ctx, stages=stages)
    blind = prefetch_model.PrefetchModel(no_ids, board, always)  # a workload without cell ids (the sweep's grid)
    assert blind.baseline(False) == none and blind.at(model.probed, 1e-3) == model.at(model.probed, 1e-3)
    assert model.at(0, 0.0)["latency_mean_us"] == none["latency_mean_us"] > every["latency_mean_us"]
    b = 2 * model.probed
    hidden = model.at(b, b / model.link.bandwidth_bps)
    assert hidden["cell_hit"] == 1 and hidden["latency_mean_us"] == pytest.approx(
        every["latency_mean_us"] + 1.0, abs=1e-3
    )
    assert hidden["qps"] <= model.link.bandwidth_bps / b + 0.05  # QPS is rounded to 0.1
    foot = model.probe_footprint  # [nq, nprobe] bytes of each probed list in the cache
    assert np.array_equal(foot, model.footprint[w.cells])
    sure = prefetch_model.PrefetchModel(point, board, prefetch_model.HitProfile(np.array([1e-12]), np.ones((1, 3))))
    for b in (foot.min() - 1, np.median(foot)):  # a prefetch copies whole lists: larger ones never hit
        assert sure.at(b, 1.0)["cell_hit"] == round(float((foot <= b).mean()), 4) < 1
    curve = model.cache_curve(0.1, (0.5, 1.0, 4.0))
    assert [r["cache_bytes"] for r in curve["curve"]] == [int(c * model.probed) for c in (0.5, 1.0, 4.0)]
    assert curve["chosen_bytes"] == prefetch_model.choose_cache(curve["curve"])["cache_bytes"] == int(model.probed)


def test_pinned_lists_are_hits_whatever_the_prefetch(design_setting):
    """A pinned-only cache (no budget) gives exactly the pinned lists' share of the probes as hits;
    pinning takes the hottest lists by the sample's accesses, within whole beats of the region; the
    split compares shares by latency and the ring keeps the rest of the cache."""
    board, ctx, stages = design_setting[:3]
    w = synthetic_workload(90_000, 32, 8, 12, 3, 20, False, queries=50, imbalance=3.0, seed=1)
    point = SimpleNamespace(workload=w, ctx=ctx, stages=stages)
    model = prefetch_model.PrefetchModel(
        point, board, prefetch_model.HitProfile(np.array([1.0]), np.ones((1, w.nprobe)))
    )
    st = stages.pq_dist
    assert np.array_equal(model.footprint, skew_model.list_bytes(w, st) * max(st.pes_per_channel()) * st.channels)
    half = model.pinned_lists(model.footprint.sum() / 2)
    acc = skew_model.accesses(w)
    assert 0 < half.sum() < w.nlist and model.footprint[half].sum() <= model.footprint.sum() / 2
    assert acc[half].min() >= acc[~half & (model.footprint <= model.footprint[half].min())].max(initial=0)
    for pinned in (half, np.zeros(w.nlist, bool), model.footprint > 0):
        got = model.at(0, 0.0, pinned)
        assert got["cell_hit"] == got["pinned_hit"] == round(float(pinned[w.cells].mean()), 4)
    assert model.at(0, 0.0, half)["latency_mean_us"] < model.at(0, 0.0)["latency_mean_us"]
    assert model.at(0, 0.0, model.footprint > 0)["latency_mean_us"] == model.baseline(True)["latency_mean_us"]
    every = model.at(2 * model.probed, 1.0, half)  # a budget that caches every probe: pinning adds nothing
    assert every["cell_hit"] == 1 and every["latency_mean_us"] == model.at(2 * model.probed, 1.0)["latency_mean_us"]
    cache = int(model.probed)
    split = model.split(cache, 0.5, 0.0)
    assert split["pinned_lists"] == int(model.pinned_lists(cache / 2).sum()) > 0
    assert split["ring_bytes"] == cache - split["pinned_bytes"] and split["budget_bytes"] == 0
    probes = model.pinned_probes(cache / 2)  # out of sample: each half against the other half's lists
    odd = np.arange(w.queries) % 2 == 1
    assert np.array_equal(probes[~odd], model.pinned_lists(cache / 2, odd)[w.cells[~odd]])
    assert split["pinned_hit"] == round(float(probes.mean()), 4)
    curve = model.cache_curve(0.0, (1.0, 2.0), shares=(0.0, 0.5))
    assert len(curve["splits"]) == 4
    for row in curve["curve"]:  # per size the split of the lowest latency: with no LLM time, pinning wins
        options = [r for r in curve["splits"] if r["cache_bytes"] == row["cache_bytes"]]
        assert row == min(options, key=lambda r: r["latency_mean_us"]) and row["pinned_share"] == 0.5
    no_ids = prefetch_model.PrefetchModel(
        SimpleNamespace(workload=dataclasses.replace(w, cells=None), ctx=ctx, stages=stages), board, model.profile
    )
    assert not no_ids.profiled and not no_ids.pinned_lists(cache).any()  # no access profile: nothing pinned
