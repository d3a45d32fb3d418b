"""Design-space fuzz: N random draws (board, d in 1..2048, m, nlist, K in 1..1000, recall goal,
clock, utilisation cap) through explore -> DSE -> both faces -> simulation, and a table of outcomes.

Each draw is `fanns.flow.design_fuzz.draw_case(seed)` for seeds FIRST .. FIRST+N-1, so a failing
draw is re-run alone with `--first SEED N=1`. Per draw: the chosen design and `--runners-up` of
the DSE's next designs are generated on both faces and `--queries` test queries are simulated on
each (g++ C simulation; Verilator, fast harness), compared key for key with the reference model,
and the RTL's cycles per query with the cycle model's.

Draws are independent jobs: `--workers W` runs W at a time here (each draw in WORK/draw<seed>,
one build cache WORK/builds); `--cluster tcp://HOST:PORT` (Dask) or `ray://HOST:PORT` (Ray) ships
them to an existing cluster's workers, which need fanns, Verilator and g++ but no shared file system
(each draw runs in a temporary folder of its worker).

    PYTHONPATH=. python benchmarks/design_fuzz.py N [--first SEED] [--max-d D] [--max-k K] [--runners-up R]
        [--queries Q] [--work DIR] [--workers W | --cluster ADDRESS]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fanns.errors import FannsError
from fanns.flow.design_fuzz import MAX_D, MAX_K, SIM_QUERIES, draw_case, run_draws, table
from fanns.tools.parallel import check_cluster


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of draws")
    ap.add_argument("--first", type=int, default=0, help="seed of the first draw (default 0)")
    ap.add_argument("--max-d", type=int, default=MAX_D, help=f"largest dimension drawn (default {MAX_D})")
    ap.add_argument("--max-k", type=int, default=MAX_K, help=f"largest K drawn (default {MAX_K})")
    ap.add_argument("--runners-up", type=int, default=1, help="DSE runners-up generated per draw (default 1)")
    ap.add_argument(
        "--queries", type=int, default=SIM_QUERIES, help=f"test queries simulated per face (default {SIM_QUERIES})"
    )
    ap.add_argument("--work", default="work/design-fuzz", help="folder for datasets, projects and builds")
    ap.add_argument("--workers", type=int, default=1, help="draws run at a time on this machine (default 1)")
    ap.add_argument("--cluster", help="run the draws on an existing Dask (tcp://HOST:PORT) or Ray (ray://) cluster")
    args = ap.parse_args()
    try:
        if args.cluster is not None:
            check_cluster(args.cluster)
        if args.workers < 1:
            raise FannsError(f"--workers {args.workers}: must be at least 1", hint="e.g. --workers 2")
    except FannsError as exc:
        sys.exit(f"error: {exc}")
    cases = [draw_case(seed, args.max_d, args.max_k) for seed in range(args.first, args.first + args.n)]
    outcomes = run_draws(
        cases, Path(args.work).resolve(), args.runners_up, args.queries, workers=args.workers, cluster=args.cluster
    )
    print("\n".join(table(outcomes)), flush=True)


if __name__ == "__main__":
    main()
