"""The DSE's host-memory tier (docs/host_tier.md): an index larger than the board's memory gets a
design with its lists in host memory and an HBM cache sized for the LLM's time."""

import argparse
import copy
import dataclasses
from types import SimpleNamespace

import pytest

from fanns.boards import BUFFER_PAGE, load_board
from fanns.checks import arg_llm_ms, check_llm_ms
from fanns.errors import FannsError
from fanns.model.ivfpq import dse, host_cache, host_mix, prefetch_model, skew
from fanns.model.ivfpq.points import Slo, annotate_latency
from fanns.model.ivfpq.report import outcome_record, to_design
from fanns.model.ivfpq.workload import synthetic_workload

GB = 1 << 30


@pytest.fixture(scope="module")
def small():
    """A U55C whose HBM holds 32 x 1 MB, and a 40 MB index (2M vectors, PQ16 and ids)."""
    u55c = load_board("u55c")
    board = dataclasses.replace(u55c, memory=(dataclasses.replace(u55c.memory[0], capacity_gb=1 / 1024),))
    w = synthetic_workload(2 * 10**6, 128, 16, 256, 4, 10, False, queries=30, imbalance=1.5, seed=1)
    return board, w


@pytest.fixture(scope="module")
def outcome(small):
    board, w = small
    return dse.run([w], board, "R@10=0.8", 140.0, 0.6, top=1, padding=False, llm_ms=0.1)


def test_an_index_larger_than_the_board_keeps_its_lists_in_host_memory(small, outcome):
    board, w = small
    assert host_cache.index_bytes(w) > host_cache.board_bytes(board) and host_cache.host_mode(w, board)
    assert outcome.best is not None and outcome.board is board
    assert set(outcome.kind_best) == {"host"} and outcome.best.host_tier is outcome.host_tier
    assert "no index that reaches R@10=0.8 fits the board's memory" in host_mix.why_text(outcome)
    c = outcome.host_tier
    st = outcome.best.stages.pq_dist
    assert c["cache_memory"] == "hbm" and 0 < c["cache_bytes"] <= st.channels * 2**20
    assert c["cache_bytes"] == prefetch_model.choose_cache(c["curve"])["cache_bytes"]
    assert c["budget_bytes"] == min(int(c["link_gbps"] * 1e9 * 1e-4), c["ring_bytes"])  # B x t_LLM, capped
    ports = st.channels * st.port_bits / 8 * 0.14  # GB/s of every PQ channel's own host port at 140 MHz
    assert c["link_gbps"] == round(min(12.0, ports), 3)  # under the 12 GB/s link, or the link
    assert 0 < c["cell_hit"] < 1 and c["llm_ms"] == 0.1
    w_, wo, hbm = c["with_prefetch"], c["without_prefetch"], c["all_in_memory"]
    assert hbm["latency_mean_us"] < w_["latency_mean_us"] < wo["latency_mean_us"]
    assert w_["link_bound"]  # prefetches and misses share the link: prefetch hides latency, not bandwidth
    assert "HBM cache" in host_cache.summary_line(c) and "without" in host_cache.summary_line(c)
    curve = c["budget_curve"]  # the sweep report's curve: budgets within the cache, t_LLM hiding each
    assert curve[0]["budget_bytes"] == 0 and curve[0]["cell_hit"] == c["pinned_hit"]  # the pinned lists alone
    assert all(r["budget_bytes"] <= st.channels * 2**20 for r in curve) and len(curve) > 2
    hits = [r["cell_hit"] for r in curve]
    assert hits == sorted(hits) and hits[-1] > hits[1]
    b = c["link_gbps"] * 1e9
    assert [r["t_llm_ms"] for r in curve] == pytest.approx([r["budget_bytes"] / b * 1e3 for r in curve], abs=1e-4)


def test_the_largest_cache_leaves_the_page_the_driver_keeps(small, outcome):
    """The whole-capacity cache the DSE may choose still loads: each channel's region fits after the
    bank's first page, which the driver's allocator leaves unused (a design fuzz draw once chose a
    region of 72,576 bytes for a 73,728-byte channel and the driver refused it)."""
    board, _ = small
    st = outcome.best.stages.pq_dist
    model = prefetch_model.PrefetchModel(outcome.best, board, host_cache.text_profile())
    assert model.cache_max == st.channels * (board.memory[0].capacity_bytes - BUFFER_PAGE)
    assert max(r["cache_bytes"] for r in outcome.host_tier["curve"]) <= model.cache_max


@pytest.mark.slow
def test_the_stages_are_those_of_a_board_that_holds_the_index(small, outcome):
    board, w = small
    roomy = host_cache.compute_board(board, [w])
    assert roomy.memory[0].capacity_bytes >= 2 * host_cache.index_bytes(w) and roomy.host == board.host
    fits = dse.run([w], roomy, "R@10=0.8", 140.0, 0.6, top=1, padding=False)
    assert fits.host_tier is None and repr(fits.best.stages) == repr(outcome.best.stages)


def test_no_llm_time_no_hidden_prefetch(outcome, small):
    """Without LLM time no prefetch is hidden: only pinned lists hit; without an access profile
    nothing is pinned, every cache size is alike and the smallest is chosen."""
    board, w = small
    c = host_cache.choice(outcome.best, board, 0.0)
    assert c["budget_bytes"] == 0 and c["cell_hit"] == c["pinned_hit"] > 0 and c["pinned_share"] > 0
    assert c["with_prefetch"]["latency_mean_us"] < c["without_prefetch"]["latency_mean_us"]
    blind = SimpleNamespace(
        workload=dataclasses.replace(w, cells=None), stages=outcome.best.stages, ctx=outcome.best.ctx
    )
    c = host_cache.choice(blind, board, 0.0)
    assert c["budget_bytes"] == 0 and c["cell_hit"] == 0 and c["pinned"] == [] and c["pinned_rule"].startswith("none")
    assert c["cache_bytes"] == min(r["cache_bytes"] for r in c["curve"])  # every size alike: the smallest
    assert c["with_prefetch"]["latency_mean_us"] == c["without_prefetch"]["latency_mean_us"]
    assert "nothing pinned: no access profile" in host_cache.summary_line(c)
    assert host_cache.choice(outcome.best, board, 5.0)["cell_hit"] > outcome.host_tier["cell_hit"]


def test_the_dse_splits_the_cache_by_latency(outcome, small):
    """Per cache size the split (pinned share) of the lowest modelled latency; the choice records the
    pinned lists (hottest first by the sample's accesses) and design.yaml carries them."""
    c = outcome.host_tier
    assert {r["pinned_share"] for r in c["splits"]} == set(host_cache.PINNED_SHARES)
    for row in c["curve"]:
        options = [r for r in c["splits"] if r["cache_bytes"] == row["cache_bytes"]]
        assert len(options) == len(host_cache.PINNED_SHARES)
        assert row == min(options, key=lambda r: r["latency_mean_us"])
    chosen = next(r for r in c["curve"] if r["cache_bytes"] == c["cache_bytes"])
    assert c["pinned_share"] == chosen["pinned_share"] and len(c["pinned"]) == chosen["pinned_lists"]
    assert c["pinned_bytes"] + c["ring_bytes"] == c["cache_bytes"] and c["pinned_hit"] == chosen["pinned_hit"]
    acc = skew.accesses(small[1])
    if c["pinned"]:
        assert acc[c["pinned"]].min() > 0 and f"{len(c['pinned'])} hottest lists pinned" in host_cache.summary_line(c)
    design = to_design(outcome.best, outcome, None)
    assert design.stages.pq_dist.host_tier.pinned == tuple(c["pinned"])
    assert design.prediction["host_tier"]["pinned_share"] == c["pinned_share"]


def test_a_host_design_promises_its_latency_with_prefetch(small, outcome):
    """What the DSE prints, records and checks an SLO against for a design whose lists are in host
    memory is its latency with the cache it chose, once the LLM ends (`host_cache.annotate`), not the
    latency its stages would have with the lists in HBM (`annotate_latency`), which it cannot reach."""
    board, w = small
    best = outcome.best
    alone, c = best.latency["alone"], best.host_tier
    assert alone.mean_us == pytest.approx(c["with_prefetch"]["latency_mean_us"], abs=1e-3)
    assert alone.get(99) == pytest.approx(c["with_prefetch"]["latency_p99_us"], abs=1e-3)
    in_hbm = annotate_latency(copy.copy(best), None).latency["alone"]
    assert in_hbm.mean_us == pytest.approx(c["all_in_memory"]["latency_mean_us"], abs=1e-3)
    assert alone.get(99) > 1.2 * in_hbm.get(99)  # the link: misses and the prefetch's wait
    extra = c["with_prefetch"]["latency_mean_us"] - c["all_in_memory"]["latency_mean_us"]
    assert best.latency_us == pytest.approx(best.latency_cycles / best.clock_mhz + extra) and extra > 0
    rec = outcome_record(outcome)["best"]
    assert rec["latency_us"] == pytest.approx(best.latency_us, abs=1e-3)  # the sweep report's latency column
    assert rec["latency"]["alone"]["p99_us"] == pytest.approx(alone.get(99), abs=1e-3)
    pred = to_design(best, outcome, None).prediction
    assert pred["qps"] == pytest.approx(best.rank_qps, abs=0.1) and pred["qps_lists_in_hbm"] > pred["qps"]
    assert pred["latency_us"] == pytest.approx(best.latency_us, abs=1e-3)


@pytest.mark.slow
def test_an_slo_is_checked_against_the_latency_with_prefetch(small, outcome):
    """An SLO the design would meet with its lists in HBM but misses with them in host memory
    rejects it; a load its link cannot carry (yet below its in-HBM QPS) is unstable."""
    board, w = small
    best = outcome.best
    alone = best.latency["alone"]
    in_hbm = annotate_latency(copy.copy(best), None).latency["alone"]

    def run(slo):
        return dse.run([w], board, "R@10=0.8", 140.0, 0.6, top=1, padding=False, llm_ms=0.1, slo=slo)

    between = (in_hbm.get(99) + alone.get(99)) / 2  # met by the in-HBM figure, not by the design
    missed = run(Slo(99, between))
    assert missed.best is None and missed.slo_rejected >= 1
    assert any(f"P99 <= {between:,.1f} us" in line for line in missed.explain)
    met = run(Slo(99, alone.get(99) * 1.01))
    assert met.best is not None and met.best.latency["alone"].get(99) <= alone.get(99) * 1.01
    overload = run(Slo(99, 1e6, load_qps=2 * best.rank_qps))  # under the in-HBM QPS: the link cannot carry it
    assert 2 * best.rank_qps < best.qps and overload.best is None
    loaded = run(Slo(99, 1e6, load_qps=best.rank_qps / 2)).best
    assert loaded.latency["load"].stable and loaded.latency["load"].get(99) >= alone.get(50)


def test_an_index_that_fits_or_a_board_without_a_host_link_is_not_host_mode(small):
    board, w = small
    u55c = load_board("u55c")
    assert not host_cache.host_mode(w, u55c) and host_cache.fits(w, u55c)
    assert not host_cache.host_mode(w, dataclasses.replace(board, host=None)) and not host_cache.fits(w, board)


def test_llm_ms_is_checked_where_it_enters():
    assert arg_llm_ms("0") == 0.0 and arg_llm_ms("250") == 250.0 and check_llm_ms(3) == 3.0
    for bad in ("-1", "abc", "1e9", "nan"):
        with pytest.raises(argparse.ArgumentTypeError, match="a time in ms"):
            arg_llm_ms(bad)
    with pytest.raises(FannsError, match="must be at least 0"):
        check_llm_ms(-2.0, "the LLM time (ms)")
