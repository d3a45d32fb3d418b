"""`fanns generate DATASET --recall R@10=0.8 --board u55c --out PROJECT`: from a dataset to a
verified accelerator project in one command.

Why one command: explore -> DSE -> code generation -> simulation is what every user runs first,
and each step needs the previous one's outputs in the right form. The steps are the existing
ones, called through their APIs: the exploration is reused when an earlier one answers
(`fanns.explore.ivfpq_reuse`), the DSE is `fanns.model.ivfpq.dse` exactly as `fanns dse` runs it (its
outcome reused when the same inputs recur: `fanns.model.ivfpq.dse_cache`), the faces
are rendered by the HLS and RTL generators (`fanns.codegen.ivfpq.project` lays them out), and `--sim`
runs a sample of the test queries through the existing simulators (`fanns.flow.ivfpq_project_sim`)
inside the staged folder, so the project appears — complete, with its simulation result in
report/ and the README — or not at all (`fanns.outputs.staged_folder`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from rich.console import Console

from fanns import __version__
from fanns.boards import Clock, load_board
from fanns.codegen.block_design import PLAN_FILE
from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.project import layout
from fanns.codegen.platform import vitis_platform
from fanns.codegen.project_layout import MARKER, parse_backends
from fanns.datasets.cache import cache_root
from fanns.datasets.loader import load_dataset
from fanns.errors import FannsError
from fanns.explore.ivfpq_reuse import config_from_args, ensure_exploration, index_names
from fanns.flow.error_context import note_design
from fanns.flow.ivfpq_inputs import index_record, load_index
from fanns.flow.ivfpq_project_sim import RUN_ONLY, SIMULATOR_NAMES, SIMULATORS
from fanns.index.goals import RecallGoal, goal_entry
from fanns.index.ivfpq import host_vectors
from fanns.model.cpu_baseline import basis_label, basis_text, cpu_basis, cpu_text, selection_qps
from fanns.model.ivfpq import dse_cache, host_cache, host_mix, report
from fanns.model.ivfpq.no_fit import no_design_hint
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.outputs import check_destination, staged_folder
from fanns.progress import status, step
from fanns.templating import environment

WHAT = "generated project"
STEPS = 5


def _cpu_record(rec: dict, g: dict) -> dict:
    """One explored (index, goal)'s CPU figures: `qps`, the figure a ratio divides by, and its
    basis (`fanns.model.cpu_baseline.cpu_basis`: the all-cores median, or on a loaded machine
    the cores x one thread's fastest search), with both measurements and their spread when the
    exploration recorded them."""
    cpu = g.get("cpu") or {}
    if "all" in cpu:
        basis = cpu_basis(cpu)
    else:  # an exploration that recorded one all-cores figure and nothing to judge its load by
        threads = g.get("cpu_threads") or 1
        basis = {"qps": g["cpu_qps"], "q1": None, "q3": None, "threads": threads, "loaded": False, "reasons": []}
        basis["basis"] = "one-thread" if threads == 1 else "all-cores"
    return {
        "index": rec["index"],
        "nprobe": g["nprobe"],
        "recall": g["recall"],
        "qps": basis["qps"],
        "threads": basis["threads"],
        "basis": {**basis, "text": basis_text(basis)},
        "chosen_by": selection_qps(g),
        "spread": cpu.get("all"),
        "one_thread": cpu.get("1"),
    }


def cpu_baseline(explore: dict, goal: RecallGoal, index: str | None = None) -> dict | None:
    """faiss-cpu's best explored index for the goal, chosen by the figure load does not move
    (`selection_qps`: one thread's fastest search on its CPU clock), with the figure a ratio
    divides by (`_cpu_record`); with `index`, that index's figures at its own nprobe for the goal."""
    best = None
    for rec in explore["indexes"]:
        g = goal_entry(rec.get("goals"), goal)
        if g and g.get("reached") and g.get("cpu_qps") is not None:
            if index is not None and rec["index"] != index:
                continue
            cand = _cpu_record(rec, g)
            if best is None or cand["chosen_by"] > best["chosen_by"]:
                best = cand
    return best


def design_summary(rec: dict) -> dict:
    """The parts of the DSE's record of the chosen design a reader of the summary needs."""
    keep = (
        "index",
        "nlist",
        "m",
        "opq",
        "nprobe",
        "k",
        "recall",
        "hw_recall",
        "recall_interval",
        "hw_recall_interval",
        "selection_recall",
        "selection_bound",
        "qps",
        "cycles_per_query",
        "bottleneck",
        "latency_us",
        "resources",
        "utilisation_with_shell",
        "channels",
    )
    stages = {
        name: {
            k: v
            for k, v in st.items()
            if k
            in (
                "arch",
                "pes",
                "lanes",
                "store",
                "channels",
                "memory",
                "streams",
                "s",
                "double_buffer",
                "cycles",
                "lut_pct",
            )
        }
        for name, st in rec["stages"].items()
    }
    out = {**{k: rec[k] for k in keep}, "stages": stages}
    if rec.get("host_tier"):  # lists in host memory: its QPS is the one with prefetch (host_mix.RANK_RULE)
        out |= {"qps": rec["rank_qps"], "qps_lists_in_hbm": rec["qps"], "host_tier": rec["host_tier"]}
    return out


def readme(summary: dict) -> bytes:
    return environment("project", shared=["hls_common"]).get_template("README.md.j2").render(s=summary).encode()


def _json(data: dict) -> bytes:
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()


def generate_command(args: argparse.Namespace) -> int:
    """`fanns generate` of an IVF-PQ design (options: `fanns.flow.parsers.generate`, checked by
    `fanns.flow.generate_cli`)."""
    out = Path(args.out)
    check_destination(out, args.force, MARKER, WHAT)
    goal = args.recall
    backends = parse_backends(args.backend)
    board = load_board(args.board)
    if args.platform:
        vitis_platform(board, args.platform)
    console = Console(width=None if sys.stdout.isatty() else 200)

    step(1, STEPS, "exploration", f"exploration of {args.dataset} for {goal.text}")
    ds = load_dataset(args.dataset)
    cfg = config_from_args(args, [goal])
    folder, explore, reused = ensure_exploration(ds, cfg, Path(args.explore_dir) if args.explore_dir else None)

    given = None if args.clock is None else Clock.user(args.clock)
    target = f"on {board.name} at {(given or board.clock).short()}, {100 * args.util:.0f}% cap"
    step(2, STEPS, "design-space exploration", f"design-space exploration {target}")
    workloads, unreachable = workloads_from_explore(folder, goal, index_names(explore))
    outcome, kept = dse_cache.run(
        workloads, board, goal.text, given, args.util, args.top, unreachable, llm_ms=args.llm_ms
    )
    if kept:
        status("reusing the design-space exploration of an earlier run (same workloads, board, goal and options)")
    if outcome.best is None:
        raise FannsError("\n  ".join(outcome.explain), hint=no_design_hint(bool(outcome.workloads)))
    design = report.to_design(outcome.best, outcome, out.parent.resolve() / out.name)
    if outcome.host_tier:
        status(f"host-memory design: {host_cache.choice_text(outcome.host_tier)}")
    for line in host_mix.lines(outcome):
        status(line)
    dse_record = report.outcome_record(outcome)
    note_design(design)

    code = f"code generation: {', '.join(backends)} for {design.index.factory}, nprobe {design.nprobe}"
    step(3, STEPS, "code generation", code)
    rec = index_record(explore, folder, design)
    data = load_index(folder, rec, ds.metric)
    nq = min(args.test_queries, ds.nq)
    test = TestQueries(
        queries=host_vectors(np.asarray(ds.queries[:nq]), ds.metric), groundtruth=ds.groundtruth(design.k)[:nq]
    )
    files = layout(design, data, test, backends, platform=args.platform)

    summary = {
        "generator": f"fanns {__version__} generate",
        "dataset": {k: explore["dataset"][k] for k in ("name", "n", "d", "metric") if k in explore["dataset"]},
        "goal": goal.text,
        "recall_split": explore["recall_split"],
        "board": board.name,
        "clock_mhz": outcome.clock_mhz,
        "clock": outcome.clock.to_dict(),
        "clock_text": outcome.clock.describe(),
        "rtl_timing_text": outcome.timing.describe(),
        "util": args.util,
        "design": design_summary(dse_record["best"]),
        "cpu": cpu_baseline(explore, goal),
        "cpu_same": cpu_baseline(explore, goal, design.index.factory),
        "faces": list(files.faces()),
        "platform": args.platform or board.platform,  # the Vitis platform both faces link for (None: no Alveo road)
        "driver": files.driver_face(),
        "zynq": json.loads(files.files[f"hls/{PLAN_FILE}"]) if f"hls/{PLAN_FILE}" in files.files else None,
        "test_queries": nq,
        "simulation": [],
    }
    cpu, same = summary["cpu"], summary["cpu_same"]
    summary["speedup"] = round(summary["design"]["qps"] / cpu["qps"], 2) if cpu else None
    summary["speedup_same"] = round(summary["design"]["qps"] / same["qps"], 2) if same else None
    sims = []
    with staged_folder(out, args.force, MARKER, WHAT) as tmp:
        files.write(tmp)
        if args.sim:
            build_root = Path(args.build_dir) if args.build_dir else cache_root() / "sim-builds"
            for face in files.faces():
                sim = f"simulation of {args.sim_queries} test queries on the {face} face ({SIMULATOR_NAMES[face]})"
                step(4, STEPS, f"simulation ({face} face)", sim)
                sims.append(SIMULATORS[face](tmp / face, args.sim_queries, build_root))
        else:
            skipped = "simulation skipped (pass --sim to check the generated faces against the reference model)"
            step(4, STEPS, "simulation", skipped)
        summary["simulation"] = [{k: v for k, v in s.items() if k not in RUN_ONLY} for s in sims]
        step(5, STEPS, "report", f"report and README into {out}")
        extra = {
            "report/dse.json": _json(dse_record),
            "report/summary.json": _json(summary),
            "README.md": readme(summary),
            MARKER: _json(
                {"generator": summary["generator"], "faces": summary["faces"], "goal": goal.text, "board": board.name}
            ),
        }
        for rel, content in extra.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(content)
    print_summary(summary, sims, outcome, out, folder, reused, console)
    return 1 if any(s["mismatched_queries"] for s in sims) else 0


def promised(recall: float, interval: list[float] | None) -> str:
    """A held-out recall with its 95 % bootstrap interval, as the summary and README print it."""
    return f"{recall:.3f}" if interval is None else f"{recall:.3f} (95 % CI {interval[0]:.3f}-{interval[1]:.3f})"


def print_summary(summary: dict, sims: list[dict], outcome, out: Path, folder: Path, reused: bool, console) -> None:

    d = summary["design"]
    report.print_table(outcome, console)
    say = lambda text: console.print(text, highlight=False)  # noqa: E731
    say(
        f"chosen: {d['index']} (nlist {d['nlist']}, m {d['m']}{', OPQ' if d['opq'] else ''}), "
        f"nprobe {d['nprobe']}, K {d['k']}: {outcome.best.workload.goal.name} on held-out queries "
        f"{promised(d['recall'], d.get('recall_interval'))} (faiss), "
        f"{promised(d['hw_recall'], d.get('hw_recall_interval'))} (hardware-faithful)"
    )
    split = summary["recall_split"]
    if d.get("selection_bound") is not None:
        say(
            f"recall promise: nprobe {d['nprobe']} is the smallest where the {split['selection_queries']} selection "
            f"queries' {split['promise_level']:.1%} lower confidence bound ({d['selection_bound']:.3f}, training "
            f"spread included) and the {split['holdout_queries']} held-out queries reach {summary['goal']}: it "
            f"falls below the goal on new queries at most {1 - split['promise_level']:.1%} of the time"
        )
    say(
        "design per stage: "
        + "; ".join(_stage_text(name, st) for name, st in d["stages"].items() if st["arch"] != "none")
        + (f"; sub-vectors padded to {d['dsub_hw']} elements in hardware" if d.get("dsub_hw") else "")
    )
    util = d["utilisation_with_shell"]
    say(
        f"resources (shell included, {summary['board']}): "
        + ", ".join(f"{k.upper()} {100 * v:.1f}%" for k, v in util.items())
    )
    say(
        f"predicted: {d['qps']:,.0f} QPS at {summary['clock_mhz']:g} MHz "
        + (
            f"with prefetch, the lists in host memory ({d['qps_lists_in_hbm']:,.0f} QPS were they in HBM: "
            if "qps_lists_in_hbm" in d
            else "("
        )
        + f"bottleneck {d['bottleneck']}), latency {d['latency_us']:.1f} us per query"
        + (" with prefetch, once the LLM ends" if "qps_lists_in_hbm" in d else "")
    )
    for line in report.clock_lines(outcome):
        say(line)
    cpu, same = summary["cpu"], summary.get("cpu_same")
    one_index = bool(cpu and same) and (cpu["index"], cpu["nprobe"]) == (same["index"], same["nprobe"])
    if same and not one_index:
        say(
            f"CPU at the design's index (faiss-cpu, measured here, medians): {same['index']} nprobe "
            f"{same['nprobe']}: {cpu_text(same, d['qps'])}"
        )
    if cpu:
        say(
            "CPU baseline, best CPU index for the goal (faiss-cpu, measured here, medians; the index chosen by its "
            "fastest 1-thread search, which other load does not move"
            + ("; also the design's index" if one_index else "")
            + f"): {cpu['index']} nprobe {cpu['nprobe']}: {cpu_text(cpu, d['qps'])}"
        )
        say(f"headline: FPGA / CPU = {summary['speedup']:.1f}x, against {basis_label(cpu['basis'])} (the basis above)")
    for s in sims:
        line = (
            f"simulation ({s['simulator']}): {s['queries']} queries, {s['checked_keys']} result keys checked, "
            f"{s['mismatched_queries']} queries differ from the reference model; "
            + ", ".join(
                f"{m} {r['simulated']:.3f} (reference model {r['reference']:.3f})" for m, r in s["recall"].items()
            )
        )
        if "cycles_per_query" in s:
            line += (
                f"; {s['cycles_per_query']:,.1f} cycles/query measured vs "
                f"{s['predicted_cycles_per_query']:,.1f} predicted ({s['cycle_error_pct']:+.2f}%)"
            )
        say(
            line
            + "; "
            + ", ".join(f"{k} {v:.0f} s" for k, v in s["seconds"].items())
            + (f" (model {s['model']})" if "model" in s else "")
        )
    say(f"exploration: {folder} ({'reused' if reused else 'new'})")
    say(
        f"wrote {out}/: README.md, design.yaml, "
        + ", ".join(f"{f}/" for f in summary["faces"])
        + ", data/, report/"
        + (", driver/" if summary["driver"] else " (no driver/: see README.md)")
    )


def _pes(n: int) -> str:
    return f"{n} PE" + ("s" if n != 1 else "")


def _stage_text(name: str, st: dict) -> str:
    if name in ("sel_cells", "sel_k"):
        return f"{name} {st['arch'].upper()} x{st['streams']}"
    if name == "pq_dist":
        return f"{name} {_pes(st['pes'])} on {st['channels']} {st['memory']} channel(s)"
    if name == "opq":
        return f"{name} {st.get('lanes', '')} lanes"
    return f"{name} {_pes(st['pes'])} x {st['lanes']} lanes ({st['store']})"
