"""`fanns sim PROJECT --backend rtl|csim`: run a generated project's test queries in simulation and
check them against the reference model.

* `rtl`: the project's Verilog under Verilator (`fanns.sim.ivfpq.rtl`; the fast harness unless
  `--harness cocotb`): result keys bit
  for bit, recall, and the measured steady-state cycles per query beside the performance model's
  prediction for the same queries.
* `csim`: the project's HLS kernel in g++ C simulation (`fanns.sim.ivfpq.csim`).

A graph project goes to `fanns.flow.graph_sim` (rtl, `fanns generate-graph-rtl`) or
`fanns.flow.graph_hls_sim` (csim, `fanns generate-graph-hls`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from rich.console import Console

from fanns.choices import DEFAULT_RTL_HARNESS
from fanns.codegen.graph.hls import is_graph_hls_project
from fanns.codegen.graph.rtl import is_graph_project
from fanns.codegen.ivfpq.rtl import TOP as IVFPQ_TOP
from fanns.codegen.project_files import (
    HLS_SOURCES,
    PROJECT_FILE,
    check_sources,
    query_count,
    query_range,
    read_data,
    read_record,
)
from fanns.datasets.cache import cache_root
from fanns.design.ivfpq import IvfPqDesign
from fanns.driver.project import face_folder
from fanns.errors import WHERE, FannsError
from fanns.flow.graph_hls_sim import graph_csim_report
from fanns.flow.graph_sim import graph_rtl_report
from fanns.images.ivfpq import MemoryImages
from fanns.index.recall import recall_at
from fanns.numerics import split_keys
from fanns.sim.ivfpq.csim import search_keys_within
from fanns.sim.ivfpq.rtl import (
    NO_LIMITS,
    Limits,
    RtlProjectSim,
    Run,
    measured_interval,
    test_queries_fx,
)

TIME_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def recall(keys: np.ndarray, groundtruth: np.ndarray) -> float:
    """R@k of result keys (ids in the low 32 bits) against exact neighbours [nq, >= k]."""

    _, ids = split_keys(keys)
    return recall_at(ids.astype(np.int64), groundtruth, keys.shape[1])


def check_project(project: Path, backend: str) -> tuple[dict, IvfPqDesign]:
    """Everything a simulation of `project` reads, checked before any simulator starts (so an
    input error is never reported as the hardware disagreeing with its testbench): the project
    record of the right face, the design, the memory images against their manifest (size and
    sha256) and the test data files against the record's query count."""
    record = read_record(project)
    face, other = ("kernel", "rtl") if backend == "csim" else ("rtl", "kernel")
    if not isinstance(record, dict) or face not in record:
        made_by = "generate-rtl" if other == "rtl" else "generate-hls"
        raise FannsError(
            f"{project} is not a project for --backend {backend} ({PROJECT_FILE} has no {face!r} entry)"
            + (f" (it was written by `fanns {made_by}`)" if isinstance(record, dict) and other in record else ""),
            hint=f"use --backend {'rtl' if backend == 'csim' else 'csim'}, or generate the other face",
        )
    design = IvfPqDesign.load(project / "design.yaml")
    MemoryImages.read(project / "images")
    nq = query_count(project, record)
    try:
        io = record["io"]
        stride = int(io["query_beats"]) * int(io["port_bits"]) // 8
    except (KeyError, TypeError, ValueError):
        raise FannsError(
            f"{project}/{PROJECT_FILE}: incomplete project record", hint="regenerate the project"
        ) from None
    why = f"{nq} test queries, K {design.k}"
    read_data(project, "queries.bin", "u1", (nq, stride), why)
    read_data(project, "groundtruth.bin", "<u4", (nq, design.k), why)
    read_data(project, "reference_keys.bin", "<u8", (nq, design.k), why)
    check_sources(
        project,
        *(("rtl", (f"rtl/{IVFPQ_TOP}.v",)) if backend == "rtl" else ("src", HLS_SOURCES)),
    )
    return record, design


def rtl_report(
    project: Path,
    build_dir: Path,
    queries: int | None,
    first: int,
    latency: int,
    pause: float,
    console,
    limits: Limits = NO_LIMITS,
    harness: str = DEFAULT_RTL_HARNESS,
    trace: Path | None = None,
) -> int:

    record, _ = check_project(project, "rtl")
    nq = query_range(query_count(project, record), queries, first, least=2)  # before any elaboration
    sim = RtlProjectSim(project, build_dir, harness=harness, options=None, trace=trace, queries=nq)
    d = sim.design
    console.print(f"simulator of {project}/rtl/fanns_ivfpq.v: {sim.describe()}", highlight=False)
    start = time.perf_counter()
    built_now = sim.build()
    built = time.perf_counter() - start
    start = time.perf_counter()
    out = sim.run([Run(nq=nq, nprobe=d.nprobe, k=d.k, first=first)], latency=latency, pause=pause, limits=limits)
    ran = time.perf_counter() - start
    run = out["runs"][0]
    gt = np.fromfile(project / "data" / "groundtruth.bin", dtype="<u4").reshape(sim.test_queries, d.k)[
        first : first + nq
    ]
    ref = np.fromfile(project / "data" / "reference_keys.bin", dtype="<u8").reshape(sim.test_queries, d.k)[
        first : first + nq
    ]
    model = sim.predicted_run(first, nq)
    predicted, timings = model.interval, model.timings
    measured = measured_interval(run)
    clock = d.clock_mhz * 1e6
    console.print(
        f"RTL simulation of {d.index.factory}, nprobe {d.nprobe}, K {d.k} on {d.board}: build {built:.0f} s "
        f"({'built' if built_now else 'model reused from the cache'}), "
        f"simulation {ran:.0f} s ({run['sim_cycles']:,} cycles)",
        highlight=False,
    )
    console.print(
        f"queries {first}..{first + nq - 1}: {run['checked_keys']} result keys checked, "
        f"{run['mismatched_queries']} queries differ from the reference model",
        highlight=False,
    )
    console.print(
        f"R@{d.k} = {recall(run['keys'], gt):.6f} (reference model on the same queries: {recall(ref, gt):.6f})",
        highlight=False,
    )
    console.print(
        f"cycles per query, steady state: measured {measured:,.1f}, predicted {predicted:,.1f} "
        f"(bottleneck {model.bottleneck}), error {model.error_pct(measured):+.2f}%",
        highlight=False,
    )
    console.print(
        "  predicted per stage: "
        + ", ".join(f"{s} {t.interval:,.1f}" for s, t in timings.items())
        + f"; slowest stage alone {model.stage_interval:,.1f} (the rest: the finite buffers between the stages)",
        highlight=False,
    )
    console.print(
        f"QPS at {d.clock_mhz:g} MHz: measured {clock / measured:,.0f}, predicted {clock / predicted:,.0f}; "
        f"index load {run['load_cycles']:,} cycles, first query done after {run['first_cycles']:,} cycles",
        highlight=False,
    )
    return 1 if run["mismatched_queries"] else 0


def csim_report(
    project: Path, build_dir: Path, queries: int | None, first: int, console, limits: Limits = NO_LIMITS
) -> int:

    record, design = check_project(project, "csim")
    q_fx = test_queries_fx(project, record, design.format)
    nq = query_range(q_fx.shape[0], queries, first)
    if limits.stall is not None:
        raise FannsError("--timeout of a C simulation is a wall time", hint="e.g. --timeout 10m")
    keys = search_keys_within(project, build_dir / "hls_csim", q_fx[first : first + nq], limits.seconds)
    ref = np.fromfile(project / "data" / "reference_keys.bin", dtype="<u8").reshape(q_fx.shape[0], design.k)[
        first : first + nq
    ]
    gt = np.fromfile(project / "data" / "groundtruth.bin", dtype="<u4").reshape(q_fx.shape[0], design.k)[
        first : first + nq
    ]
    bad = int((keys != ref).any(1).sum())
    console.print(
        f"C simulation: {keys.shape[0]} queries, {bad} differ from the reference model; "
        f"R@{design.k} = {recall(keys, gt):.6f} (reference model: {recall(ref, gt):.6f})",
        highlight=False,
    )
    return 1 if bad else 0


def sim_command(args: argparse.Namespace) -> int:
    """`fanns sim` (options: `fanns.flow.parsers.sim`)."""
    project = Path(args.project)
    if not project.is_dir():
        raise FannsError(
            f"{project} is not a folder",
            hint="pass the folder written by `fanns generate`, `generate-rtl` or `generate-hls`",
        )
    # the folder `fanns generate` writes holds one project per face: the backend's face is simulated
    project = face_folder(project, "c-sim" if args.backend == "csim" else "rtl-sim")
    build_dir = Path(args.build_dir) if args.build_dir else cache_root() / "sim-builds"
    console = Console()
    WHERE.note_design(project / "design.yaml")

    if args.harness is not None and (is_graph_project(project) or args.backend == "csim"):
        raise FannsError(
            "--harness chooses between the RTL harnesses of an IVF-PQ project",
            hint="leave it out for a graph project (its bench has its memory in RTL already) and for --backend csim",
        )
    trace = _trace_path(args.trace, args.backend)
    if is_graph_project(project):
        hls = is_graph_hls_project(project)
        if hls != ((args.backend or ("csim" if hls else "rtl")) == "csim"):
            raise FannsError(
                f"{project} is a graph {'HLS' if hls else 'RTL'} project",
                hint=f"use --backend {'csim' if hls else 'rtl'}",
            )
        if hls:
            if trace is not None:
                raise FannsError("--trace writes RTL waveforms", hint="this is an HLS project: leave out --trace")
            return graph_csim_report(project, build_dir, args.queries, args.first, args.runtime, console)
        return graph_rtl_report(
            project, build_dir, args.queries, args.first, args.latency, args.pause, args.runtime, console, trace=trace
        )
    if args.runtime is not None:
        raise FannsError("--runtime is for graph projects (fanns generate-graph-rtl)")
    if args.backend in (None, "rtl"):
        return rtl_report(
            project,
            build_dir,
            args.queries,
            args.first,
            args.latency,
            args.pause,
            console,
            _limits(args.timeout),
            args.harness or DEFAULT_RTL_HARNESS,
            trace,
        )
    return csim_report(project, build_dir, args.queries, args.first, console, _limits(args.timeout))


def _trace_path(value: str | None, backend: str | None) -> Path | None:
    """`--trace`: a VCD file in an existing folder, for the rtl backend."""
    if value is None:
        return None
    if backend == "csim":
        raise FannsError("--trace writes RTL waveforms", hint="use it with --backend rtl")
    path = Path(value)
    if path.suffix != ".vcd" or not path.parent.resolve().is_dir() or path.is_dir():
        raise FannsError(f"--trace {value}: not a .vcd file in an existing folder", hint="e.g. --trace waves.vcd")
    if path.is_symlink():  # dangling or not: the simulator would write wherever it points
        raise FannsError(f"--trace {value} is a symbolic link", hint="name a new file, not a link")
    if path.exists():
        raise FannsError(f"--trace {value} already exists", hint="remove it or name another file")
    return path


def _limits(values: list[str] | None) -> Limits:
    """`--timeout` values: a number of cycles (the watchdog's stall bound) and/or a wall time."""
    stall, seconds = None, float("inf")
    for value in values or ():
        text = value.strip().lower()
        try:
            if text[-1:] in TIME_UNITS:
                seconds = float(text[:-1]) * TIME_UNITS[text[-1]]
                ok = 0 < seconds < float("inf")
            else:
                stall = int(text.replace("_", ""))
                ok = stall > 0
        except ValueError:
            ok = False
        if not ok:
            raise FannsError(
                f"--timeout {value!r} is neither a number of cycles nor a time",
                hint="e.g. --timeout 200000 (cycles without progress) or --timeout 30m (wall time), or both",
            )
    return Limits(stall=stall, seconds=seconds)
