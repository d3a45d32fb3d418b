"""Simulation of a sample of a generated project's test queries, as results (not printout) for
`fanns generate`'s summary and report.

Why beside `fanns sim`: `fanns generate --sim` checks every face it writes before the project
appears, and needs the figures as data (mismatches, recall, cycles against the model) to put
them in report/summary.json and the README. The simulators are the existing backends:
`fanns.sim.ivfpq.rtl.RtlProjectSim` (Verilator, its default harness) and `fanns.sim.ivfpq.csim.HlsCsim`.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

import fanns.driver
from fanns.choices import DEFAULT_RTL_HARNESS
from fanns.codegen.project_files import read_record
from fanns.design.ivfpq import IvfPqDesign
from fanns.flow.sim_cli import recall
from fanns.index.ivfpq import IvfPqIndexData
from fanns.index.recall import measure_recall
from fanns.numerics import split_keys
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run, measured_interval, test_queries_fx
from fanns.sim.ivfpq.stepwise import StepCheck, rtl_step_runs, run_schedules, schedules, step_calls
from fanns.tools.vbuild import BuildOptions


def recalls(keys: np.ndarray, ref: np.ndarray, gt: np.ndarray, design: IvfPqDesign) -> dict:
    """Recall of the simulated keys and of the reference keys: R@K, and the design's goal measure
    when it is another one (1-R@K)."""

    out = {f"R@{design.k}": {"simulated": round(recall(keys, gt), 6), "reference": round(recall(ref, gt), 6)}}
    if design.goal:
        goal = design.goal
        if goal.name not in out:
            found, expected = (split_keys(x)[1].astype(np.int64) for x in (keys, ref))
            out[goal.name] = {
                "simulated": round(measure_recall(found, gt, goal.measure), 6),
                "reference": round(measure_recall(expected, gt, goal.measure), 6),
            }
    return dict(sorted(out.items()))


def _reference(project: Path, design: IvfPqDesign, total: int, nq: int) -> tuple[np.ndarray, np.ndarray]:
    ref = np.fromfile(project / "data" / "reference_keys.bin", dtype="<u8").reshape(total, design.k)[:nq]
    gt = np.fromfile(project / "data" / "groundtruth.bin", dtype="<u4").reshape(total, design.k)[:nq]
    return ref, gt


def simulate_rtl(
    project: Path,
    nq: int,
    build_root: Path,
    harness: str = DEFAULT_RTL_HARNESS,
    options: BuildOptions | None = None,
) -> dict:
    """The first `nq` (>= 2) test queries of an RTL face under Verilator, on `harness`
    (`fanns.choices.RTL_HARNESSES`); `options`: how the fast harness's model is compiled (None:
    the build with the least expected build and run time for these queries)."""

    sim = RtlProjectSim(project, build_root, harness=harness, options=options, queries=nq)
    d = sim.design
    nq = min(nq, sim.test_queries)
    start = time.perf_counter()
    built_now = sim.build()
    built = time.perf_counter() - start
    start = time.perf_counter()
    run = sim.run([Run(nq=nq, nprobe=d.nprobe, k=d.k)])["runs"][0]
    ran = time.perf_counter() - start
    ref, gt = _reference(project, d, sim.test_queries, nq)
    model = sim.predicted_run(0, nq)
    measured = measured_interval(run)
    return {
        "backend": "rtl",
        "simulator": sim.describe(),
        "model": "built" if built_now else "reused from the model cache",
        "queries": nq,
        "mismatched_queries": int(run["mismatched_queries"]),
        "checked_keys": int(run["checked_keys"]),
        "recall": recalls(run["keys"], ref, gt, d),
        "cycles_per_query": round(measured, 1),
        "predicted_cycles_per_query": round(model.interval, 1),
        "cycle_error_pct": round(model.error_pct(measured), 2),
        "bottleneck": model.bottleneck,
        "seconds": {"build": round(built, 1), "run": round(ran, 1)},
    }


def simulate_csim(project: Path, nq: int, build_root: Path) -> dict:
    """The first `nq` test queries of an HLS face through the g++ C simulation of its kernel."""

    record = read_record(project)
    design = IvfPqDesign.load(project / "design.yaml")
    q_fx = test_queries_fx(project, record, design.format)
    nq = min(nq, q_fx.shape[0])
    start = time.perf_counter()
    with HlsCsim(project, build_root / "hls_csim") as sim:
        keys = sim.search_keys_fx(q_fx[:nq])
    ran = time.perf_counter() - start
    ref, gt = _reference(project, design, q_fx.shape[0], nq)
    return {
        "backend": "hls",
        "simulator": SIMULATOR_NAMES["hls"],
        "queries": nq,
        "mismatched_queries": int((keys != ref).any(1).sum()),
        "checked_keys": int(keys.size),
        "recall": recalls(keys, ref, gt, design),
        "seconds": {"build and run": round(ran, 1)},
    }


def _step_plans(project: Path, data: IvfPqIndexData, nq: int, seed: int):
    """The first `nq` test queries of a face, its design's reference (from `data`, the index the
    project was generated from), each query's own probed cells cut into steps (`schedules`), and
    the generator that cut them."""
    design = IvfPqDesign.load(project / "design.yaml")
    q_host = test_queries_fx(project, read_record(project), design.format)[:nq]
    dref = DesignReference(design, data)
    rng = np.random.default_rng(seed)
    plans = schedules(dref.probe(dref.ref.rotate(q_host), design.nprobe), design.nprobe, rng, True, data.nlist)
    return design, q_host, dref, plans, rng


def _step_record(backend: str, simulator: str, queries: int, check: StepCheck, start: float) -> dict:
    return {
        "backend": backend,
        "simulator": f"{simulator}, step-wise mode",
        "queries": queries,
        "calls": check.calls,
        "mismatched_queries": check.mismatched_queries,
        "first_mismatch": check.first_mismatch,
        "seconds": {"build and run": round(time.perf_counter() - start, 1)},
    }


def simulate_rtl_steps(project: Path, data: IvfPqIndexData, nq: int, build_root: Path, seed: int = 0) -> dict:
    """Step-wise search (docs/stepwise.md) on the RTL face: the schedule of `simulate_csim_steps`,
    every call a run of the harness with its cell lists and seed keys, checked against the
    reference model's keys (the harness refuses a run whose keys differ)."""
    design, q_host, dref, plans, rng = _step_plans(project, data, nq, seed)
    calls = step_calls(plans, design.nprobe, rng)
    sim = RtlProjectSim(project, build_root, options=None, queries=nq)  # the build `simulate_rtl` chose
    start = time.perf_counter()
    sim.build()
    with tempfile.TemporaryDirectory() as tmp:
        runs = rtl_step_runs(calls, dref.search_keys_cells_fx, q_host, design, Path(tmp), "step")
        out = sim.run(runs)["runs"]
    bad = [(i, run, row) for i, (run, row) in enumerate(zip(runs, out)) if row["mismatched_queries"]]
    differ = {q for _, run, _ in bad for q in run.step.rows}
    first = f"call {bad[0][0]}: {bad[0][2].get('first_bad')}" if bad else ""
    check = StepCheck(len(calls), len(differ), first, np.zeros((0, design.k), dtype=np.uint64))
    return _step_record("rtl", sim.describe(), int(q_host.shape[0]), check, start)


def simulate_model_steps(project: Path, data: IvfPqIndexData, queries: np.ndarray, nq: int, seed: int = 0) -> dict:
    """Step-wise search on the driver's model backend, as a user calls it (`fanns.driver`,
    `search_step_keys`: float queries, cell lists, the keys an earlier step returned): the schedule
    of `simulate_csim_steps` over the first `nq` of `queries` (the project's test queries as
    floats), every call against the reference model built from `data`."""
    design, q_host, dref, plans, rng = _step_plans(project, data, nq, seed)
    q = np.asarray(queries[: q_host.shape[0]], dtype=np.float32)
    start = time.perf_counter()
    with fanns.driver.open(project, backend="model") as acc:
        check = run_schedules(
            acc.search_step_keys,
            lambda x, cells, seeds: dref.search_keys_cells_fx(dref.ref.quantize_queries(x), cells, seeds),
            q,
            plans,
            design,
            rng,
        )
    return _step_record("model", "the driver's model backend", int(q.shape[0]), check, start)


def simulate_csim_steps(project: Path, data: IvfPqIndexData, nq: int, build_root: Path, seed: int = 0) -> dict:
    """Step-wise search (docs/stepwise.md) on the HLS face's C simulation: the first `nq` test
    queries' own probed cells cut into steps of random sizes, run in calls of random subsets of
    the queries (resumed after others ran), every call's keys against the reference model built
    from `data`, the index the project was generated from."""
    design, q_host, dref, plans, rng = _step_plans(project, data, nq, seed)
    start = time.perf_counter()
    with HlsCsim(project, build_root / "hls_csim") as sim:
        check = run_schedules(sim.search_keys_cells_fx, dref.search_keys_cells_fx, q_host, plans, design, rng)
    return _step_record("hls", SIMULATOR_NAMES["hls"], int(q_host.shape[0]), check, start)


SIMULATORS = {"rtl": simulate_rtl, "hls": simulate_csim}
RUN_ONLY = ("seconds", "model")
"""Keys of a simulation's record that describe this run, not the project (kept out of its files)."""
SIMULATOR_NAMES = {"rtl": "Verilator", "hls": "g++ C simulation"}
