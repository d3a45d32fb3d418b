"""LUT construction PE: reference model, RTL (cocotb + Verilator), HLS (g++ C simulation), timing."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.paths import shared_dir
from fanns.pe.build_lut import KSUB, BuildLut
from fanns.pe.pq_decode import PqDecode
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from fanns.tools.yosys import synthesize
from tests.tiers import slow_params

CONFIGS = [
    BuildLut(d=16, m=4, w=8, vec_bits=8, lut_shift=5, lut_bits=12),  # two sub-spaces per cycle
    # one sub-space every 2 cycles, the codebook in UltraRAM
    BuildLut(d=12, m=2, w=3, vec_bits=10, lut_shift=6, lut_bits=16, storage="uram"),
    # a quarter of the rows: one of four PEs building a LUT together
    BuildLut(d=16, m=8, w=4, vec_bits=8, lut_shift=4, lut_bits=14, rows=64),
]


def config_id(pe: BuildLut) -> str:
    return f"d{pe.d}m{pe.m}w{pe.w}{pe.storage}r{pe.rows}"


# UltraRAM, and block RAM sweeping a share of the rows; the slow tier adds all rows in block RAM
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"d12m2w3uramr256", "d16m8w4bramr64"}, ids=config_id))
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(pe.component(), "build_lut", build_root / f"build_lut_{config_id(pe)}")
    return pe, sim


def test_reference_is_brute_force_lut():
    rng = np.random.default_rng(2)
    pe = BuildLut(d=12, m=3, w=4, vec_bits=9, lut_shift=3, lut_bits=14)
    q, c = rng.integers(-256, 256, 12), rng.integers(-256, 256, 12)
    book = rng.integers(-256, 256, (3, KSUB, 4))
    lut = pe.luts(q, c, book)
    r = q - c
    for i in range(3):
        for j in range(0, KSUB, 17):
            exact = int(((r[4 * i : 4 * i + 4] - book[i, j]) ** 2).sum())
            assert lut[i, j] == min(exact >> 3, 2**14 - 1)


def test_output_words_feed_pq_decode():
    """The LUT words of build_lut are the LUT words pq_decode consumes."""
    rng = np.random.default_rng(5)
    pe = BuildLut(d=16, m=4, w=4, vec_bits=8, lut_shift=0, lut_bits=16)
    lut = pe.luts(rng.integers(-128, 128, 16), rng.integers(-128, 128, 16), rng.integers(-128, 128, (4, KSUB, 4)))
    words = PqDecode(m=4, lut_bits=16).lut_beats(lut)
    assert [tuple((wd >> (16 * i)) & 0xFFFF for i in range(4)) for wd in words] == [
        tuple(lut[:, j]) for j in range(KSUB)
    ]


def test_a_share_of_the_rows_is_the_same_share_of_the_lut():
    """W PEs of `rows` = 256/W, PE r filled with rows r mod W, build the full LUT's words
    between them, W times as fast."""
    rng = np.random.default_rng(11)
    full = BuildLut(d=16, m=4, w=4, vec_bits=8, lut_shift=2, lut_bits=12)
    q, c = rng.integers(-128, 128, 16), rng.integers(-128, 128, 16)
    book = rng.integers(-128, 128, (4, KSUB, 4))
    lut = full.luts(q, c, book)
    for ways in (2, 4):
        share = BuildLut(d=16, m=4, w=4, vec_bits=8, lut_shift=2, lut_bits=12, rows=KSUB // ways)
        for r in range(ways):
            assert np.array_equal(share.luts(q, c, book[:, r::ways]), lut[:, r::ways])
        assert share.ii() == (KSUB // ways + 1) * share.words
        assert share.features()["bram18_tiles"] <= full.features()["bram18_tiles"]


def test_bad_parameters_are_user_errors():
    with pytest.raises(FannsError, match="sub-vector length"):
        BuildLut(d=24, m=4, w=4)
    with pytest.raises(FannsError, match="m=5 must divide"):
        BuildLut(d=16, m=5, w=4)
    with pytest.raises(FannsError, match="rows=96 must divide 256"):
        BuildLut(d=16, m=4, w=4, rows=96)


def test_the_codebook_memory_is_the_storage_chosen():
    for storage, style, tiles in (("bram", "block", "bram18_tiles"), ("uram", "ultra", "uram_tiles")):
        pe = BuildLut(d=64, m=8, w=8, storage=storage)
        assert f'ram_style = "{style}"' in pe.verilog("top")
        assert pe.features()[tiles] > 0
        assert pe.ii() == BuildLut(d=64, m=8, w=8).ii() and pe.latency() == BuildLut(d=64, m=8, w=8).latency()
    with pytest.raises(FannsError, match="storage='stream' unknown"):
        BuildLut(storage="stream")


@pytest.mark.slow  # a fresh yosys synthesis: about a minute
def test_uram_codebook_resources_match_a_fresh_synthesis():
    """Held out of the calibration (its URAM points are d = 128 and 256): a 192-d codebook of
    64-bit rows, 6,144 deep, in two UltraRAMs, priced by the fit against yosys."""
    pe = BuildLut(d=192, m=24, w=8, vec_bits=8, storage="uram")
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.bram18 == 0 and predicted.bram18 == pytest.approx(0)
    assert measured.uram == pytest.approx(predicted.uram, rel=0.1)
    assert measured.lut == pytest.approx(predicted.lut, rel=0.1)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.1)


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench, {"pe": pe.params(), "queries": 3, "max_probes": 3, "bubble": 0.3, "backpressure": 0.3, "seed": 6}
    )
    assert out["mismatches"] == 0
    assert out["checked"] >= 3 * pe.rows  # every probe of 3 queries, one or more each
    assert 0 < out["saturated"] < out["entries"]


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench, {"pe": pe.params(), "queries": 2, "max_probes": 2, "bubble": 0.0, "backpressure": 0.0, "seed": 3}
    )
    n = len(out["starts"])
    assert out["starts"] == [i * pe.ii() for i in range(n)]
    assert [e + 1 for e in out["ends"]] == [pe.cycles(i + 1) for i in range(n)]


@pytest.mark.parametrize("pe", CONFIGS, ids=config_id)
def test_hls_csim_matches_reference(pe, build_root):
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_build_lut.cpp"],
        build_root / "csim",
        {
            "TB_D": pe.d,
            "TB_M": pe.m,
            "TB_W": pe.w,
            "TB_SHIFT": pe.lut_shift,
            "TB_LUT_BITS": pe.lut_bits,
            "TB_ROWS": pe.rows,
        },
    )
    rng = np.random.default_rng(8)
    lo, hi = pe.elem_range()
    for trial in range(3):
        n = int(rng.integers(1, 6))
        q = rng.integers(lo, hi + 1, (n, pe.d)).astype(np.int32)
        c = rng.integers(lo, hi + 1, (n, pe.d)).astype(np.int32)
        book = rng.integers(lo, hi + 1, (pe.m, pe.rows, pe.dsub)).astype(np.int32)
        last = (rng.random(n) < 0.5).astype(np.uint8)
        luts, last_out = run_program(
            binary,
            [q, c, last, book],
            [("uint32", (n, pe.rows, pe.m)), ("uint8", (n, pe.rows))],
            build_root / f"csim_build_lut_{config_id(pe)}_{trial}",
            args=[str(n)],
        )
        for t in range(n):
            assert np.array_equal(luts[t].T, pe.luts(q[t], c[t], book))
        assert np.array_equal(last_out[:, -1], last) and not last_out[:, :-1].any()
