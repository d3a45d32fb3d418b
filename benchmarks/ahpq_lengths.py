"""AHPQ level-1 queue lengths (ChamVS Fig. 4.5) and the exact fraction they give on random data.

For K results over q level-1 queues, prints the length s1 that `ahpq_queue_length` picks for a
target fraction of exact queries, the predicted exact fraction (multinomial model, all q queues
jointly), the marginal one-queue length for comparison, the measured exact fraction of the AHPQ
reference model on random keys (equal stream lengths), and the level-1 register bits saved
against exact HPQ.

    PYTHONPATH=. python benchmarks/ahpq_lengths.py
    PYTHONPATH=. python benchmarks/ahpq_lengths.py --k 10 --target 0.999 --queries 20000
    PYTHONPATH=. python benchmarks/ahpq_lengths.py --json benchmarks/results/ahpq_lengths.json
"""

from __future__ import annotations

import argparse

import numpy as np
from record import command_line, write_result
from scipy.stats import binom

from fanns.numerics import make_keys, smallest_keys
from fanns.pe.ahpq import Ahpq


def measured_fraction(pe: Ahpq, queries: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    n = max(2 * pe.s, 40)
    exact = 0
    for _ in range(queries):
        keys = make_keys(rng.integers(0, 1 << 20, pe.z * n), rng.permutation(pe.z * n))
        exact += np.array_equal(pe.select(keys.reshape(pe.z, n)), smallest_keys(keys, pe.s))
    return exact / queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=100, help="results per query K = s (default 100)")
    parser.add_argument("--target", type=float, default=0.99, help="fraction of exact queries (default 0.99)")
    parser.add_argument("--queries", type=int, default=2000, help="random queries per measurement (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = parser.parse_args()
    print(f"K={args.k}, target {args.target}")
    print(f"{'L1 queues':>9} {'s1':>4} {'marginal':>8} {'predicted':>9} {'measured':>9} {'L1 bits vs HPQ':>15}")
    rows = []
    for z in (1, 2, 4, 8, 12, 16):
        pe = Ahpq(z=z, s=args.k, key_bits=64, target=args.target)
        q = pe.num_l1
        marginal = int(np.argmax(binom.cdf(np.arange(args.k + 1), args.k, 1 / q) >= args.target))
        measured = measured_fraction(pe, args.queries, args.seed)
        print(f"{q:9d} {pe.s1:4d} {marginal:8d} {pe.exact_fraction():9.4f} {measured:9.4f} {pe.s1 / args.k:14.1%}")
        rows.append({"l1_queues": q, "s1": pe.s1, "predicted": pe.exact_fraction(), "measured": measured})
    figures = {"k": args.k, "target": args.target, "queries": args.queries, "rows": rows}
    write_result(args.json, "ahpq_lengths", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    rows = [r for r in figures["rows"] if r["l1_queues"] > 1]  # one queue is HPQ itself
    measured = [r["measured"] for r in rows]
    share = [100 * r["s1"] / figures["k"] for r in rows]
    figure = (
        f"AHPQ level-1 lengths for K = {figures['k']}, target {figures['target']:g} exact queries "
        f"({figures['queries']:,} random queries per setting)"
    )
    value = (
        f"measured exact fraction {min(measured):.4f}–{max(measured):.4f} for {rows[0]['l1_queues']}–"
        f"{rows[-1]['l1_queues']} level-1 queues, level-1 registers {min(share):.0f}–{max(share):.0f} % of HPQ's"
    )
    return figure, value


if __name__ == "__main__":
    main()
