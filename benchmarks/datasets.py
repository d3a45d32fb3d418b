"""Every shape users bring, end to end: explore -> DSE on U55C and ZCU104 -> both faces generated
and simulated, with faiss-cpu measured in the same run.

Sets: built-in datasets (`builtin:NAME`) and, for each dimension in `--dims` (default 96, 128, 384,
768, 784, 1024, 1536), a synthetic clustered set (`fanns.datasets.synthetic.clustered`, float32,
unit-scale mixture, `--n` vectors) where no real set of that dimension is built in. Per set:

- the exploration's wall time (default grid: every nlist of `default_nlists`, every m of `default_ms`,
  with and without OPQ) for the recall goal `--goal`;
- the DSE's best U55C design (index, nprobe, PEs per stage, its resources with the shell) and
  its predicted QPS, and the best ZCU104 design's predicted QPS;
- faiss-cpu at the U55C design's index and nprobe, measured by the exploration in this run (the
  median of its windows and their quartiles, one thread on the thread CPU clock and all cores on
  the wall clock) and the FPGA/CPU ratios;
- the U55C design generated on both faces and `--sim-queries` test queries simulated on each
  (g++ C simulation; Verilator, compiled harness): queries differing from the reference model,
  and the RTL's cycles per query against the cycle model's.

    PYTHONPATH=. python benchmarks/datasets.py [--sets builtin:sift-10k,...] [--dims 96,128,...]
        [--n N] [--goal GOAL] [--sim-queries Q] [--work DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from record import command_line, write_result

from fanns.boards import load_board
from fanns.datasets import load_dataset
from fanns.datasets.dataset import Dataset
from fanns.datasets.synthetic import clustered
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.flow.design_fuzz import verify_point
from fanns.flow.ivfpq_inputs import index_record
from fanns.index.goals import parse_goal
from fanns.model.ivfpq import report, timing
from fanns.model.ivfpq.workload import workloads_from_explore

BUILTIN_SETS = ("builtin:sift-10k", "builtin:deep-10k", "builtin:sift", "builtin:text-384")
DIMS = (96, 128, 384, 768, 784, 1024, 1536)
BOARDS = ("u55c", "zcu104")
"""The boards of the DSE, each at the clock `fanns.model.ivfpq.timing.run` resolves (its sourced
default, lowered to the design's RTL estimate when that is below it). Rows recorded before
2026-12-06 ran the U55C at 300 MHz, the platform's maximum kernel clock."""
UTIL = 0.6
QUERIES = 1000


def synthetic(d: int, n: int, work: Path) -> Dataset:
    base, queries = clustered(n, QUERIES, d, seed=d)
    return Dataset(
        name=f"synthetic-{d}d",
        base=base,
        queries=queries,
        metric="l2",
        cache_dir=work / "cache" / f"synthetic-{d}d-{n}",
        description=f"synthetic clustered, {n} x {d}",
    )


def run_set(ds: Dataset, goal_text: str, work: Path, sim_queries: int) -> dict:
    goal = parse_goal(goal_text)
    folder = work / ds.name / "explore"
    start = time.perf_counter()
    explorer = IvfPqExplorer(ds, ExploreConfig(goals=[goal], seed=0), folder)
    explore = explorer.run()
    explore_s = time.perf_counter() - start
    workloads, unreachable = workloads_from_explore(folder, goal)
    row = {"set": ds.name, "n": int(ds.base.shape[0]), "d": int(ds.base.shape[1]), "explore_s": round(explore_s, 1)}
    row["indexes"], row["indexes_reused"] = len(explorer.grid()), len(explorer.reused)
    outcomes = {b: timing.run(workloads, load_board(b), goal.text, None, UTIL, 1, unreachable) for b in BOARDS}
    for b, outcome in outcomes.items():
        row[f"{b}_qps"] = round(outcome.best.qps, 1) if outcome.best else None
        row[f"{b}_clock"] = outcome.clock.to_dict()
        if outcome.best is None:
            row[f"{b}_why"] = " / ".join(outcome.explain)
    best = outcomes["u55c"].best
    if best is None:
        return row
    rec = report.design_record(best, outcomes["u55c"].budget)
    row["design"] = {
        "index": rec["index"],
        "nprobe": rec["nprobe"],
        "k": rec["k"],
        "bottleneck": rec["bottleneck"],
        "pes": {s: v.get("pes") for s, v in rec["stages"].items() if v.get("pes")},
        "utilisation_with_shell": rec["utilisation_with_shell"],
        "hw_recall": rec["hw_recall"],
    }
    design = report.to_design(best, outcomes["u55c"], None)
    cpu = index_record(explore, folder, design)["goals"][goal.text]["cpu"]
    row["cpu_qps"] = {"1": cpu["1"]["qps"], "all": cpu["all"]["qps"], "threads_all": cpu["all"]["threads"]}
    row["cpu_iqr"] = {t: [cpu[t]["q1"], cpu[t]["q3"]] for t in ("1", "all")}
    row["fpga_over_cpu"] = {t: round(best.qps / q, 2) for t, q in (("1", cpu["1"]["qps"]), ("all", cpu["all"]["qps"]))}
    sims = verify_point(
        best, outcomes["u55c"], ds, explore, folder, work / ds.name / "project", work / "builds", sim_queries
    )
    row["sim"] = {
        face: {
            "queries": s["queries"],
            "mismatched_queries": s["mismatched_queries"],
            **({"cycle_error_pct": s["cycle_error_pct"]} if "cycle_error_pct" in s else {}),
        }
        for face, s in sims.items()
    }
    return row


def _iqr(row: dict, threads: str) -> str:
    """The quartiles of a CPU figure's windows, where the run recorded them (rows before 2026-12)."""
    if "cpu_iqr" not in row:
        return ""
    q1, q3 = row["cpu_iqr"][threads]
    return f" (IQR {q1:,.0f}-{q3:,.0f})"


def describe(row: dict) -> str:
    """A set's figures in one line, after its name and shape."""
    explored = f"explore {row['explore_s']:.1f} s"
    if row.get("indexes_reused"):
        explored += f" ({row['indexes_reused']} of {row['indexes']} trained indexes reused from an earlier run's cache)"
    if "design" not in row:
        return f"{explored}; no U55C design: {row.get('u55c_why', '')}"
    d, cpu, sim = row["design"], row["cpu_qps"], row["sim"]
    util = d["utilisation_with_shell"]
    zcu = f"{row['zcu104_qps']:,.0f}" if row["zcu104_qps"] else "none"
    mhz = {b: f" at {row[f'{b}_clock']['mhz']:g} MHz" if f"{b}_clock" in row else "" for b in BOARDS}
    ratio = row["fpga_over_cpu"]
    rtl = sim["rtl"]
    return (
        f"{explored}; {d['index']} nprobe {d['nprobe']} ({d['bottleneck']}-bound; LUT {100 * util['lut']:.0f} %, "
        f"BRAM {100 * util['bram18']:.0f} %, URAM {100 * util['uram']:.0f} % with the shell); "
        f"U55C {row['u55c_qps']:,.0f} QPS{mhz['u55c']}, ZCU104 {zcu}{mhz['zcu104']}; "
        f"faiss-cpu {cpu['1']:,.0f}{_iqr(row, '1')} (1 thread) / "
        f"{cpu['all']:,.0f}{_iqr(row, 'all')} ({cpu['threads_all']} threads) "
        f"-> {ratio['1']:.1f}x / {ratio['all']:.1f}x; "
        f"HLS {sim['hls']['mismatched_queries']} of {sim['hls']['queries']} queries differ, "
        f"RTL {rtl['mismatched_queries']} of {rtl['queries']}, cycles {rtl['cycle_error_pct']:+.2f} % vs the model"
    )


def line(row: dict) -> str:
    return f"{row['set']:<18} {row['n']:>9,d} x {row['d']:<5d} {describe(row)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(BUILTIN_SETS), help="built-in sets, comma-separated ('' for none)")
    ap.add_argument("--dims", default=",".join(map(str, DIMS)), help="synthetic dimensions ('' for none)")
    ap.add_argument("--n", type=int, default=100_000, help="vectors of each synthetic set (default 100,000)")
    ap.add_argument("--goal", default="R@10=0.6", help="recall goal (default R@10=0.6)")
    ap.add_argument("--sim-queries", type=int, default=8, help="test queries simulated per face (default 8)")
    ap.add_argument("--work", default="work/datasets", help="folder for explorations, projects and builds")
    ap.add_argument("--json", help="record the figures as JSON here")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    rows = []
    sets = [s for s in args.sets.split(",") if s]
    dims = [int(d) for d in args.dims.split(",") if d]
    for spec in [*sets, *dims]:
        ds = load_dataset(spec) if isinstance(spec, str) else synthetic(spec, args.n, work)
        rows.append(run_set(ds, args.goal, work, args.sim_queries))
        print(line(rows[-1]), flush=True)
    figures = {"goal": args.goal, "util": UTIL, "boards": list(BOARDS), "rows": rows}
    write_result(args.json, "datasets", command_line(), figures)
    if not args.json:
        print(json.dumps(figures, indent=1))


def readme_row(figures: dict) -> list[tuple[str, str]]:
    """The README figures rows of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    out = []
    for row in figures["rows"]:
        figure = f"end to end on {row['set']} ({row['n']:,} x {row['d']}, {figures['goal']})"
        out.append((figure, describe(row)))
    return out


if __name__ == "__main__":
    main()
