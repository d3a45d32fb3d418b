"""Does the promised recall hold on the next index and the next queries?

Per dataset and goal: the explorer (seed 0) chooses nprobe on its selection queries at goal +
margin and promises the held-out queries' recall with a 95 % bootstrap interval; then the same
index is retrained with other seeds (other training sample and k-means starts) and measured at
that nprobe on the same held-out queries — what a user who rebuilds the index would see. The
standard deviation over all seeds at the chosen nprobe (all queries, so only training varies) is
the training variance `fanns.index.holdout.TRAINING_MARGIN` is set from.

    PYTHONPATH=. python benchmarks/recall_holdout.py [--sets sift-10k,deep-10k] [--seeds 4]
        [--nlist 32] [--margin M] [--json PATH]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from record import command_line, write_result

from fanns.datasets import load_dataset
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer, train_size_for
from fanns.index.goals import parse_goal
from fanns.index.holdout import TRAINING_MARGIN
from fanns.index.ivfpq import host_vectors, train_index
from fanns.index.recall import recall_hits


def retrain_hits(ds, nlist: int, m: int, seed: int, queries: np.ndarray, gt: np.ndarray, measures) -> dict:
    """Per-query hits at every nprobe of the index retrained with `seed` (the explorer's recipe)."""
    rows = np.sort(np.random.default_rng(seed).permutation(ds.n)[: train_size_for(ds.n, nlist)])
    index = train_index(ds.base, ds.metric, nlist, m, False, host_vectors(ds.base[rows], ds.metric), seed)
    return recall_hits(index, queries, gt, measures, nlist, label=f"seed {seed}")


def run_set(name: str, goals, nlist: int, seeds: int, margin: float) -> list[dict]:
    ds = load_dataset(f"builtin:{name}")
    cfg = ExploreConfig(goals=goals, nlists=[nlist], opq=(False,), qps_min_seconds=0.01, margin=margin)
    with tempfile.TemporaryDirectory() as tmp:
        explorer = IvfPqExplorer(ds, cfg, Path(tmp))
        rec = explorer.run_into(Path(tmp))["indexes"][0]
    measures = sorted({g.measure for g in goals})
    others = [retrain_hits(ds, nlist, rec["m"], s, explorer.queries, explorer.gt, measures) for s in range(1, seeds)]
    rows = []
    for g in goals:
        r = rec["goals"][g.text]
        if not r["reached"]:
            rows.append({"set": name, "goal": g.text, "reached": False, "best_recall": r["best_recall"]})
            continue
        p = r["nprobe"]
        held = [float(h[g.measure][explorer.holdout, p - 1].mean() / g.truth) for h in others]
        every = [r["all_queries_recall"], *(float(h[g.measure][:, p - 1].mean() / g.truth) for h in others)]
        rows.append(
            {
                "set": name,
                "index": rec["index"],
                "goal": g.text,
                "reached": True,
                "nprobe": p,
                "margin": margin,
                "selection_recall": r["selection_recall"],
                "holdout_recall": r["recall"],
                "holdout_interval": r["recall_interval"],
                "hw_recall": r["hw_recall"],
                "retrain_holdout_recalls": [round(v, 4) for v in held],
                "training_sd": round(float(np.std(every, ddof=1)), 4),
                "queries": {"selection": int(explorer.selection.size), "holdout": int(explorer.holdout.size)},
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="sift-10k,deep-10k", help="built-in sets (default sift-10k,deep-10k)")
    ap.add_argument("--goals", default="1-R@10=0.8,R@10=0.6", help="recall goals (default 1-R@10=0.8,R@10=0.6)")
    ap.add_argument("--nlist", type=int, default=32, help="IVF cells, no OPQ, m 16 (default 32)")
    ap.add_argument(
        "--seeds", type=int, default=4, help="training seeds: the explorer's 0 and retrains 1.. (default 4)"
    )
    ap.add_argument(
        "--margin", type=float, default=TRAINING_MARGIN, help=f"selection margin (default {TRAINING_MARGIN})"
    )
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    goals = [parse_goal(t) for t in args.goals.split(",")]
    rows = [row for name in args.sets.split(",") for row in run_set(name, goals, args.nlist, args.seeds, args.margin)]
    print(f"IVF{args.nlist},PQ16, seed 0 explores; margin {args.margin}; 95 % bootstrap interval over held-out queries")
    print(
        f"{'set':<10} {'goal':<12} {'nprobe':>6} {'selection':>9} {'held-out (95 % CI)':>26} {'retrains':>22} {'sd':>6}"
    )
    for r in rows:
        if not r["reached"]:
            print(f"{r['set']:<10} {r['goal']:<12} not reached (best {r['best_recall']:.3f})")
            continue
        lo, hi = r["holdout_interval"]
        retr = " ".join(f"{v:.3f}" for v in r["retrain_holdout_recalls"])
        print(
            f"{r['set']:<10} {r['goal']:<12} {r['nprobe']:>6} {r['selection_recall']:>9.3f} "
            f"{r['holdout_recall']:>8.3f} ({lo:.3f}-{hi:.3f}){'':>3} {retr:>22} {r['training_sd']:>6.4f}"
        )
    write_result(args.json, "recall_holdout", command_line(), {"rows": rows})


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    rows = figures["rows"]
    parts = []
    for r in rows:
        if not r["reached"]:
            parts.append(f"{r['set']} {r['goal']}: not reached (best {r['best_recall']:.3f})")
            continue
        lo, hi = r["holdout_interval"]
        retr = " / ".join(f"{v:.3f}" for v in r["retrain_holdout_recalls"])
        parts.append(
            f"{r['set']} {r['goal']}: nprobe {r['nprobe']}, selection {r['selection_recall']:.3f}, held-out "
            f"{r['holdout_recall']:.3f} (95 % CI {lo:.3f}–{hi:.3f}), retrains {retr}, "
            f"training sd {r['training_sd']:.4f}"
        )
    first = next(r for r in rows if r["reached"])
    q = first["queries"]
    figure = (
        f"promised (held-out) recall vs indexes retrained with other seeds ({first['index']}; nprobe chosen on "
        f"{q['selection']} selection queries at goal + {first['margin']:g}; {q['holdout']} held-out queries, "
        "95 % bootstrap interval over queries)"
    )
    return figure, "; ".join(parts)


if __name__ == "__main__":
    main()
