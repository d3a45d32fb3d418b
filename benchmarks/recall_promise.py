"""How often does the recall promise fail? Many query samples, several trained indexes.

The explorer promises a goal at the smallest nprobe whose selection queries' lower confidence
bound reaches it and whose held-out queries reach it too (`fanns.index.holdout`), and says that
nprobe falls below the goal at most 1 - PROMISE_LEVEL (2.5 %) of the time. This benchmark
measures that: it trains the explorer's index (IVF{nlist},PQ16, the explorer's training sample)
with several seeds, takes the per-query recall of every query of the set at every nprobe as the
query distribution (its means are the true recalls), and draws thousands of query samples of
each size from it. Per sample it applies the rule (faiss's recall; the hardware-faithful check
the explorer adds can only raise nprobe) and counts a failure when the chosen nprobe's true
recall is below the goal — on the index that was sampled (what the generated design searches)
and on the other seeds' indexes (a retrain). The rule fanns used before (selection mean >= goal
+ 0.04, held-out recall not acted on) is measured on the same samples.

    PYTHONPATH=. python benchmarks/recall_promise.py [--set sift-10k] [--nlist 32] [--seeds 4]
        [--goals 1-R@10=0.8,R@10=0.5] [--sizes 20,50,100,200] [--draws 2000] [--json PATH]
"""

from __future__ import annotations

import argparse

import numpy as np
from record import command_line, write_result

from fanns.datasets import load_dataset
from fanns.explore.ivfpq_training import train_size_for, training_rows
from fanns.index.goals import parse_goal
from fanns.index.holdout import HOLDOUT_FRACTION, PROMISE_LEVEL, TRAINING_SD, choose_nprobe
from fanns.index.ivfpq import host_vectors, train_index
from fanns.index.ivfpq_recall import recall_hits

OLD_MARGIN = 0.04
"""The margin the explorer added to the selection mean before it had a bound (fanns format 2)."""


def populations(name: str, nlist: int, seeds: int, measures) -> tuple[dict, int]:
    """Per seed, per measure, the recall of every query of the set at nprobe 1..nlist."""
    ds = load_dataset(f"builtin:{name}")
    queries = host_vectors(np.asarray(ds.queries), ds.metric)
    gt = ds.groundtruth(max(k for k, _ in measures))
    out = {}
    for seed in range(seeds):
        rows = training_rows(ds.n, seed, train_size_for(ds.n, nlist))
        index = train_index(ds.base, ds.metric, nlist, 16, False, host_vectors(ds.base[rows], ds.metric), seed)
        hits = recall_hits(index, queries, gt, measures, nlist, label=f"seed {seed}")
        out[seed] = {ms: h / ms[1] for ms, h in hits.items()}
    return out, int(queries.shape[0])


def draw_counts(rng: np.random.Generator, draws: int, population: int, n: int) -> np.ndarray:
    """[draws, population]: how often each query is in each of `draws` samples of `n` (with replacement)."""
    keys = (np.arange(draws)[:, None] * population + rng.integers(0, population, (draws, n))).ravel()
    return np.bincount(keys, minlength=draws * population).reshape(draws, population)


def rules(sel, sel_sd, n_sel, held, goal) -> dict[str, np.ndarray]:
    """The nprobe each rule chooses per sample (0: none): fanns's promise, and the old rule."""
    old = sel >= goal + OLD_MARGIN - 1e-9
    return {
        "promise": choose_nprobe(sel, sel_sd, n_sel, held, goal)[1],
        "old": np.where(old.any(-1), old.argmax(-1) + 1, 0),
    }


def measure(pops: dict, goal, sizes: list[int], draws: int, rng: np.random.Generator) -> list[dict]:
    """Per sample size: per rule, the failure rates (same index, retrained), the refusals and the mean nprobe."""
    seeds = sorted(pops)
    truth = {s: pops[s][goal.measure].mean(0) for s in seeds}
    rows = []
    for n in sizes:
        n_held = round(n * HOLDOUT_FRACTION)
        n_sel = n - n_held
        tally = {
            rule: {"fail_same": 0, "fail_retrained": 0.0, "refused": 0, "nprobe": []} for rule in ("promise", "old")
        }
        for s in seeds:
            r = pops[s][goal.measure]
            c_sel, c_held = (draw_counts(rng, draws, r.shape[0], m) for m in (n_sel, n_held))
            sel = c_sel @ r / n_sel
            sel_sd = np.sqrt(np.maximum(c_sel @ r**2 - n_sel * sel**2, 0) / max(n_sel - 1, 1))
            held = c_held @ r / n_held
            others = [truth[o] for o in seeds if o != s]
            for rule, p in rules(sel, sel_sd, n_sel, held, goal.target).items():
                t, ok = tally[rule], p > 0
                at = np.maximum(p, 1) - 1
                t["fail_same"] += int((ok & (truth[s][at] < goal.target)).sum())
                t["fail_retrained"] += float(np.mean([(ok & (o[at] < goal.target)).sum() for o in others]))
                t["refused"] += int((~ok).sum())
                t["nprobe"] += p[ok].tolist()
        total = draws * len(seeds)
        row = {"goal": goal.text, "queries": n}
        for rule, t in tally.items():
            row[rule] = {
                "fail_same_index": round(t["fail_same"] / total, 4),
                "fail_retrained": round(t["fail_retrained"] / total, 4),
                "refused": round(t["refused"] / total, 4),
                "mean_nprobe": round(float(np.mean(t["nprobe"])), 2) if t["nprobe"] else None,
            }
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="sift-10k", help="built-in set (default sift-10k)")
    ap.add_argument("--nlist", type=int, default=32, help="IVF cells, m 16, no OPQ (default 32)")
    ap.add_argument("--seeds", type=int, default=4, help="indexes trained with seeds 0.. (default 4)")
    ap.add_argument("--goals", default="1-R@10=0.8,R@10=0.5,1-R@10=0.9,R@10=0.65", help="recall goals")
    ap.add_argument("--sizes", default="20,50,100,200", help="query sample sizes, both halves (default 20,50,100,200)")
    ap.add_argument("--draws", type=int, default=2000, help="samples per size and seed (default 2000)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    goals = [parse_goal(t) for t in args.goals.split(",")]
    sizes = [int(v) for v in args.sizes.split(",")]
    pops, nq = populations(args.set, args.nlist, args.seeds, sorted({g.measure for g in goals}))
    rng = np.random.default_rng(0)
    rows = [row for g in goals for row in measure(pops, g, sizes, args.draws, rng)]
    print(
        f"{args.set} IVF{args.nlist},PQ16, seeds 0-{args.seeds - 1}, all {nq} queries as the query distribution; "
        f"{args.draws} samples per size and seed; promised: at most {1 - PROMISE_LEVEL:.1%} below the goal "
        f"(training spread {TRAINING_SD})"
    )
    print(
        f"{'goal':<12} {'queries':>7}   {'promise: fail same / retrained, refused, nprobe':<50} old rule (goal + 0.04)"
    )
    for r in rows:
        cells = []
        for rule in ("promise", "old"):
            x = r[rule]
            p = "-" if x["mean_nprobe"] is None else f"{x['mean_nprobe']:.2f}"
            cells.append(
                f"{x['fail_same_index']:6.2%} / {x['fail_retrained']:6.2%}, {x['refused']:6.1%} refused, nprobe {p:>5}"
            )
        print(f"{r['goal']:<12} {r['queries']:>7}   {cells[0]:<50} {cells[1]}")
    setup = {"set": args.set, "nlist": args.nlist, "seeds": args.seeds, "queries": nq, "draws": args.draws}
    write_result(args.json, "recall_promise", command_line(), {"setup": setup, "rows": rows})


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    s, rows = figures["setup"], figures["rows"]
    worst = {
        rule: max(max(r[rule]["fail_same_index"], r[rule]["fail_retrained"]) for r in rows)
        for rule in ("promise", "old")
    }
    parts = [
        f"{r['goal']}, {r['queries']} queries: {r['promise']['fail_same_index']:.1%} / "
        f"{r['promise']['fail_retrained']:.1%} (old rule {r['old']['fail_same_index']:.1%} / "
        f"{r['old']['fail_retrained']:.1%}), {r['promise']['refused']:.0%} refused"
        for r in rows
    ]
    figure = (
        f"how often the promised nprobe falls below the goal (promised: at most 2.5 %), same index / retrained "
        f"index, over {s['draws']} query samples per size and seed ({s['set']}, IVF{s['nlist']},PQ16, "
        f"{s['seeds']} seeds, all {s['queries']} queries as the distribution)"
    )
    value = (
        f"worst {worst['promise']:.1%} (the old rule, selection mean >= goal + 0.04: {worst['old']:.1%}); "
        + "; ".join(parts)
    )
    return figure, value


if __name__ == "__main__":
    main()
