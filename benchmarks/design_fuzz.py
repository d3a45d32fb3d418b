"""Design-space fuzz: N random draws (board, d in 1..2048, m, nlist, K in 1..1000, recall goal,
clock, utilisation cap) through explore -> DSE -> both faces -> simulation, and a table of outcomes.

Each draw is `fanns.flow.design_fuzz.draw_case(seed)` for seeds FIRST .. FIRST+N-1, so a failing
draw is re-run alone with `--first SEED N=1`; `--corners C` adds the corner draws
`draw_corner_case(seed)` for seeds FIRST .. FIRST+C-1 (the option space's extremes: the most PEs and
streams, the widest lanes, every selection architecture at its most and fewest streams, W = 8 with
the most channels; `fanns.model.ivfpq.corners`), each built instead of the DSE's choice; `--host H`
adds the host-memory draws `fanns.flow.fuzz_draws.draw_host_case(seed)` (the board's memory shrunk
below the index: the DSE's choice keeps its lists in host memory); `--graph G`
adds the graph draws `fanns.flow.graph_fuzz.draw_graph_case(seed)` for seeds FIRST .. FIRST+G-1 (their
own sequence: the IVF-PQ draws of a seed stay the same), each a pinned graph design or a graph DSE,
both faces simulated against the DST reference (`--graph-max-d`, `--graph-queries`). Per draw:
the chosen design (or the corner) and `--runners-up` of the DSE's next designs are generated on
both faces and `--queries` test queries are simulated on each (g++ C simulation; Verilator, fast
harness), compared key for key with the reference model, and the RTL's cycles per query with the
cycle model's.

Draws are independent jobs: `--workers W` runs W at a time here (each draw in WORK/draw<seed>,
WORK/corner<seed> or WORK/host<seed>, one build cache WORK/builds); `--cluster tcp://HOST:PORT` (Dask) or
`ray://HOST:PORT` (Ray) ships them to an existing cluster's workers, which need fanns, Verilator
and g++ but no shared file system (each draw runs in a temporary folder of its worker).

With `--json PATH` the table is also written as JSON (`fanns.flow.design_fuzz.records`: every
draw, its designs, each face's mismatches and the RTL's cycles per query against the model), after
every `--workers` draws, so a long run keeps what it has measured; `--resume` reads that file
first and runs only the draws it does not hold as passed (a run stopped by a reboot continues,
and a draw that failed runs again, e.g. after its fix).

    PYTHONPATH=. python benchmarks/design_fuzz.py N [--corners C] [--host H] [--graph G] [--first SEED]
        [--max-d D] [--max-k K] [--runners-up R] [--queries Q] [--work DIR]
        [--workers W | --cluster ADDRESS] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from record import command_line, write_result

from fanns.errors import FannsError
from fanns.flow.design_fuzz import (
    CYCLE_TOLERANCE,
    MAX_D,
    MAX_K,
    SIM_QUERIES,
    draw_case,
    draw_corner_case,
    records,
    table,
)
from fanns.flow.fuzz_draws import draw_host_case
from fanns.flow.graph_fuzz import MAX_D as GRAPH_MAX_D
from fanns.flow.graph_fuzz import SIM_QUERIES as GRAPH_QUERIES
from fanns.flow.graph_fuzz import any_outcome_from_record, draw_graph_case, run_all_draws
from fanns.tools.parallel import check_cluster


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of draws")
    ap.add_argument("--corners", type=int, default=0, help="number of corner draws besides (default 0)")
    ap.add_argument("--host", type=int, default=0, help="number of host-memory draws besides (default 0)")
    ap.add_argument("--graph", type=int, default=0, help="number of graph draws besides (default 0)")
    ap.add_argument(
        "--graph-max-d", type=int, default=GRAPH_MAX_D, help=f"largest d of a graph draw (default {GRAPH_MAX_D})"
    )
    ap.add_argument(
        "--graph-queries",
        type=int,
        default=GRAPH_QUERIES,
        help=f"test queries simulated per face of a graph draw (default {GRAPH_QUERIES})",
    )
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
    ap.add_argument("--json", metavar="PATH", help="also write the table as JSON (benchmarks/record.py)")
    ap.add_argument("--resume", action="store_true", help="keep the passed draws --json PATH records, run the rest")
    args = ap.parse_args()
    try:
        if args.cluster is not None:
            check_cluster(args.cluster)
        if args.workers < 1:
            raise FannsError(f"--workers {args.workers}: must be at least 1", hint="e.g. --workers 2")
        if args.resume and args.json is None:
            raise FannsError("--resume continues the run that --json PATH records", hint="add --json PATH")
    except FannsError as exc:
        sys.exit(f"error: {exc}")
    seeds = range(args.first, args.first + max(args.n, args.corners, args.host))
    cases = [
        make(seed, args.max_d, args.max_k)
        for seed in seeds
        for make, count in ((draw_case, args.n), (draw_corner_case, args.corners), (draw_host_case, args.host))
        if seed < args.first + count
    ] + [draw_graph_case(seed, args.graph_max_d) for seed in range(args.first, args.first + args.graph)]
    outcomes = _recorded(Path(args.json), cases) if args.resume and Path(args.json).is_file() else []
    done = {o.case for o in outcomes}
    todo = [c for c in cases if c not in done]
    if outcomes:
        print(f"{len(outcomes)} draw(s) read from {args.json}; {len(todo)} to run", flush=True)
    step = len(todo) if args.cluster is not None else args.workers
    for start in range(0, len(todo), step):
        chunk = todo[start : start + step]
        outcomes += run_all_draws(
            chunk,
            Path(args.work).resolve(),
            args.runners_up,
            args.queries,
            args.graph_queries,
            workers=args.workers,
            cluster=args.cluster,
        )
        write_result(args.json, "design_fuzz", command_line(), _figures(outcomes, len(cases)))
    print("\n".join(table(outcomes)), flush=True)


def _recorded(path: Path, cases: list) -> list:
    """The passed outcomes of `cases` that the run recorded in `path` holds."""
    recorded = map(any_outcome_from_record, json.loads(path.read_text())["figures"]["draw_records"])
    wanted = set(cases)
    return [o for o in recorded if o.case in wanted and o.passed]


def _figures(outcomes: list, planned: int) -> dict:
    counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "no design", "failed")}
    rtl = [f for o in outcomes for f in o.faces if f.cycle_error_pct is not None]
    return {
        "draws": len(outcomes),
        "planned": planned,
        "counts": counts,
        "faces_simulated": sum(len(o.faces) for o in outcomes),
        "mismatched_queries": sum(f.mismatched for o in outcomes for f in o.faces),
        "largest_cycle_error_pct": max((abs(f.cycle_error_pct) for f in rtl), default=None),
        "table": table(outcomes),
        "draw_records": records(outcomes),
    }


def readme_row(figures: dict) -> tuple[str, str]:
    """The README row of a recorded run (`benchmarks/readme_figures.py`): the IVF-PQ draws and the
    graph draws counted apart."""
    graph = [r for r in figures["draw_records"] if "graph" in r["case"]]
    draws = [r for r in figures["draw_records"] if "graph" not in r["case"]]
    parts, values = [], []
    if draws:
        corners = sum(bool(r["case"]["corner"]) for r in draws)
        boards = sorted({r["case"]["board"] for r in draws})
        dims = sorted(r["case"]["d"] for r in draws)
        c = _counts(draws)
        parts.append(
            f"{len(draws) - corners} random draws + {corners} option-space corners "
            f"(d {dims[0]}..{dims[-1]}, boards {', '.join(boards)}) through explore, DSE, both faces and simulation"
        )
        values.append(f"{c['ok']} built, {c['no design']} refused by the DSE with its reason, {c['failed']} failed")
    if graph:
        g = _counts(graph)
        kinds = sorted({r["case"]["graph"].upper() for r in graph})
        dims = sorted(r["case"]["d"] for r in graph)
        boards = sorted({r["case"]["board"] for r in graph})
        pinned = sum(not r["case"]["dse"] for r in graph)
        parts.append(
            f"{len(graph)} graph draws ({'/'.join(kinds)}, d {dims[0]}..{dims[-1]}, boards {', '.join(boards)}; "
            f"{pinned} pinned designs, {len(graph) - pinned} graph DSEs) through both faces and simulation"
        )
        seconds = [r["seconds"] for r in graph]
        values.append(
            f"graph draws: {g['ok']} built, {g['no design']} refused by the graph DSE with its reason, "
            f"{g['failed']} failed (median {statistics.median(seconds):.0f} s a draw, wall clock, "
            f"longest {max(seconds):.0f} s)"
        )
    error = figures["largest_cycle_error_pct"]
    value = (
        "; ".join(values) + f". Built designs bit-exact on both faces, RTL cycles within "
        f"{100 * CYCLE_TOLERANCE:.0f} % of the model; {figures['faces_simulated']} faces simulated, "
        f"{figures['mismatched_queries']} mismatched queries"
    )
    if error is not None:
        value += f", largest RTL cycle error {error:.2f} %"
    if figures["draws"] < figures["planned"]:
        value += f"; {figures['draws']} of the {figures['planned']} planned draws ran"
    return "design fuzz: " + "; ".join(parts), value


def _counts(draws: list[dict]) -> dict:
    return {s: sum(r["status"] == s for r in draws) for s in ("ok", "no design", "failed")}


if __name__ == "__main__":
    main()
