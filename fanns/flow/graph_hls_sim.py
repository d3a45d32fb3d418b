"""`fanns sim PROJECT --backend csim` for a graph HLS project (`fanns generate-graph-hls`): the
project's kernel compiled by g++ and run in-process on the test queries, compared with the DST
reference.

Checks every result row bit for bit (keys and the hops / visited / checks / groups statistics)
against the reference recomputed from the graph the images hold, at the design's run-time
parameters or at any (l, k, mg, mc) — they are kernel arguments. At the design's own parameters
the project's `data/reference_*.bin` must equal that recomputed reference too (so a corrupt
image or reference file is reported, not silently used).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from fanns.codegen.graph.rtl import GraphProjectData, read_project
from fanns.codegen.project_files import query_range
from fanns.design.graph import Runtime
from fanns.errors import FannsError
from fanns.images.graph import split_keys, unpack
from fanns.index.recall import recall_at_k
from fanns.reference.graph import STATS, reference
from fanns.sim.graph.csim import GraphHlsCsim

SHOWN = 10
"""Differing queries listed one by one (the rest are counted)."""

CYCLE_BOUND = 0.10
"""Largest model error of a query's (or an across-query batch's) cycles a simulation passes with."""


def read_test_queries(project: Path, queries: int | None, first: int) -> tuple[GraphProjectData, int]:
    """The project and how many of its test queries from `first` to run (all the rest by default);
    shared by the C and RTL simulations so both check --queries/--first alike."""
    data = read_project(project)
    return data, query_range(len(data.queries_fx), queries, first)


def print_differing(console, first: int, nq: int, bad: np.ndarray) -> None:
    """The summary line of the queries that differ from the DST reference, the same for every backend."""
    console.print(
        f"queries {first}..{first + nq - 1}: {int(bad.sum())} differ from the DST reference "
        "(keys and hops/visited/checks/groups)",
        highlight=False,
    )


def sim_record(
    simulator: str,
    bad: np.ndarray,
    recall: float | None,
    seconds: dict[str, float],
    measured: float | None = None,
    predicted: float | None = None,
    max_error: float | None = None,
) -> dict:
    """What a graph simulation found: the queries and those that differ from the DST reference,
    R@k of the simulated results, the mean cycles per query (RTL) measured and predicted by the
    cycle model with the largest per-query error, the seconds it took, and whether it passed
    (bit-exact, and cycles within `CYCLE_BOUND` of the model)."""
    record = {
        "simulator": simulator,
        "queries": int(bad.size),
        "mismatched_queries": int(bad.sum()),
        "recall": recall,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
    }
    if measured is not None:
        record |= {
            "cycles_per_query": round(measured, 1),
            "predicted_cycles_per_query": round(predicted, 1),
            "cycle_error_pct": round(100 * (predicted - measured) / measured, 2),
            "max_query_error_pct": round(100 * max_error, 2),
        }
    record["passed"] = not bad.any() and (max_error is None or max_error <= CYCLE_BOUND)
    return record


def graph_csim_report(
    project: Path, build_dir: Path, queries: int | None, first: int, runtime: tuple[int, int, int, int] | None, console
) -> int:
    """`fanns sim` on a graph HLS project: 0 when every query is bit-exact (`simulate_graph_csim`), else 1."""
    return 0 if simulate_graph_csim(project, build_dir, queries, first, runtime, console)["passed"] else 1


def simulate_graph_csim(
    project: Path, build_dir: Path, queries: int | None, first: int, runtime: tuple[int, int, int, int] | None, console
) -> dict:
    """Run the project's kernel in C simulation on its test queries, print what was checked and
    return the record (`sim_record`)."""

    data, nq = read_test_queries(project, queries, first)
    design = data.design
    rt = design.runtime if runtime is None else Runtime(*runtime)
    q = data.queries_fx[first : first + nq]
    ref = reference(design, unpack(data.images, design), q, rt)
    if rt == design.runtime:
        stored = np.array_equal(ref.keys, data.keys[first : first + nq]) and all(
            np.array_equal(ref.stats[s], data.stats[s][first : first + nq]) for s in STATS
        )
        if not stored:
            raise FannsError(
                f"{project}/data/reference_*.bin differ from the reference recomputed from the images",
                hint="the project is inconsistent; regenerate it",
            )
    console.print(f"compiling the kernel of {project} with g++ ...", highlight=False)
    start = time.perf_counter()
    sim = GraphHlsCsim(project, Path(build_dir) / "graph-csim", data.images)
    built = time.perf_counter() - start
    with sim:
        start = time.perf_counter()
        keys, stats = sim.search(q, rt)
        ran = time.perf_counter() - start
    bad = (keys != ref.keys).any(1)
    for name in STATS:
        bad |= stats[name] != ref.stats[name]
    console.print(
        f"C simulation of {design.bfc_units} BFC unit(s) on {design.channels} graph channel(s), l {rt.l}, k {rt.k}, "
        f"mg {rt.mg}, mc {rt.mc}: build {built:.1f} s, run {ran:.2f} s",
        highlight=False,
    )
    for i in np.flatnonzero(bad)[:SHOWN]:
        what = ["keys"] * bool((keys[i] != ref.keys[i]).any()) + [s for s in STATS if stats[s][i] != ref.stats[s][i]]
        console.print(f"  query {first + i} differs from the DST reference: {', '.join(what)}", highlight=False)
    print_differing(console, first, nq, bad)
    recall = None
    if data.groundtruth is not None and rt.k == design.runtime.k:
        ids, _ = split_keys(keys, rt.k)
        recall = recall_at_k(ids, data.groundtruth[first : first + nq], rt.k)
        console.print(f"R@{rt.k} = {recall:.4f}", highlight=False)
    return sim_record("g++ C simulation", bad, recall, {"build": built, "simulation": ran})
