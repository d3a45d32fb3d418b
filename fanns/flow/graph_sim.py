"""`fanns sim PROJECT` for a graph project (`fanns generate-graph-rtl`): the QPP's Verilog (the
project's `rtl/fanns_falcon_qpp.v`, the kernel the board runs) under Verilator + cocotb on the
project's test queries, compared with the DST reference.

Checks every result row bit for bit (keys and the hops / visited / checks / groups statistics)
and each query's measured cycles against the cycle model on the reference's trace. At the
design's own run-time parameters the reference comes from the project's `data/`; other (l, k,
mg, mc) — they are registers — are checked against the reference recomputed from the graph the
images hold.

An across-query project (P QPPs, `fanns.arch.graph.across`) runs its top level with the queries
split into P blocks on a memory whose channels are shared by every master, and its measured
batch cycles are compared with the across-query model (`fanns.model.graph.across`);
`--pause` (random memory stalls) applies to single-QPP projects only.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from fanns.codegen.graph.rtl import TOP, is_across
from fanns.design.graph import Runtime
from fanns.errors import FannsError
from fanns.flow.graph_hls_sim import print_differing, read_test_queries, sim_record
from fanns.images.graph import split_keys, unpack
from fanns.index.recall import recall_at_k
from fanns.model.graph.across import across_batch_cycles
from fanns.model.graph.qpp import QppConfig
from fanns.reference.graph import STATS, reference
from fanns.sim.graph.across_rtl import FalconAcrossRtl, bank_words, split_queries
from fanns.sim.graph.rtl import FalconRtl, memory_words


def graph_rtl_report(
    project: Path,
    build_dir: Path,
    queries: int | None,
    first: int,
    latency: int,
    pause: float,
    runtime: tuple[int, int, int, int] | None,
    console,
    rtl=None,
    trace: Path | None = None,
) -> int:
    """`fanns sim` on a graph RTL project: 0 when every query is bit-exact and the cycles within
    the model's bound (`simulate_graph_rtl`), else 1."""
    run = simulate_graph_rtl(project, build_dir, queries, first, latency, pause, runtime, console, rtl, trace)
    return 0 if run["passed"] else 1


def simulate_graph_rtl(
    project: Path,
    build_dir: Path,
    queries: int | None,
    first: int,
    latency: int,
    pause: float,
    runtime: tuple[int, int, int, int] | None,
    console,
    rtl=None,
    trace: Path | None = None,
) -> dict:
    """Simulate the project's QPP(s) on its test queries, print what was checked and return the
    record (`sim_record`); `rtl`: an already built `FalconRtl` of the project's design (tests
    reuse one build); `trace`: a VCD file the run writes every signal's waveform to (a traced
    build of its own)."""

    data, nq = read_test_queries(project, queries, first)
    design = data.design
    if not 0.0 <= pause < 1.0:
        raise FannsError(f"--pause {pause} must be a probability in [0, 1)")
    rt = design.runtime if runtime is None else design.check_runtime(Runtime(*runtime), "--runtime")
    q = data.queries_fx[first : first + nq]
    graph = unpack(data.images, design)
    ref = reference(design, graph, q, rt)
    if runtime is None and not np.array_equal(ref.keys, data.keys[first : first + nq]):
        raise FannsError(
            f"{project}/data/reference_keys.bin differs from the reference recomputed from the images",
            hint="the project is inconsistent; regenerate it",
        )

    if is_across(design):
        return _across_report(project, build_dir, data, q, ref, rt, latency, pause, console, first, rtl, trace)
    words = memory_words(data.images, nq)
    if rtl is None or rtl.design != design or rtl.depth < words or trace is not None:
        kernel = (Path(project) / "rtl" / f"{TOP}.v").read_text()  # the Verilog the board runs
        tag = hashlib.sha256((Path(project) / "design.yaml").read_bytes() + kernel.encode()).hexdigest()[:16]
        rtl = FalconRtl(design, Path(build_dir) / f"falcon-{tag}-{words}", words, kernel=kernel, trace=trace)
    run, built, ran = _build_and_run(
        rtl,
        f"the QPP of {project}",
        "QPP",
        lambda: rtl.run(data.images, q, rt, latency=latency, stall=round(pause * 256)),
        console,
    )
    if run.status:
        raise FannsError(
            f"the QPP refused the run (status {run.status}: bit 0 bad parameters, bit 1 AXI error)",
            hint=f"l in 2..{design.queues.l_max}, k in 1..min(l, {design.queues.k_max}), "
            f"mg <= {design.limits.mg_max}, mc <= {design.limits.mc_max}",
        )
    bad = _differing(run, ref)
    cycles = run.stats["cycles"]
    predicted = ref.predicted_cycles(design, latency, rt)
    err = (predicted - cycles) / cycles
    console.print(
        f"RTL simulation of {design.bfc_units} BFC unit(s) on {design.channels} graph channel(s), l {rt.l}, k {rt.k}, "
        f"mg {rt.mg}, mc {rt.mc}: build {built:.0f} s, simulation {ran:.0f} s ({run.sim_cycles:,} cycles)",
        highlight=False,
    )
    print_differing(console, first, nq, bad)
    recall = None
    if data.groundtruth is not None and rt.k == design.runtime.k:
        ids, _ = split_keys(run.keys, rt.k)
        recall = recall_at_k(ids, data.groundtruth[first : first + nq], rt.k)
        console.print(f"R@{rt.k} = {recall:.4f}", highlight=False)
    console.print(
        f"cycles per query: measured mean {cycles.mean():,.0f}, model mean {predicted.mean():,.0f}; "
        f"model error per query max {100 * np.abs(err).max():.2f}% (mean {100 * err.mean():+.2f}%)",
        highlight=False,
    )
    return sim_record(
        "Verilator",
        bad,
        recall,
        {"build": built, "simulation": ran},
        measured=float(cycles.mean()),
        predicted=float(predicted.mean()),
        max_error=float(np.abs(err).max()),
    )


def _across_report(
    project: Path,
    build_dir: Path,
    data,
    q: np.ndarray,
    ref,
    rt,
    latency: int,
    pause: float,
    console,
    first: int,
    rtl=None,
    trace: Path | None = None,
) -> dict:
    """The across-query top level on the queries `q` (module docstring); `rtl`: an already built
    `FalconAcrossRtl` of the project's design; `trace` as in `graph_rtl_report`."""

    design, nq = data.design, len(q)
    if pause:
        raise FannsError("--pause applies to single-QPP projects", hint="drop --pause for an across-query project")
    if nq < design.pipelines:
        raise FannsError(f"{nq} queries for {design.pipelines} QPPs", hint=f"give --queries {design.pipelines} or more")
    words = bank_words(data.images, nq)
    if not isinstance(rtl, FalconAcrossRtl) or rtl.design != design or rtl.bank_words < words or trace is not None:
        tag = hashlib.sha256((Path(project) / "design.yaml").read_bytes()).hexdigest()[:16]
        rtl = FalconAcrossRtl(design, Path(build_dir) / f"falcon-across-{tag}-{words}", words, trace=trace)
    run, built, ran = _build_and_run(
        rtl,
        f"the {design.pipelines} QPPs of {project}",
        "QPPs",
        lambda: rtl.run(data.images, q, rt, latency=latency),
        console,
    )
    if any(run.status):
        raise FannsError(f"a QPP refused the run (status {run.status}: bit 0 bad parameters, bit 1 AXI error)")
    bad = _differing(run, ref)
    model = across_batch_cycles(
        ref.traces, QppConfig.of_design(design, latency, rt), split_queries(nq, design.pipelines), design.channels
    )
    batch_err = (model.batch - run.sim_cycles) / run.sim_cycles
    err = (model.latency - run.stats["cycles"]) / run.stats["cycles"]
    console.print(
        f"RTL simulation of {design.pipelines} QPPs on {design.channels} shared graph channel(s), l {rt.l}, k {rt.k}, "
        f"mg {rt.mg}, mc {rt.mc}: build {built:.0f} s, simulation {ran:.0f} s ({run.sim_cycles:,} cycles)",
        highlight=False,
    )
    print_differing(console, first, nq, bad)
    console.print(
        f"batch: measured {run.sim_cycles:,} cycles, model {model.batch:,} ({100 * batch_err:+.2f}%); "
        f"latency per query: model error max {100 * np.abs(err).max():.2f}%",
        highlight=False,
    )
    return sim_record(
        "Verilator",
        bad,
        None,
        {"build": built, "simulation": ran},
        measured=run.sim_cycles / nq,
        predicted=model.batch / nq,
        max_error=max(abs(batch_err), float(np.abs(err).max())),
    )


def _build_and_run(rtl, what: str, noun: str, run, console):
    """Build `rtl` (Verilator, cached), then `run()`: (result, build seconds, run seconds); a run
    that got no interrupt before its timeout is an error."""
    console.print(f"building {what} ({rtl.sim.describe()}) ...", highlight=False)
    start = time.perf_counter()
    rtl.build()
    built = time.perf_counter() - start
    start = time.perf_counter()
    result = run()
    ran = time.perf_counter() - start
    if result.timed_out:
        raise FannsError(
            f"the simulated {noun} did not finish (no interrupt before the timeout)", hint="report this as a bug"
        )
    return result, built, ran


def _differing(run, ref) -> np.ndarray:
    """[nq] bool: queries whose result keys or traversal statistics differ from the reference."""

    bad = (run.keys != ref.keys).any(1)
    for name in STATS:
        bad |= run.stats[name] != ref.stats[name]
    return bad
