"""Does the promised recall hold on the next index and the next queries?

Per dataset and goal: the explorer (seed 0, on the first --queries queries) promises the
smallest nprobe whose selection queries' lower confidence bound and held-out queries reach the
goal (`fanns.index.holdout`), with the held-out recall's 95 % bootstrap interval; then the same
index is retrained with other seeds (other training sample and k-means starts) and measured at
that nprobe on every query of the set — what a user who rebuilds the index would see, checked by
faiss alone. The standard deviation over all seeds at the chosen nprobe (all queries, so only
training varies) is the training spread `fanns.index.holdout.TRAINING_SD` is set from.

    PYTHONPATH=. python benchmarks/recall_holdout.py [--sets sift-10k,deep-10k] [--seeds 4]
        [--nlist 32] [--queries N] [--goals 1-R@10=0.8,R@10=0.6] [--json PATH]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from record import command_line, write_result

from fanns.datasets import load_dataset
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.explore.ivfpq_training import train_size_for, training_rows
from fanns.index.goals import parse_goal
from fanns.index.holdout import PROMISE_LEVEL
from fanns.index.ivfpq import host_vectors, train_index
from fanns.index.ivfpq_recall import recall_hits


def retrain_hits(ds, nlist: int, m: int, seed: int, queries: np.ndarray, gt: np.ndarray, measures) -> dict:
    """Per-query hits at every nprobe of the index retrained with `seed` (the explorer's recipe)."""
    rows = training_rows(ds.n, seed, train_size_for(ds.n, nlist))
    index = train_index(ds.base, ds.metric, nlist, m, False, host_vectors(ds.base[rows], ds.metric), seed)
    return recall_hits(index, queries, gt, measures, nlist, label=f"seed {seed}")


def run_set(name: str, goals, nlist: int, seeds: int, queries: int | None) -> list[dict]:
    ds = load_dataset(f"builtin:{name}")
    cfg = ExploreConfig(goals=goals, nlists=[nlist], opq=(False,), max_queries=queries, qps_min_seconds=0.01)
    with tempfile.TemporaryDirectory() as tmp:
        explorer = IvfPqExplorer(ds, cfg, Path(tmp))
        rec = explorer.run_into(Path(tmp))["indexes"][0]
    measures = sorted({g.measure for g in goals})
    every_query = host_vectors(np.asarray(ds.queries), ds.metric)
    gt = ds.groundtruth(max(k for k, _ in measures))
    hits = [retrain_hits(ds, nlist, rec["m"], s, every_query, gt, measures) for s in range(seeds)]
    split = {"selection": int(explorer.selection.size), "holdout": int(explorer.holdout.size)}
    rows = []
    for g in goals:
        r = rec["goals"][g.text]
        if not r["reached"]:
            why = {k: r.get(k) for k in ("best_recall", "reason", "queries_needed")}
            rows.append({"set": name, "goal": g.text, "reached": False, "queries": split, **why})
            continue
        p = r["nprobe"]
        every = [float(h[g.measure][:, p - 1].mean() / g.truth) for h in hits]
        rows.append(
            {
                "set": name,
                "index": rec["index"],
                "goal": g.text,
                "reached": True,
                "nprobe": p,
                "selection_recall": r["selection_recall"],
                "selection_bound": r["selection_bound"],
                "holdout_recall": r["recall"],
                "holdout_interval": r["recall_interval"],
                "hw_recall": r["hw_recall"],
                "retrain_recalls": [round(v, 4) for v in every],
                "all_queries": int(every_query.shape[0]),
                "training_sd": round(float(np.std(every, ddof=1)), 4),
                "queries": split,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="sift-10k,deep-10k", help="built-in sets (default sift-10k,deep-10k)")
    ap.add_argument("--goals", default="1-R@10=0.8,R@10=0.6", help="recall goals (default 1-R@10=0.8,R@10=0.6)")
    ap.add_argument("--nlist", type=int, default=32, help="IVF cells, no OPQ, m 16 (default 32)")
    ap.add_argument("--seeds", type=int, default=4, help="training seeds 0.. measured on all queries (default 4)")
    ap.add_argument("--queries", type=int, help="the explorer's query sample: the first N (default: all)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    goals = [parse_goal(t) for t in args.goals.split(",")]
    rows = [row for name in args.sets.split(",") for row in run_set(name, goals, args.nlist, args.seeds, args.queries)]
    print(
        f"IVF{args.nlist},PQ16, seed 0 explores; nprobe where the selection queries' {PROMISE_LEVEL:.1%} lower "
        "bound and the held-out queries reach the goal; retrains measured on all queries"
    )
    print(
        f"{'set':<10} {'goal':<12} {'nprobe':>6} {'selection (bound)':>18} {'held-out (95 % CI)':>26} "
        f"{'seeds 0..':>30} {'sd':>6}"
    )
    for r in rows:
        if not r["reached"]:
            print(f"{r['set']:<10} {r['goal']:<12} not promised: {r['reason']} (best {r['best_recall']:.3f})")
            continue
        lo, hi = r["holdout_interval"]
        retr = " ".join(f"{v:.3f}" for v in r["retrain_recalls"])
        print(
            f"{r['set']:<10} {r['goal']:<12} {r['nprobe']:>6} "
            f"{r['selection_recall']:>9.3f} ({r['selection_bound']:.3f}) "
            f"{r['holdout_recall']:>8.3f} ({lo:.3f}-{hi:.3f}){'':>3} {retr:>30} {r['training_sd']:>6.4f}"
        )
    write_result(args.json, "recall_holdout", command_line(), {"rows": rows})


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    rows = figures["rows"]
    parts = []
    for r in rows:
        if not r["reached"]:
            parts.append(f"{r['set']} {r['goal']}: not promised, {r['reason']} (best {r['best_recall']:.3f})")
            continue
        lo, hi = r["holdout_interval"]
        retr = " / ".join(f"{v:.3f}" for v in r["retrain_recalls"])
        parts.append(
            f"{r['set']} {r['goal']}: nprobe {r['nprobe']}, selection {r['selection_recall']:.3f} (bound "
            f"{r['selection_bound']:.3f}), held-out {r['holdout_recall']:.3f} (95 % CI {lo:.3f}–{hi:.3f}), "
            f"seeds {retr}, training sd {r['training_sd']:.4f}"
        )
    first = next(r for r in rows if r["reached"])
    q = first["queries"]
    figure = (
        f"promised (held-out) recall vs indexes retrained with other seeds ({first['index']}; nprobe where "
        f"{q['selection']} selection queries' 97.5 % lower bound and {q['holdout']} held-out queries reach the "
        f"goal; seeds measured on all {first['all_queries']} queries)"
    )
    return figure, "; ".join(parts)


if __name__ == "__main__":
    main()
