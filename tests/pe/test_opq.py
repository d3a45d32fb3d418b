"""OPQ rotation PE: reference model, RTL (cocotb + Verilator), HLS (g++ C simulation), timing."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.paths import shared_dir
from fanns.pe.opq import Opq
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from fanns.tools.yosys import synthesize
from tests.tiers import slow_params

CONFIGS = [
    Opq(d=16, w=4, vec_bits=8, frac_bits=14),
    Opq(d=12, w=12, vec_bits=12, frac_bits=10),
    Opq(d=128, w=128, vec_bits=8, frac_bits=14),  # 2048-bit matrix rows
    Opq(d=48, w=8, vec_bits=16, frac_bits=12, storage="uram"),  # the matrix in UltraRAM
    Opq(d=24, w=4, vec_bits=8, frac_bits=14, storage="stream"),  # the matrix again for every query
    Opq(d=32, w=32, vec_bits=12, frac_bits=13, storage="stream"),  # one word a row
]


def config_id(pe: Opq) -> str:
    return f"d{pe.d}w{pe.w}b{pe.vec_bits}{pe.storage}"


# a stored and a streamed matrix (one word a row); the slow tier adds the others (UltraRAM is
# only the memory's attribute: test_the_matrix_memory_is_the_storage_chosen)
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"d16w4b8bram", "d32w32b12stream"}, ids=config_id))
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(pe.component(), "opq", build_root / f"opq_{config_id(pe)}")
    return pe, sim


def test_reference_rounds_half_up_and_saturates():
    pe = Opq(d=4, w=2, vec_bits=8, frac_bits=2)
    a = np.diag([1, 2, 3, 32767])  # y = round(a_ii * x_i / 4), half up
    x = np.array([2, -1, -2, 100])
    assert list(pe.rotate(x, a)) == [1, 0, -1, 127]  # 0.5 -> 1, -0.5 -> 0, -1.5 -> -1, saturated
    rng = np.random.default_rng(0)
    a = rng.integers(-(2**15), 2**15, (4, 4))
    x = rng.integers(-128, 128, 4)
    want = np.clip(np.floor((a @ x + 2) / 4), -127, 127).astype(np.int64)
    assert np.array_equal(pe.rotate(x, a), want)


def test_bad_parameters_are_user_errors():
    with pytest.raises(FannsError, match="must divide"):
        Opq(d=10, w=4)
    with pytest.raises(FannsError, match="frac_bits"):
        Opq(frac_bits=0)
    with pytest.raises(FannsError, match="storage='lutram' unknown"):
        Opq(storage="lutram")


def test_the_matrix_memory_is_the_storage_chosen():
    for storage, style in (("bram", "block"), ("uram", "ultra")):
        verilog = Opq(d=32, w=8, storage=storage).verilog("top")
        assert f'ram_style = "{style}"' in verilog
        assert Opq(d=32, w=8, storage=storage).features()["uram_tiles" if storage == "uram" else "bram18_tiles"] > 0
    streamed = Opq(d=32, w=8, storage="stream")
    assert "ram_style" not in streamed.verilog("top")
    assert streamed.features()["uram_tiles"] == streamed.features()["bram18_tiles"] == 0
    assert streamed.ii() == Opq(d=32, w=8).ii() and streamed.latency() == Opq(d=32, w=8).latency() - 1


@pytest.mark.slow  # a fresh yosys synthesis (test_calibration keeps one in the fast tier)
def test_streamed_matrix_resources_match_a_fresh_synthesis():
    """The calibration has no streamed point: its fit, with the matrix memory's features at zero,
    must still price the streamed PE (measured: LUT 299 vs 316, FF 1,271 vs 1,297)."""
    pe = Opq(d=64, w=8, vec_bits=8, storage="stream")
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.dsp == predicted.dsp == pe.w
    assert measured.bram18 == measured.uram == 0 and predicted.bram18 == pytest.approx(0) == predicted.uram
    assert measured.lut == pytest.approx(predicted.lut, rel=0.1)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.1)


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(pe.testbench, {"pe": pe.params(), "queries": 120, "bubble": 0.3, "backpressure": 0.3, "seed": 4})
    assert out["mismatches"] == 0
    assert out["checked"] >= 1000
    assert 0 < out["saturated"] < out["checked"]


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    out = sim.run(pe.testbench, {"pe": pe.params(), "queries": 6, "bubble": 0.0, "backpressure": 0.0, "seed": 8})
    assert out["starts"] == [i * pe.ii() for i in range(6)]
    assert [e + 1 for e in out["ends"]] == [pe.cycles(i + 1) for i in range(6)]


@pytest.mark.parametrize("pe", CONFIGS, ids=config_id)
def test_hls_csim_matches_reference(pe, build_root):
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_opq.cpp"],
        build_root / "csim",
        {
            "TB_D": pe.d,
            "TB_W": pe.w,
            "TB_VEC_BITS": pe.vec_bits,
            "TB_FRAC": pe.frac_bits,
            "TB_STREAM": int(pe.storage == "stream"),
        },
    )
    rng = np.random.default_rng(9)
    lo, hi = pe.elem_range()
    for trial in range(3):
        nq = int(rng.integers(1, 30))
        a = rng.integers(-(2**15), 2**15, (pe.d, pe.d)).astype(np.int32)
        x = rng.integers(lo, hi + 1, (nq, pe.d)).astype(np.int32)
        y, last = run_program(
            binary,
            [x, a],
            [("int32", (nq, pe.d)), ("uint8", (nq, pe.d // pe.w))],
            build_root / f"csim_opq_{config_id(pe)}_{trial}",
            args=[str(nq)],
        )
        assert np.array_equal(y, np.stack([pe.rotate(xi, a) for xi in x]))
        assert last[:, -1].all() and not last[:, :-1].any()
