"""The generated Falcon QPP (Amaranth -> Verilator, on the compiled fast harness) on a real graph.

One build (two BFC units on two graph channels, HNSW of the first 2,000 SIFT vectors) serves
every test: mg, mc, l and k are run-time registers. Each run's result rows must equal the DST
reference configured as the design (`fanns.reference.graph`) bit for bit — keys and the
hops / visited / checks / groups statistics — and each query's measured cycles must agree with
the cycle model (`fanns.model.graph.qpp.simulate` on the reference's trace) within 10 %.
"""

import numpy as np
import pytest

from fanns.datasets import load_dataset
from fanns.design.graph import Runtime
from fanns.images.graph import pack
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.pinned import pinned_graph_design
from fanns.reference.graph import STATS, reference
from fanns.sim.graph.rtl import FalconRtl, memory_words

NODES, QUERIES, LATENCY = 2000, 3, 40
SPAN_SLACK = 4
"""Cycles by which the two harnesses' ap_start-to-interrupt spans may differ: a cocotb bench sees
signals as they were before the edge it awaited, the compiled one after it."""


@pytest.fixture(scope="module")
def bench(build_root):
    ds = load_dataset("builtin:sift-10k")
    base = np.asarray(ds.base[:NODES], dtype=np.float32)
    graph = build_graph(base, "hnsw", max_degree=32, fmt=graph_format_for(base))
    design = pinned_graph_design(graph, units=2, channels=2, l_max=64, k_max=10, bloom=(3, 3 * 2**14), limits=(8, 4))
    images = pack(design, graph)
    queries = graph.fmt.quantize(np.asarray(ds.queries[:QUERIES], dtype=np.float32))
    rtl = FalconRtl(design, build_root / "falcon_rtl", memory_words(images, QUERIES))
    rtl.build()
    return {"rtl": rtl, "design": design, "graph": graph, "images": images, "queries": queries}


def check_run(bench, runtime: Runtime, latency: int = LATENCY, stall: int = 0):
    design, graph, q = bench["design"], bench["graph"], bench["queries"]
    run = bench["rtl"].run(bench["images"], q, runtime, latency=latency, stall=stall)
    assert not run.timed_out and run.status == 0
    ref = reference(design, graph, q, runtime)
    assert np.array_equal(run.keys, ref.keys), "result keys differ from the DST reference"
    for name in STATS:
        assert np.array_equal(run.stats[name], ref.stats[name]), name
    assert np.all(run.keys[:, runtime.k :] == np.uint64(2**64 - 1))
    return run, ref


# CI runs BFS and one DST configuration; the other two DST configurations are long
@pytest.mark.slow
@pytest.mark.parametrize(
    "l,k,mg,mc",
    [
        (64, 10, 1, 1),
        (64, 10, 4, 2),
        pytest.param(48, 10, 8, 4, marks=pytest.mark.long),
        pytest.param(32, 5, 2, 3, marks=pytest.mark.long),
    ],
    ids=["bfs", "dst-4x2", "dst-8x4", "dst-2x3-l32"],
)
def test_results_equal_reference_and_cycles_match_model(bench, l, k, mg, mc):
    rt = Runtime(l=l, k=k, mg=mg, mc=mc)
    run, ref = check_run(bench, rt)
    cycles = run.stats["cycles"]
    predicted = ref.predicted_cycles(bench["design"], LATENCY, rt)
    assert np.all(np.abs(predicted - cycles) <= 0.10 * cycles), (predicted, cycles)
    assert run.sim_cycles > cycles.sum()


@pytest.mark.slow
@pytest.mark.long  # more runs of the pipeline CI simulates
def test_fast_harness_gives_the_keys_and_cycles_of_the_cocotb_harness(bench, build_root):
    """The compiled bench (`fanns.sim.graph.bench`, "fast") and `sim/tb_falcon.py` under cocotb on
    the same build inputs: equal result rows (keys and per-query statistics, cycles included),
    status and run cycle register; the benches' own ap_start-to-interrupt spans differ only by
    how each host times its AXI4-Lite start write."""
    rt = Runtime(l=64, k=10, mg=4, mc=2)
    words = memory_words(bench["images"], QUERIES)
    old_rtl = FalconRtl(bench["design"], build_root / "falcon_rtl_cocotb", words, harness="cocotb")
    old = old_rtl.run(bench["images"], bench["queries"], rt, latency=LATENCY)
    new = bench["rtl"].run(bench["images"], bench["queries"], rt, latency=LATENCY)
    assert bench["rtl"].sim.harness == "fast" and old_rtl.sim.harness == "cocotb"
    assert not old.timed_out and not new.timed_out and old.status == new.status == 0
    assert np.array_equal(new.keys, old.keys)
    for name in STATS:
        assert np.array_equal(new.stats[name], old.stats[name]), name
    assert new.cycles == old.cycles > 0
    assert abs(new.sim_cycles - old.sim_cycles) <= SPAN_SLACK, (new.sim_cycles, old.sim_cycles)


@pytest.mark.slow
@pytest.mark.long  # more runs of the pipeline CI simulates
def test_other_memory_latency(bench):
    rt = Runtime(l=64, k=10, mg=4, mc=2)
    run, ref = check_run(bench, rt, latency=100)
    predicted = ref.predicted_cycles(bench["design"], 100, rt)
    assert np.all(np.abs(predicted - run.stats["cycles"]) <= 0.10 * run.stats["cycles"])


@pytest.mark.slow
def test_random_stalls_change_timing_not_results(bench):
    rt = Runtime(l=64, k=10, mg=4, mc=2)
    calm, _ = check_run(bench, rt)
    stalled, _ = check_run(bench, rt, stall=64)  # every AXI ready/valid of the memory drops 1 cycle in 4
    assert np.all(stalled.stats["cycles"] > calm.stats["cycles"])


@pytest.mark.slow
@pytest.mark.long  # more runs of the pipeline CI simulates
def test_block_protocol_of_the_kernel(bench):
    """ap_ctrl_hs as the kernel's register map exposes it, through the reads and writes a host
    makes: idle before, busy while running, done + ready + idle after (cleared by the read that saw
    them), ISR bit 0 set by the enabled ap_done and toggled off by a written 1 (the interrupt
    drops), and no restart with auto_restart off."""
    rt = Runtime(l=32, k=5, mg=2, mc=2)
    run = bench["rtl"].run(bench["images"], bench["queries"][:1], rt, latency=LATENCY, protocol=True)
    assert not run.timed_out and run.status == 0
    seen = run.protocol
    start, done, idle, ready = 1, 1 << 1, 1 << 2, 1 << 3
    assert seen["before"] == idle
    assert not seen["running"] & (idle | done | start)
    assert seen["done"] == done | idle | ready and seen["read_again"] == idle
    assert seen["isr"] == 1 and seen["isr_after_write"] == 0 and seen["interrupt_after_write"] == 0
    assert seen["later"] == idle
    ref = reference(bench["design"], bench["graph"], bench["queries"][:1], rt)
    assert np.array_equal(run.keys, ref.keys)


@pytest.mark.slow
def test_bad_parameters_are_refused(bench):
    rtl, q = bench["rtl"], bench["queries"]
    for rt in (Runtime(l=65, k=10, mg=1, mc=1), Runtime(l=64, k=10, mg=9, mc=1), Runtime(l=8, k=10, mg=1, mc=1)):
        run = rtl.run(bench["images"], q[:1], rt, latency=LATENCY)
        assert not run.timed_out and run.status & 1
        assert run.cycles == 0 or run.cycles < 10


@pytest.mark.slow
def test_cli_generate_and_sim(bench, tmp_path, build_root, capsys):
    """`fanns generate-graph-rtl`, then what `fanns sim` runs on the project (with the bench's
    build: the same design), then `fanns sim` refusing run-time parameters beyond the limits."""
    from rich.console import Console

    from fanns.cli import main
    from fanns.flow.graph_sim import graph_rtl_report

    project = tmp_path / "proj"
    args = [
        "generate-graph-rtl",
        "builtin:sift-10k",
        "--nodes",
        str(NODES),
        "--units",
        "2",
        "--channels",
        "2",
        "--l-max",
        "64",
        "--k-max",
        "10",
        "--bloom",
        "3,49152",
        "--limits",
        "8,4",
        "--runtime",
        "64,10,4,2",
        "--queries",
        str(QUERIES),
        "--out",
        str(project),
    ]
    assert main(args) == 0
    assert graph_rtl_report(project, build_root, None, 0, LATENCY, 0.0, None, Console(), rtl=bench["rtl"]) == 0
    assert graph_rtl_report(project, build_root, 2, 1, LATENCY, 0.0, (32, 5, 2, 2), Console(), rtl=bench["rtl"]) == 0
    out = capsys.readouterr().out
    assert "queries 1..2: 0 differ" in out
    assert "queries 0..2: 0 differ from the DST reference" in out
    assert main(["sim", str(project), "--runtime", "65,10,1,1", "--build-dir", str(build_root / "graph_cli")]) == 2
    vcd = tmp_path / "qpp.vcd"  # the same run traced: a build of its own, the same keys
    trace_args = ["sim", str(project), "--queries", "2", "--build-dir", str(build_root / "graph_trace")]
    assert main([*trace_args, "--trace", str(vcd)]) == 0
    assert "queries 0..1: 0 differ" in " ".join(capsys.readouterr().out.split())
    with vcd.open() as f:
        header = "".join(iter(f.readline, "$enddefinitions $end\n"))
        assert any(line.startswith("#") for line in f)
    assert "$scope module falcon_bench $end" in header and "$scope module ram $end" in header
