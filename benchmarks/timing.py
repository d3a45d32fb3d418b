"""RTL timing estimates: of the demo design and the README rows' designs, and of the model against a router.

Two parts (docs/timing.md):

--designs: the designs. For the demo (`fanns generate builtin:sift-10k --recall 1-R@10=0.8 --board
u55c --nlist 32,64 --queries 200`, and the same on zcu104) and for each `--sets` dataset (the
README rows: `benchmarks/datasets.py`'s exploration, goal R@10=0.6), the DSE at the clock fanns
resolves (`fanns.model.ivfpq.timing.run`) and the design's RTL timing estimate: the clock and
where it came from, the estimate and what limits it, every PE's register-to-register delay (its
timing table's), the reset fan-out and the SLR crossings. With --exact, every distinct PE of the
demo designs is synthesised again at its own parameters and walked, against the table's figure
(the tables fit calibration points; these are other points).

--ecp5: the model against real routed timing. Each PE of `fanns.tools.nextpnr.ECP5_PES` is
synthesised for ECP5 (yosys synth_ecp5), placed and routed by nextpnr-ecp5 (out of context,
LFE5U-85F, seed 1), and its netlist walked with the ECP5 delay model: the model's Fmax against
nextpnr's. The routing constants are fitted on the "fit" PEs (`fanns.tools.nextpnr.fit_routing`,
recorded in `fanns.tools.delay_models.ECP5_ROUTE`); the "check" PEs are held out.

    PYTHONPATH=. python benchmarks/timing.py --designs [--sets builtin:deep,...] [--exact] [--work DIR] [--json PATH]
    PYTHONPATH=. python benchmarks/timing.py --ecp5 [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from record import command_line, write_result

from fanns.boards import load_board
from fanns.datasets import load_dataset
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.index.goals import parse_goal
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq import timing
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.pe import get_pe, registry
from fanns.tools.delay_models import ECP5, ECP5_ROUTE, MODELS
from fanns.tools.nextpnr import ECP5_PES, ecp5_netlist, fit_routing, place_and_route
from fanns.tools.timing import analyze, synth_netlist

DEMO = ("builtin:sift-10k", "1-R@10=0.8", [32, 64], 200)
"""The demo's dataset, goal, nlists and queries (the Makefile's `make demo`)."""
ROW_GOAL = "R@10=0.6"
"""The README rows' goal (`benchmarks/datasets.py`)."""
BOARDS = ("u55c", "zcu104")


def explore(spec: str, goal_text: str, nlists: list[int] | None, queries: int | None, work: Path):
    ds = load_dataset(spec)
    goal = parse_goal(goal_text)
    folder = work / spec.replace(":", "_") / goal.text.replace("=", "_")
    IvfPqExplorer(ds, ExploreConfig(goals=[goal], nlists=nlists, max_queries=queries, seed=0), folder).run()
    return workloads_from_explore(folder, goal), goal


def design_rows(spec: str, goal_text: str, nlists, queries, work: Path, exact: bool) -> list[dict]:
    (workloads, unreachable), goal = explore(spec, goal_text, nlists, queries, work)
    rows = []
    for name in BOARDS:
        board = load_board(name)
        outcome = timing.run(workloads, board, goal.text, None, 0.6, 1, unreachable)
        best, est = outcome.best, outcome.timing
        if best is None:
            rows.append({"set": spec, "goal": goal.text, "board": name, "design": None})
            continue
        row = {
            "set": spec,
            "goal": goal.text,
            "board": name,
            "design": f"{best.workload.label()}, bottleneck {best.bottleneck}",
            "qps": round(best.qps, 1),
            "clock": outcome.clock.to_dict(),
            "rtl": est.to_dict(),
        }
        if exact:
            row["exact"] = exact_pes(best.units, board.family)
        rows.append(row)
        print(describe_design(row), flush=True)
    return rows


def exact_pes(units: list[stage_model.Unit], family: str) -> list[dict]:
    """Every distinct PE of a design synthesised at its own parameters: walked vs the table."""
    out, seen = [], set()
    for u in units:
        if u.pe is None or u.pe in seen:
            continue
        seen.add(u.pe)
        table = u.pe.rtl_timing(family)
        t = analyze(synth_netlist(u.pe.verilog("top"), "top", family), "top", MODELS[family])
        out.append(
            {
                "pe": f"{u.stage}.{u.label}",
                "exact_mhz": round(t.fmax_mhz, 1),
                "table_mhz": None if table is None else round(table.fmax_mhz, 1),
                "table_basis": None if table is None else table.basis,
            }
        )
    return out


def describe_design(row: dict) -> str:
    if row["design"] is None:
        return f"{row['set']} {row['goal']} on {row['board']}: no design"
    rtl, clock = row["rtl"], row["clock"]
    lim = rtl["limit"]
    pes = [e for e in rtl["elements"] if e["kind"] == "pe"]
    slowest_pe = pes[0] if pes else None
    text = (
        f"{row['set']} {row['goal']} on {row['board']}: {row['design']}: {row['qps']:,.0f} QPS at {clock['mhz']:g} MHz "
        f"({clock['origin']}); RTL estimate {rtl['fmax_mhz']:,.0f} MHz ({rtl['family']}), limited by "
        f"{lim['kind']} {lim['label']} ({lim['detail']})"
    )
    if slowest_pe and slowest_pe != lim:
        text += f"; slowest PE {slowest_pe['label']} {slowest_pe['fmax_mhz']:,.0f} MHz ({slowest_pe['detail']})"
    reset = next(e for e in rtl["elements"] if e["kind"] == "reset")
    slr = [e for e in rtl["elements"] if e["kind"] == "slr crossing"]
    text += f"; reset {reset['fmax_mhz']:,.0f} MHz ({reset['detail']}); {len(slr)} SLR crossing(s)"
    if rtl["not_covered"]:
        text += f"; not covered: {', '.join(rtl['not_covered'])}"
    for e in row.get("exact", []):
        text += f"\n    {e['pe']}: exact {e['exact_mhz']:,.0f} MHz, table {e['table_mhz']} ({e['table_basis']})"
    return text


def ecp5_rows() -> dict:
    rows = []
    for name, point, role in ECP5_PES:
        params = registry()[name].calibration_points[point]
        netlist = ecp5_netlist(name, get_pe(name)(**params).verilog("top"))
        routed = place_and_route(netlist)
        model = analyze(netlist, "top", ECP5)
        rows.append(
            {
                "pe": name,
                "point": point,
                "role": role,
                "nextpnr_mhz": routed.fmax_mhz,
                "model_mhz": round(model.fmax_mhz, 1),
                "ratio": round(model.fmax_mhz / routed.fmax_mhz, 3),
                "model_path": list(model.path),
                "_netlist": netlist,
            }
        )
        print(
            f"{name}[{point}] ({role}): nextpnr {routed.fmax_mhz:.1f} MHz, model {model.fmax_mhz:.1f} MHz", flush=True
        )
    fit = [r for r in rows if r["role"] == "fit"]
    a, b, rms = fit_routing([r["_netlist"] for r in fit], [r["nextpnr_mhz"] for r in fit])
    for r in rows:
        del r["_netlist"]
    check = [abs(math.log(r["ratio"])) for r in rows if r["role"] == "check"]
    return {
        "rows": rows,
        "refit": {"route_ns": a, "route_per_doubling_ns": b, "rms_log_error": round(rms, 4)},
        "recorded": {"route_ns": ECP5_ROUTE[0], "route_per_doubling_ns": ECP5_ROUTE[1]},
        "check_max_log_error": round(max(check), 4) if check else None,
        "check_rms_log_error": round(math.sqrt(sum(e * e for e in check) / len(check)), 4) if check else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--designs", action="store_true", help="estimate the demo design and --sets designs")
    ap.add_argument("--ecp5", action="store_true", help="the model against nextpnr-ecp5's routed Fmax")
    ap.add_argument("--sets", default="", help="README-row datasets, comma-separated (goal R@10=0.6)")
    ap.add_argument("--exact", action="store_true", help="also synthesise the demo designs' PEs at their parameters")
    ap.add_argument("--work", default="work/timing", help="folder for explorations")
    ap.add_argument("--json", help="record the figures as JSON here")
    args = ap.parse_args()
    if args.designs == args.ecp5:
        ap.error("give one of --designs and --ecp5")
    if args.ecp5:
        figures = {"part": "ecp5", **ecp5_rows()}
    else:
        work = Path(args.work).resolve()
        spec, goal, nlists, queries = DEMO
        rows = design_rows(spec, goal, nlists, queries, work, args.exact)
        for s in (s for s in args.sets.split(",") if s):
            rows += design_rows(s, ROW_GOAL, None, None, work, False)
        figures = {"part": "designs", "rows": rows}
    write_result(args.json, "timing", command_line(), figures)
    if not args.json:
        print(json.dumps(figures, indent=1))


def readme_row(figures: dict) -> list[tuple[str, str]]:
    """The README figures rows of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    if figures["part"] == "ecp5":
        rows = figures["rows"]
        each = "; ".join(f"{r['pe']} {r['nextpnr_mhz']:.0f} vs {r['model_mhz']:.0f} ({r['role']})" for r in rows)
        refit = figures["refit"]
        return [
            (
                "RTL timing model against real routing: PEs synthesised for ECP5 (yosys synth_ecp5), placed and "
                "routed by nextpnr-ecp5 (LFE5U-85F, out of context); nextpnr's Fmax vs the model's (MHz), routing "
                "constants fitted on the 'fit' PEs, 'check' PEs held out",
                f"{each}; held-out error: RMS {100 * (math.exp(figures['check_rms_log_error']) - 1):.0f} %, worst "
                f"{100 * (math.exp(figures['check_max_log_error']) - 1):.0f} %; refit on this run: "
                f"{refit['route_ns']} ns + {refit['route_per_doubling_ns']} ns per fan-out doubling",
            )
        ]
    out = []
    for r in figures["rows"]:
        if r["design"] is None:
            continue
        out.append((f"RTL timing estimate: {r['set']}, {r['goal']}, {r['board']}", describe_design(r).split("\n")[0]))
    return out


if __name__ == "__main__":
    main()
