"""The fast IVF-PQ harness (`fanns.sim.ivfpq.fast`: the project's Verilog with its memories in
RTL), which `test_rtl` runs, against the cocotb harness (`sim/tb_ivfpq.py`: cocotbext-axi memory
models) on the designs of `test_rtl` (every one of them): the same queries give the same result
keys and the same cycle registers, cycle for cycle (memories of latency 100, no pauses). The cocotb
harness (`fanns sim --harness cocotb`) keeps its own check of random stalls and the watchdog."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.sim.ivfpq.rtl import DesignStuck, Limits, RamTiming, RtlProjectSim, Run
from fanns.tools.vmodel import QUICK_BUILD
from tests.codegen.test_rtl import DESIGNS, case  # noqa: F401  (case: a design's project and fast-harness build)
from tests.codegen.test_tiers import K_RESULTS, NPROBE, projects, skewed  # noqa: F401  (a tiered project)
from tests.tiers import long_params

QUERIES = 3
REGISTERS = ("status", "cycles", "load_cycles", "first_cycles", "last_cycles")


@pytest.fixture(scope="module")
def cocotb(case, build_root):  # noqa: F811
    sim = RtlProjectSim(case["project"], build_root / "rtl", harness="cocotb")
    sim.build()
    return sim


# CI compares the harnesses on random-k100 (the design of the cocotb stalls test); the others are long
@pytest.mark.slow
@pytest.mark.parametrize("case", long_params(sorted(DESIGNS), long=set(DESIGNS) - {"random-k100"}), indirect=True)
def test_fast_harness_gives_the_keys_and_cycles_of_the_cocotb_harness(case, cocotb):  # noqa: F811
    d = case["design"]
    runs = [Run(nq=QUERIES, nprobe=d.nprobe, k=d.k, first=1)]
    old = cocotb.run(runs)["runs"][0]
    new = case["sim"].run(runs)["runs"][0]
    assert old["mismatched_queries"] == new["mismatched_queries"] == 0, (old.get("first_bad"), new.get("first_bad"))
    assert np.array_equal(new["keys"], old["keys"])
    assert {r: new[r] for r in REGISTERS} == {r: old[r] for r in REGISTERS}
    assert new["status"] == 1 and new["cycles"] > new["load_cycles"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("case", ["random-k100"], indirect=True)
def test_cocotb_harness_stalls_runtime_parameters_and_watchdog(case, cocotb):  # noqa: F811
    """On the cocotb harness: random stalls on every memory: keys still those of the reference; a
    second run at smaller nprobe and k; a refused nprobe; then a frozen PQ port stopped by the
    watchdog (`test_rtl` checks the same on the fast harness)."""
    d = case["design"]
    runs = [Run(nq=QUERIES, nprobe=d.nprobe, k=d.k)]
    calm = cocotb.run(runs)["runs"][0]
    out = cocotb.run(runs + [Run(nq=2, nprobe=d.nprobe, k=d.k, first=4)], latency=37, pause=0.3, bad_params=True)
    stalled, second = out["runs"]
    assert out["bad_params_status"] & 0b10
    assert stalled["mismatched_queries"] == second["mismatched_queries"] == 0
    assert np.array_equal(stalled["keys"], calm["keys"])
    assert stalled["cycles"] != calm["cycles"]  # other latency, stalls: other timing
    assert second["cycles"] < stalled["cycles"]  # no second index load
    with pytest.raises(DesignStuck) as err:
        cocotb.run([Run(nq=2, nprobe=d.nprobe, k=d.k)], frozen=("m_axi_pq1",), limits=Limits(stall=3000))
    text = str(err.value)
    assert "run 1 of 1: no progress for" in text, text
    assert "m_axi_pq1: a read request not accepted" in text and "m_axi_io:" in text, text
    assert "streams waiting for a word:" in text, text


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_fast_harness_serves_both_tiers_as_the_cocotb_harness(projects, build_root):  # noqa: F811
    """A tiered design (`test_tiers`): the fast tier's ports `m_axi_hot<c>` on memories of their own
    latency, the slow tier's at another (one beat per cycle on both: the fast harness's memories)."""
    project = projects("tiered")["project"]
    timing = {"pq_memory": RamTiming(160), "hot_memory": RamTiming(60)}
    runs = [Run(nq=QUERIES, nprobe=NPROBE, k=K_RESULTS)]
    out = {}
    for harness in ("cocotb", "fast"):
        sim = RtlProjectSim(project, build_root / "rtl", harness=harness)
        out[harness] = sim.run(runs, **timing)["runs"][0]
    old, new = out["cocotb"], out["fast"]
    assert old["mismatched_queries"] == new["mismatched_queries"] == 0
    assert np.array_equal(new["keys"], old["keys"])
    assert {r: new[r] for r in REGISTERS} == {r: old[r] for r in REGISTERS}
    with pytest.raises(FannsError, match="one beat per cycle"):
        sim.run(runs, pq_memory=RamTiming(200, 0.5))


@pytest.mark.slow
@pytest.mark.parametrize("case", ["random-k100"], indirect=True)
def test_a_traced_run_writes_the_waveforms_of_the_accelerator(case, build_root, tmp_path):  # noqa: F811
    """`fanns sim --trace`: a traced build of the same project gives the same keys and cycles, and
    its VCD holds the PEs' streams with one time step per clock edge up to the run's last cycle."""
    d = case["design"]
    vcd = tmp_path / "waves.vcd"
    traced = RtlProjectSim(case["project"], build_root / "rtl-trace", options=QUICK_BUILD, trace=vcd)
    runs = [Run(nq=2, nprobe=d.nprobe, k=d.k)]
    got, want = traced.run(runs)["runs"][0], case["sim"].run(runs)["runs"][0]
    assert np.array_equal(got["keys"], want["keys"]) and got["cycles"] == want["cycles"]
    with vcd.open() as f:
        header = "".join(iter(f.readline, "$enddefinitions $end\n"))
        last = max(int(line[1:]) for line in f if line.startswith("#"))
    for scope in ("accelerator", "pq_decode0", "feeder0", "sel_k"):
        assert f"$scope module {scope} $end" in header, scope
    assert " codes__valid " in header and " lut__ready " in header
    assert last >= 2 * got["sim_cycles"]
