"""`fanns generate DATASET --graph hnsw|nsg --recall R@k=x --board B --out PROJECT [--sim]`: from
a dataset to a verified graph-search (Falcon / DST) accelerator project in one command.

The steps are the graph pieces, called through their APIs: the graph is built or taken from the
dataset's cache (`fanns.explore.graph.load_or_build`, the graph `fanns explore --graph` and
`fanns dse --graph` use); the graph DSE chooses the design as `fanns dse --graph` does
(`fanns.explore.graph_choice.design_for_goal`) on a selection part of the queries, and the
chosen design's recall is measured on the held-out rest (`fanns.index.holdout`: the same split
and bootstrap interval as the IVF-PQ explorer's); both faces are rendered by the graph
generators (`fanns.codegen.graph.hls`, `fanns.codegen.graph.rtl`) into the layout of the IVF-PQ
projects (`fanns.codegen.project_layout`: hls/, rtl/, one copy of data/), so `fanns sim PROJECT`
and `fanns run PROJECT` open the face they run; `--sim` runs a sample of the test queries through
the graph simulations (`fanns.flow.graph_hls_sim`, `fanns.flow.graph_sim`) inside the staged
folder, so the project appears — complete, with its simulation result in report/ and the README
— or not at all (`fanns.outputs.staged_folder`).

The graph explorer's (mg, mc) sweep tables are not run: the DSE evaluates (mg, mc) itself for
every design it considers. The CPU baseline is faiss's HNSW at the chosen design's held-out recall
(`fanns.explore.graph_cpu`), measured here as the IVF-PQ baseline is, with the FPGA / CPU ratio
against the figure a loaded machine cannot inflate.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from rich.console import Console

from fanns import __version__
from fanns.boards import Board, Clock, load_board
from fanns.codegen.graph import hls as graph_hls
from fanns.codegen.graph import rtl as graph_rtl
from fanns.codegen.platform import vitis_platform
from fanns.codegen.project_layout import MARKER, ProjectLayout, parse_backends
from fanns.datasets.cache import cache_root
from fanns.datasets.loader import load_dataset
from fanns.design.graph import GraphDesign
from fanns.errors import FannsError
from fanns.explore.graph import graph_cache_path, load_or_build, prepare_vectors
from fanns.explore.graph_choice import ChosenGraphDesign, check_graph_goal, design_for_goal, point_text, recall_text
from fanns.explore.graph_cpu import hnsw_baseline
from fanns.flow.error_context import note_design
from fanns.flow.graph_hls_sim import simulate_graph_csim
from fanns.flow.graph_sim import simulate_graph_rtl
from fanns.index.graph import GraphImage
from fanns.index.holdout import split_queries
from fanns.model.cpu_baseline import cpu_text
from fanns.outputs import check_destination, staged_folder
from fanns.progress import status, step
from fanns.templating import environment

WHAT = "generated project"
STEPS = 6
LATENCY = 100
"""Memory latency (cycles) of the RTL simulation: the cycle model's, as `fanns sim`'s default."""
SIMULATOR_NAMES = {"hls": "g++ C simulation", "rtl": "Verilator"}


def project_files(
    design: GraphDesign, graph: GraphImage, test_fx: np.ndarray, test_gt: np.ndarray, faces, platform
) -> ProjectLayout:
    """Both faces' projects (without README, report and marker) in the shared layout."""
    files = ProjectLayout()
    if "hls" in faces:
        files.add_face("hls", graph_hls.render(design, graph, test_fx, test_gt, platform=platform)[0])
    if "rtl" in faces:
        files.add_face("rtl", graph_rtl.render(design, graph, test_fx, test_gt, platform=platform)[0])
    files.files["design.yaml"] = design.to_yaml().encode()
    return files


def _design_summary(chosen: ChosenGraphDesign) -> dict:
    b, space, design = chosen.result.best, chosen.space, chosen.result.design
    return {
        **{k: v for k, v in b.to_dict().items() if k not in ("fits", "recall")},
        "bloom_h": space.bloom_h,
        "k": design.runtime.k,
        "text": point_text(b, space),
    }


def generate_graph_command(args: argparse.Namespace) -> int:
    """`fanns generate --graph` (options: `fanns.flow.parsers.generate`, checked by `fanns.flow.generate_cli`)."""
    out = Path(args.out)
    check_destination(out, args.force, MARKER, WHAT)
    goal = args.recall
    check_graph_goal(goal)
    faces = parse_backends(args.backend)
    board = load_board(args.board)
    if args.platform:
        vitis_platform(board, args.platform)
    console = Console(width=None if sys.stdout.isatty() else 200)

    shape = f"max degree {args.max_degree}, {args.vec_bits}-bit vectors"
    step(1, STEPS, "graph", f"{args.graph} graph of {args.dataset} ({shape})")
    ds = load_dataset(args.dataset)
    path = graph_cache_path(ds, args.graph, args.max_degree, args.ef_construction, args.vec_bits)
    reused = path.is_file()
    if reused:
        status(f"reusing the {args.graph} graph of an earlier run ({path})")
    graph = load_or_build(ds, args.graph, args.max_degree, args.ef_construction, args.vec_bits)
    nq = min(args.queries or ds.nq, ds.nq)
    if nq < 2:
        raise FannsError(
            f"--queries {args.queries}: choosing the design on some queries and measuring its recall on others "
            "needs at least 2",
            hint="e.g. --queries 200",
        )
    base, queries = prepare_vectors(ds)
    given = None if args.clock is None else Clock.user(args.clock)
    target = f"on {board.name} at {(given or board.clock).short()}, {100 * args.util:.0f}% cap"
    what = f"graph design-space exploration {target}, {len(split_queries(nq, args.seed)[0])} queries"
    step(2, STEPS, "design-space exploration", what)
    chosen_for = design_for_goal(graph, ds, queries[:nq], board, goal, args.objective, given, args.util, args.seed)
    chosen, select = chosen_for.chosen, chosen_for.select
    if chosen.result.best is None:
        raise chosen.no_fit(board, goal, dataset_queries=ds.nq)
    design = chosen.result.design
    note_design(design)

    rt = design.runtime
    m = args.max_degree // 2
    step(
        3, STEPS, "CPU baseline", f"CPU baseline: faiss HNSW{m},Flat at R@{rt.k} {chosen_for.recall:.3f}, measured here"
    )
    held = chosen_for.held
    cpu = hnsw_baseline(
        base,
        queries[:nq],
        held,
        ds.groundtruth(rt.k)[:nq],
        rt.k,
        args.max_degree,
        args.ef_construction,
        chosen_for.recall,
    )

    step(4, STEPS, "code generation", f"code generation: {', '.join(faces)} for l {rt.l}, mg {rt.mg}, mc {rt.mc}")
    nt = min(args.test_queries, ds.nq)
    test_fx = graph.fmt.quantize(queries[:nt])
    files = project_files(design, graph, test_fx, ds.groundtruth(rt.k)[:nt], faces, args.platform)
    summary = _summary(args, ds, graph, board, chosen, reused, files.faces(), nt)
    summary["recall"] = chosen_for.recall_record(args.seed)
    summary["cpu"] = cpu
    summary["speedup"] = round(summary["design"]["qps"] / cpu["qps"], 2)
    sims = []
    with staged_folder(out, args.force, MARKER, WHAT) as tmp:
        files.write(tmp)
        if args.sim:
            build_root = Path(args.build_dir) if args.build_dir else cache_root() / "sim-builds"
            for face in summary["faces"]:
                what = f"simulation of {args.sim_queries} test queries on the {face} face ({SIMULATOR_NAMES[face]})"
                step(5, STEPS, f"simulation ({face} face)", what)
                if face == "hls":
                    sim = simulate_graph_csim(tmp / face, build_root, args.sim_queries, 0, None, console)
                else:
                    sim = simulate_graph_rtl(tmp / face, build_root, args.sim_queries, 0, LATENCY, 0.0, None, console)
                sims.append({"face": face, **sim})
        else:
            skipped = "simulation skipped (pass --sim to check the generated faces against the DST reference)"
            step(5, STEPS, "simulation", skipped)
        summary["simulation"] = sims
        step(6, STEPS, "report", f"report and README into {out}")
        dse = chosen.record(args.graph, goal, args.objective, board, len(select))
        extra = {
            "report/dse.json": _json(dse),
            "report/summary.json": _json(summary),
            "README.md": environment("graph_project").get_template("README.md.j2").render(s=summary).encode(),
            MARKER: _json(
                {"generator": summary["generator"], "faces": summary["faces"], "goal": goal.text, "board": board.name}
            ),
        }
        for rel, content in extra.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(content)
    print_summary(summary, out, console)
    return 0 if all(s["passed"] for s in sims) else 1


def _json(data: dict) -> bytes:
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()


def _summary(
    args: argparse.Namespace,
    ds,
    graph: GraphImage,
    board: Board,
    chosen: ChosenGraphDesign,
    reused: bool,
    faces: list[str],
    test_queries: int,
) -> dict:
    """What the summary, report/summary.json and the README say (the recall and simulation are added later)."""
    build = {k: v for k, v in (graph.build or {}).items() if k == "efConstruction"}
    return {
        "generator": f"fanns {__version__} generate --graph {args.graph}",
        "dataset": {k: v for k, v in ds.summary().items() if k in ("name", "n", "d", "metric")},
        "goal": args.recall.text,
        "objective": args.objective,
        "board": board.name,
        "clock_mhz": chosen.clock.mhz,
        "clock_text": chosen.clock.describe(),
        "rtl_timing_text": None if chosen.estimate is None else chosen.estimate.describe(),
        "util": args.util,
        "graph": {
            "kind": graph.kind,
            "nodes": graph.n,
            "max_degree": graph.max_degree,
            "vec_bits": graph.fmt.vec_bits,
            "entry": graph.entry,
            "reused": reused,
            **build,
        },
        "evaluated": len(chosen.result.points),
        "design": _design_summary(chosen),
        "faces": faces,
        "platform": args.platform or board.platform,
        "test_queries": test_queries,
        "simulation": [],
    }


def sim_text(s: dict) -> str:
    """One face's simulation in words."""
    text = (
        f"simulation ({s['face']} face, {s['simulator']}): {s['queries']} queries, {s['mismatched_queries']} differ "
        "from the DST reference (result keys and hops/visited/checks/groups)"
    )
    if s["recall"] is not None:
        text += f"; R@k {s['recall']:.3f}"
    if "cycles_per_query" in s:
        text += (
            f"; {s['cycles_per_query']:,.1f} cycles/query measured vs {s['predicted_cycles_per_query']:,.1f} by the "
            f"cycle model ({s['cycle_error_pct']:+.2f}%, largest per query {s['max_query_error_pct']:.2f}%)"
        )
    return text + "; " + ", ".join(f"{k} {v:.0f} s" for k, v in s["seconds"].items())


def print_summary(summary: dict, out: Path, console) -> None:
    say = lambda text: console.print(text, highlight=False)  # noqa: E731
    g, d, r = summary["graph"], summary["design"], summary["recall"]
    efc = f", efConstruction {g['efConstruction']}" if "efConstruction" in g else ""
    say(f"evaluated {summary['evaluated']} graph designs on {r['selection_queries']} selection queries")
    say(
        f"chosen: {g['kind'].upper()} graph of {g['nodes']:,} nodes (max degree {g['max_degree']}{efc}, "
        f"{g['vec_bits']}-bit vectors); {d['text']}"
    )
    say(recall_text(r, d["k"]))
    say(
        f"predicted: latency {d['latency_us']:.2f} us per query at batch 1, {d['qps']:,.0f} QPS "
        f"({d['mode']}-query) at {summary['clock_mhz']:g} MHz"
    )
    cpu = summary["cpu"]
    reached = (
        f"R@{d['k']} {cpu['recall']:.3f} on the held-out queries"
        if cpu["reached"]
        else f"R@{d['k']} {cpu['recall']:.3f}, below the design's {cpu['target']:.3f} even at the largest efSearch"
    )
    say(
        f"CPU baseline (faiss {cpu['index']}, efSearch {cpu['efSearch']}: {reached}; measured here, medians): "
        + cpu_text(cpu, d["qps"])
    )
    say(f"clock: {summary['clock_text']}")
    if summary["rtl_timing_text"]:
        say(summary["rtl_timing_text"])
    for s in summary["simulation"]:
        say(sim_text(s))
    say(f"graph: {'reused from the cache' if g['reused'] else 'built and cached'}")
    say(f"wrote {out}/: README.md, design.yaml, " + ", ".join(f"{f}/" for f in summary["faces"]) + ", data/, report/")
