"""The published FANNS designs (thesis Table 6.3) beside the designs this model chooses for the
same index, nprobe and K at SIFT100M scale on the U55C (synthetic size-biased workload), and the
sensitivity of our QPS to the assumed list-size imbalance.

    PYTHONPATH=. python benchmarks/fanns_table63.py [--queries N]
"""

from __future__ import annotations

import argparse

from fanns.model.ivfpq.published import print_comparison, reproduce


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=1000, help="synthetic sample queries per design (default 1000)")
    args = ap.parse_args()
    results = reproduce(queries=args.queries)
    print_comparison(results)
    for row, outcome in results:
        p = outcome.best
        if p is None:
            print(f"K={row['k']}: no design fits: " + "; ".join(outcome.explain))
            continue
        cycles = ", ".join(f"{k} {t.interval:,.0f}" for k, t in p.timings.items())
        ratio = p.qps / row["predicted_qps"]
        print(
            f"K={row['k']}: ours {p.qps:,.0f} QPS vs published "
            f"{row['predicted_qps']:,} ({ratio:.2f}x); cycles/query: {cycles}"
        )
    print("\nsensitivity to the assumed imbalance factor of the IVF lists (QPS for K = 1 / 10 / 100):")
    for imbalance in (1.0, 1.2, 1.5):
        qps = [o.best.qps if o.best else 0.0 for _, o in reproduce(queries=min(args.queries, 500), imbalance=imbalance)]
        print(f"  imbalance {imbalance}: " + " / ".join(f"{q:,.0f}" for q in qps))


if __name__ == "__main__":
    main()
