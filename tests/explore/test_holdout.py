"""The recall promise: the query split, the lower confidence bound, the queries a goal needs, the
reasons a goal is not promised, how often the promise fails over many query samples, and that
it holds for indexes retrained with other seeds."""

import numpy as np
import pytest
from scipy.stats import binom

from fanns.datasets import load_dataset
from fanns.errors import FannsError
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer, train_size_for
from fanns.explore.ivfpq_promise import hardware_promises
from fanns.explore.ivfpq_record import SWEEP_FACTOR, SWEEP_MIN, goal_promises, split_curves, sweep_done
from fanns.index.goals import parse_goal
from fanns.index.holdout import (
    HOLDOUT_FRACTION,
    PROMISE_LEVEL,
    PROMISE_Z,
    TRAINING_SD,
    SplitCurves,
    bootstrap_interval,
    choose_nprobe,
    lower_bound,
    promise,
    queries_needed,
    split_queries,
    unpromised_text,
    widened,
)
from fanns.index.ivfpq import host_vectors, train_index
from fanns.index.ivfpq_recall import recall_hits

MEASURES = [(1, 1), (10, 1), (10, 10)]
"""R@1 and 1-R@10 (a 0/1 recall per query), R@10 (tenths)."""
DRAWS = 1000
SIZES = (10, 20, 50, 100, 200)
"""Query samples drawn per cell and their sizes (selection and held-out halves together)."""
FALSE_ALARM = 1e-3
"""Chance that the failure-rate check rejects a rule that keeps the promise (Bonferroni over cells)."""


def test_split_is_deterministic_disjoint_and_whole():
    sel, held = split_queries(200, seed=0)
    again_sel, again_held = split_queries(200, seed=0)
    assert np.array_equal(sel, again_sel) and np.array_equal(held, again_held)
    assert np.intersect1d(sel, held).size == 0
    assert np.array_equal(np.sort(np.concatenate([sel, held])), np.arange(200))
    assert held.size == 100 and np.all(np.diff(sel) > 0) and np.all(np.diff(held) > 0)
    other_sel, _ = split_queries(200, seed=1)
    assert not np.array_equal(sel, other_sel)  # the seed moves the split
    # every part gets a query, however small the sample
    for nq in (2, 3, 5):
        s, h = split_queries(nq, seed=0)
        assert s.size >= 1 and h.size >= 1 and s.size + h.size == nq
    with pytest.raises(FannsError, match="at least 2"):
        split_queries(1, seed=0)


def test_bound_is_agresti_coull_on_hits_and_adds_the_training_spread():
    rng = np.random.default_rng(3)
    for n, p in ((10, 0.9), (50, 0.8), (400, 0.3)):
        x = (rng.random(n) < p).astype(float)
        # 0/1 recalls: Agresti-Coull's centre and spread (z^2 pseudo-queries, half of them hits)
        nt = n + PROMISE_Z**2
        pt = (x.sum() + PROMISE_Z**2 / 2) / nt
        expect = pt - PROMISE_Z * np.sqrt(pt * (1 - pt) / (nt - 1))
        assert lower_bound(x.mean(), x.std(ddof=1), n, training_sd=0) == pytest.approx(expect)
    # ten queries that all hit are no proof of recall 1 (a plain mean - z se would say 1.0)
    assert lower_bound(1.0, 0.0, 10, training_sd=0) < 0.75
    # on a huge sample only the training spread is left, z of it below the mean
    assert lower_bound(0.9, 0.3, 10**9) == pytest.approx(0.9 - PROMISE_Z * TRAINING_SD, abs=1e-4)
    # the training spread adds in quadrature: never less than the larger of the two alone
    se_only, both = lower_bound(0.8, 0.4, 50, training_sd=0), lower_bound(0.8, 0.4, 50)
    assert both < se_only and 0.8 - both < (0.8 - se_only) + PROMISE_Z * TRAINING_SD


def test_queries_needed_is_the_smallest_sample_the_bound_passes_at():
    for mean, sd, goal in ((0.9, 0.3, 0.8), (0.62, 0.15, 0.55), (0.85, 0.36, 0.8)):
        n = queries_needed(mean, sd, goal)
        sel = int(n * (1 - HOLDOUT_FRACTION))
        assert lower_bound(mean, sd, sel) >= goal > lower_bound(mean, sd, sel - 1)
    # the training spread alone is wider than the distance to the goal: no sample would tell
    assert queries_needed(0.82, 0.3, 0.8) is None
    assert queries_needed(0.82, 0.3, 0.8, training_sd=0) is not None


def _curves(sel, held, n=50, sd=0.3):
    sel, held = np.asarray(sel, float), np.asarray(held, float)
    pooled = (sel + held) / 2
    return SplitCurves(sel, np.full(sel.size, sd), held, pooled, np.full(sel.size, sd), n, n)


def test_promise_raises_nprobe_until_the_held_out_queries_agree_and_says_why_not():
    # the selection bound passes from nprobe 3 on; the held-out queries reach the goal only at 4
    c = _curves([0.6, 0.8, 0.95, 0.97, 0.98], [0.6, 0.8, 0.78, 0.85, 0.9])
    pr = promise(c, 0.8)
    assert (pr.selected, pr.nprobe, pr.reason) == (3, 4, None)
    # below the goal at every nprobe
    pr = promise(_curves([0.5, 0.6, 0.62], [0.5, 0.58, 0.6]), 0.8)
    assert (pr.nprobe, pr.reason, pr.at) == (None, "below", 3)
    # at the goal but within the training spread: no sample size would help
    pr = promise(_curves([0.7, 0.81, 0.81], [0.7, 0.81, 0.81]), 0.8)
    assert (pr.nprobe, pr.reason, pr.queries_needed) == (None, "training", None)
    # reached on the sample, but 100 queries cannot tell: more would
    c = _curves([0.6, 0.86, 0.87], [0.6, 0.86, 0.87])
    pr = promise(c, 0.8)
    assert pr.nprobe is None and pr.reason == "queries" and pr.queries_needed > 100
    # planned from the sample widened as the bound widens it (Agresti-Coull's pseudo-queries)
    means, sds, _ = widened(np.array([0.86, 0.87]), 0.3, 100)
    assert pr.queries_needed == min(queries_needed(m, s, 0.8) for m, s in zip(means, sds))
    # twenty queries that all hit: the widened sample asks for more than the plain one would
    pr = promise(_curves([1.0, 1.0], [1.0, 1.0], n=10, sd=0.0), 0.8)
    assert pr.reason == "queries" and pr.queries_needed > queries_needed(1.0, 0.0, 0.8) > 20
    entry = {"best_recall": 0.87, "best_nprobe": 3, **pr.record(c)}
    text = unpromised_text(entry, "1-R@10=0.8")
    assert "too small to tell" in text and f"about {pr.queries_needed:,} queries" in text
    # the selection bound passes, the held-out half never agrees
    pr = promise(_curves([0.6, 0.97, 0.98], [0.6, 0.7, 0.75]), 0.8)
    assert (pr.nprobe, pr.reason, pr.selected, pr.at) == (None, "held-out", 2, 3)


def test_the_sweep_ends_where_the_promise_says():
    """`sweep_done` keeps its curves step by step; at every nprobe its answer is the one the
    curves up to there give (every goal promised, and past SWEEP_FACTOR times the largest nprobe)."""
    rng = np.random.default_rng(5)
    hits = {(10, 10): np.minimum(10, np.cumsum(rng.binomial(1, 0.02, (60, 100, 10)).sum(2), axis=1))}
    sel, held = split_queries(60, seed=0)
    goals = [parse_goal("R@10=0.3"), parse_goal("R@10=0.4")]
    done = sweep_done(goals, sel, held, TRAINING_SD, 100)
    answers, needs = [], []
    for p in range(1, 101):
        promised = goal_promises(goals, split_curves({ms: h[:, :p] for ms, h in hits.items()}, sel, held), TRAINING_SD)
        need = [pr.nprobe for pr in promised.values()]
        needs.append(need)
        end = None if None in need else min(100, max(SWEEP_MIN, SWEEP_FACTOR * max(need)))
        answers.append(done(p, hits) == (end is not None and p >= end))
    assert all(answers)
    assert SWEEP_MIN < end < 100  # the end is set by the goals, not by SWEEP_MIN or nlist


class _Reference:
    """A stand-in for the reference model: query q finds its neighbour (id q) at nprobe p when
    `found[q, p - 1]`."""

    def __init__(self, found: np.ndarray):
        self.found = found

    def search(self, queries, nprobe: int, k: int):
        ids = np.where(self.found[:, nprobe - 1], np.arange(len(self.found)), -1)[:, None]
        return np.zeros_like(ids), np.repeat(ids, k, axis=1)


def test_the_hardware_faithful_recall_raises_nprobe_or_says_why_not():
    """faiss's curves promise nprobe 2 (every query hits from there); the fixed-point search finds
    half of the held-out queries' neighbours at 2 and all from 3: nprobe 3 is promised, raised
    from 2. Where the hardware never catches up, the goal is not promised, for that reason."""
    nq = 40
    sel, held = split_queries(nq, seed=0)
    faiss_hits = np.zeros((nq, 6), dtype=np.uint16)
    faiss_hits[:, 1:] = 1
    goal = parse_goal("R@1=0.6")
    curves = split_curves({goal.measure: faiss_hits}, sel, held)
    promises = goal_promises([goal], curves, TRAINING_SD)
    assert promises[goal].nprobe == 2
    found = faiss_hits.astype(bool)
    found[held[::2], 1] = False  # half the held-out queries miss at nprobe 2 in fixed point
    for late, expect in ((found, 3), (found & False, None)):
        hw = hardware_promises(
            [goal],
            TRAINING_SD,
            promises,
            curves,
            lambda p, f=late: _Reference(f),
            np.zeros((nq, 4)),
            np.arange(nq)[:, None],
            held,
        )
        entry = hw.entry(goal, promises[goal], curves[goal.measure], faiss_hits, TRAINING_SD, 0)
        assert hw.nprobe[goal] == expect, entry
        if expect:
            assert entry["raised_from"] == {"nprobe": 2, "recall": 1.0, "hw_recall": 0.5}
            assert entry["hw_recall"] == entry["all_queries_hw_recall"] == 1.0
        else:
            assert entry["reason"] == "hardware" and not entry["reached"]
            assert "hardware-faithful recall stays below" in unpromised_text(entry, goal.text)


@pytest.fixture(scope="module")
def population():
    """Per-query recall of every sift-10k query at nprobe 1..32 of one trained IVF32,PQ16: the
    query distribution the samples below are drawn from (its means are the true recalls)."""
    ds = load_dataset("builtin:sift-10k")
    queries = host_vectors(np.asarray(ds.queries), ds.metric)
    index = train_index(ds.base, ds.metric, 32, 16, False, host_vectors(ds.base[:4000], ds.metric), 0)
    hits = recall_hits(index, queries, ds.groundtruth(10), MEASURES, 32)
    return {ms: h / ms[1] for ms, h in hits.items()}


def _goals(mu: np.ndarray) -> list[float]:
    """Goals where a promise fails most easily: just above the true recall at each small nprobe
    and just above the ceiling (there every promise fails)."""
    return sorted({round(float(v) + 0.001, 4) for v in mu[:8]} | {round(float(mu.max()) + 0.001, 4)})


def _draw_counts(rng, population: int, n: int) -> np.ndarray:
    """[DRAWS, population]: how often each query is in each of DRAWS samples of `n` drawn with replacement."""
    rows = np.arange(DRAWS)[:, None] * population
    return np.bincount((rows + rng.integers(0, population, (DRAWS, n))).ravel(), minlength=DRAWS * population).reshape(
        DRAWS, population
    )


def _failures(rule, population, rng) -> list[tuple[str, int]]:
    """(cell, failures in DRAWS samples) per (measure, sample size, goal): a failure is a sample
    whose chosen nprobe has a true recall below the goal; a refusal is no failure."""
    out = []
    for ms, r in population.items():
        mu = r.mean(0)
        for n in SIZES:
            n_held = round(n * HOLDOUT_FRACTION)
            n_sel = n - n_held
            counts = {k: _draw_counts(rng, r.shape[0], m) for k, m in (("sel", n_sel), ("held", n_held))}
            sel = counts["sel"] @ r / n_sel
            sel_sd = np.sqrt(np.maximum(counts["sel"] @ r**2 - n_sel * sel**2, 0) / max(n_sel - 1, 1))
            held = counts["held"] @ r / n_held
            for goal in _goals(mu):
                p = rule(sel, sel_sd, n_sel, held, goal)
                fails = int(((p > 0) & (mu[np.maximum(p, 1) - 1] < goal)).sum())
                out.append((f"{ms} n={n} goal={goal}", fails))
    return out


def _rejects(counts: list[tuple[str, int]]) -> list[str]:
    """Cells whose failure count a one-sided binomial test says exceeds the promised rate."""
    level, alarm = 1 - PROMISE_LEVEL, FALSE_ALARM / len(counts)
    return [f"{cell}: {f}/{DRAWS}" for cell, f in counts if binom.sf(f - 1, DRAWS, level) < alarm]


def test_promise_fails_at_most_as_often_as_stated_over_many_query_samples(population):
    """Thousands of query samples of 10-200 queries from one index's queries: the nprobe the
    rule promises has a true recall below the goal in at most 1 - PROMISE_LEVEL of them, by a
    binomial test per (measure, size, goal) — the training spread left out (set to 0), so the
    sampling error alone must be covered. The same check rejects the rule fanns had before
    (selection mean >= goal + 0.04, held-out recall not acted on), so it can fail."""
    rng = np.random.default_rng(0)

    def new(sel, sel_sd, n_sel, held, goal):
        return choose_nprobe(sel, sel_sd, n_sel, held, goal, training_sd=0)[1]

    def old(sel, sel_sd, n_sel, held, goal):
        ok = sel >= goal + 0.04 - 1e-9
        return np.where(ok.any(-1), ok.argmax(-1) + 1, 0)

    counts = _failures(new, population, rng)
    assert not _rejects(counts), _rejects(counts)
    rate = sum(f for _, f in counts) / (DRAWS * len(counts))
    assert rate < 1 - PROMISE_LEVEL
    assert len(_rejects(_failures(old, population, rng))) > len(counts) // 4


def test_interval_holds_the_mean_and_shrinks_with_more_queries():
    rng = np.random.default_rng(7)
    widths = []
    for n in (100, 400, 1600):
        hits = rng.binomial(10, 0.7, n) / 10  # per-query R@10 of a 0.7-recall index
        lo, hi = bootstrap_interval(hits, seed=0)
        assert lo <= hits.mean() <= hi
        assert bootstrap_interval(hits, seed=0) == (lo, hi)  # seeded: repeatable
        widths.append(hi - lo)
    # the width falls as 1/sqrt(n): about half for four times the queries
    assert widths[0] > widths[1] > widths[2]
    assert 0.35 < widths[1] / widths[0] < 0.65 and 0.35 < widths[2] / widths[1] < 0.65
    # a per-query figure that never varies has no spread
    assert bootstrap_interval(np.full(50, 0.6)) == pytest.approx((0.6, 0.6))


@pytest.mark.slow
@pytest.mark.long  # indexes retrained with other seeds
@pytest.mark.parametrize("queries", [100, 200])
def test_promised_nprobe_meets_the_goal_for_indexes_retrained_with_other_seeds(tmp_path, queries):
    """The issue's case (sift-10k, IVF32,PQ16, 1-R@10 = 0.8 and R@10 = 0.5, 100 or 200 queries):
    seed 0 promises an nprobe; indexes retrained with seeds 1-3 reach each goal there on all 200
    queries of the set (an independent faiss run), and the promised held-out recall reaches it."""
    ds = load_dataset("builtin:sift-10k")
    goals = [parse_goal("R@10=0.5"), parse_goal("1-R@10=0.8")]
    cfg = ExploreConfig(goals=goals, nlists=[32], opq=(False,), max_queries=queries, qps_min_seconds=0.01)
    rec = IvfPqExplorer(ds, cfg, tmp_path).run_into(tmp_path)["indexes"][0]
    queries_all = host_vectors(np.asarray(ds.queries), ds.metric)
    measures = sorted({g.measure for g in goals})
    for seed in (1, 2, 3):
        rows = np.sort(np.random.default_rng(seed).permutation(ds.n)[: train_size_for(ds.n, 32)])
        index = train_index(ds.base, ds.metric, 32, 16, False, host_vectors(ds.base[rows], ds.metric), seed)
        per_query = recall_hits(index, queries_all, ds.groundtruth(10), measures, 32)
        for g in goals:
            r = rec["goals"][g.text]
            assert r["reached"], (g.text, r)
            assert min(r["recall"], r["hw_recall"], r["selection_bound"]) >= g.target
            retrained = per_query[g.measure][:, r["nprobe"] - 1].mean() / g.truth
            assert retrained >= g.target, (seed, g.text, retrained, r)
