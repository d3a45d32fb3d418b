"""PQ decode / ADC unit: reference model, RTL (cocotb + Verilator), HLS (g++ C simulation), timing."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.numerics import IvfPqFormat, quantize, sentinel
from fanns.paths import shared_dir
from fanns.pe.pq_decode import KSUB, PqDecode
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [
    PqDecode(m=16, lut_bits=16, double_buffer=True),
    PqDecode(m=5, lut_bits=9, double_buffer=False),
    PqDecode(m=7, lut_bits=12, double_buffer=True, lut_words=2),
    PqDecode(m=3, lut_bits=16, double_buffer=False, lut_words=4),
    PqDecode(m=6, lut_bits=10, double_buffer=True, lut_words=8),
]


def config_id(pe: PqDecode) -> str:
    return f"m{pe.m}l{pe.lut_bits}{'db' if pe.double_buffer else 'sb'}w{pe.lut_words}"


# double-buffered one word a beat, single-buffered wide beats; the slow tier adds the others
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"m16l16dbw1", "m3l16sbw4"}, ids=config_id))
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(pe.component(), "pq_decode", build_root / f"pq_decode_{config_id(pe)}")
    return pe, sim


def test_reference_is_adc_of_numerics_luts():
    """LUTs built by numerics.build_luts, scanned by the unit's model == brute-force sum of entries."""
    rng = np.random.default_rng(0)
    fmt = IvfPqFormat(d=32, m=8, scale=20.0, ivf_shift=0, lut_shift=4, vec_bits=8)
    pe = PqDecode(m=8, lut_bits=fmt.lut_bits)
    q = fmt.quantize(rng.normal(size=32))
    c = fmt.quantize(rng.normal(size=32))
    book = quantize(rng.normal(size=(8, KSUB, 4)), fmt.scale, fmt.vec_bits)
    lut = fmt.build_luts(q, c, book)
    codes = rng.integers(0, KSUB, (300, 8))
    ids = rng.integers(0, 1 << 32, 300, dtype=np.uint64)
    pad = rng.random(300) < 0.1
    keys = pe.scan(lut, codes, ids, pad)
    for t in range(300):
        dist = sum(int(lut[i, codes[t, i]]) for i in range(8))
        want = sentinel(pe.key_bits) if pad[t] else (dist << 32) | int(ids[t])
        assert int(keys[t]) == want
    assert pe.dist_bits == fmt.pq_dist_bits


def test_schedule_model_properties():
    sb, db = PqDecode(m=16, double_buffer=False), PqDecode(m=16, double_buffer=True)
    for n in (1, 7, 300):
        assert sb.cycles_for_cells([n]) == sb.cycles(n) == db.cycles(n)
    sizes = [100, 600, 1, 256, 40]
    # single buffer: every cell pays its full LUT load; double buffer hides it behind long scans
    assert sb.cycles_for_cells(sizes) == sum(KSUB + n for n in sizes) + sb.depth()
    assert db.cycles_for_cells(sizes) < sb.cycles_for_cells(sizes)
    assert db.cycles_for_cells([1000] * 4) == KSUB + 4000 + db.depth()
    assert db.cycles_for_cells([1] * 4) == 4 * KSUB + 1 + db.depth()
    assert db.cycles_for_cells([]) == 0
    with pytest.raises(FannsError, match="at least one item"):
        db.cycles_for_cells([3, 0])


def test_wide_lut_beats_cut_the_load():
    """W words a beat load a LUT in 256/W cycles: short cells scan W times as often."""
    for w in (2, 4, 8):
        pe = PqDecode(m=16, lut_words=w)
        assert pe.load_cycles == KSUB // w
        assert pe.cycles_for_cells([1] * 4) == 4 * (KSUB // w) + 1 + pe.depth()
        assert list(pe.cell_cycles([10, 300])) == [max(10, KSUB // w), 300]
    lut = np.arange(3 * KSUB).reshape(3, KSUB) % 251
    beats = PqDecode(m=3, lut_bits=8, lut_words=4).lut_beats(lut)
    assert len(beats) == KSUB // 4
    assert [(beats[5] >> (24 * r + 8 * i)) & 0xFF for r in range(4) for i in range(3)] == [
        int(lut[i, 20 + r]) for r in range(4) for i in range(3)
    ]


def test_wide_columns_are_priced_by_their_memory_kind():
    """256 words of a double-buffered W = 2 column stay in block RAM; W = 4's 128 go to LUT RAM."""
    one, two, four = (PqDecode(m=16, lut_words=w).resource_features() for w in (1, 2, 4))
    assert (one["bram_columns"], two["bram_columns"], four["bram_columns"]) == (16, 32, 0)
    assert one["lutram_prims"] == two["lutram_prims"] == 0 < four["lutram_prims"]
    assert one["mux_bits"] == 0 < two["mux_bits"] < four["mux_bits"]


def test_bad_parameters_are_user_errors():
    with pytest.raises(FannsError, match="m=0"):
        PqDecode(m=0)
    with pytest.raises(FannsError, match="lut_bits"):
        PqDecode(lut_bits=40)
    with pytest.raises(FannsError, match="lut_words=3"):
        PqDecode(lut_words=3)


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {
            "pe": pe.params(),
            "queries": 6,
            "max_cells": 4,
            "max_codes": 300,
            "bubble": 0.3,
            "backpressure": 0.3,
            "seed": 5,
        },
    )
    assert out["mismatches"] == 0
    assert out["checked"] >= 1000


def test_rtl_schedule_matches_timing_model(rtl):
    """Every cell's LUT-load start, scan start and scan end, and the last key, cycle-exact."""
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {
            "pe": pe.params(),
            "queries": 4,
            "max_cells": 4,
            "max_codes": 600,
            "bubble": 0.0,
            "backpressure": 0.0,
            "seed": 9,
        },
    )
    sizes = out["sizes"]
    assert [tuple(s) for s in out["schedule"]] == pe.schedule(sizes)
    assert out["last_out"][-1] + 1 == pe.cycles_for_cells(sizes)


def test_rtl_single_cell_matches_per_n_formula(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {
            "pe": pe.params(),
            "queries": 3,
            "max_cells": 3,
            "max_codes": 400,
            "bubble": 0.0,
            "backpressure": 0.0,
            "seed": 2,
            "isolated": True,
        },
    )
    for (load, _, _), end, n in zip(out["schedule"], out["last_out"], out["sizes"]):
        assert end - load + 1 == pe.cycles(n), f"N={n}: simulated {end - load + 1}, model {pe.cycles(n)}"


@pytest.mark.parametrize("pe", CONFIGS, ids=config_id)
def test_hls_csim_matches_reference(pe, build_root):
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_pq_decode.cpp"],
        build_root / "csim",
        {"TB_M": pe.m, "TB_LUT_BITS": pe.lut_bits, "TB_W": pe.lut_words},
    )
    rng = np.random.default_rng(13)
    for trial in range(3):
        ncells = int(rng.integers(1, 6))
        sizes = rng.integers(1, 400, ncells)
        luts = rng.integers(0, 1 << pe.lut_bits, (ncells, pe.m, KSUB)).astype(np.uint32)
        n = int(sizes.sum())
        codes = rng.integers(0, KSUB, (n, pe.m)).astype(np.uint8)
        ids = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        pad = (rng.random(n) < 0.2).astype(np.uint8)
        last_cell = np.zeros(n, dtype=np.uint8)
        last_cell[np.cumsum(sizes) - 1] = 1
        last_query = last_cell * (rng.random(n) < 0.5)
        last_query[-1] = 1
        # LUT words as the stream carries them: [cell, j, i]
        lut_stream = np.ascontiguousarray(luts.transpose(0, 2, 1))
        keys, last = run_program(
            binary,
            [lut_stream, codes, ids, pad, last_cell, last_query.astype(np.uint8)],
            [("uint64", (n,)), ("uint8", (n,))],
            build_root / f"csim_pq_decode_{config_id(pe)}_{trial}",
            args=[str(ncells), str(n)],
        )
        want, start = [], 0
        for c, size in enumerate(sizes):
            sl = slice(start, start + size)
            want.append(pe.scan(luts[c], codes[sl], ids[sl].astype(np.uint64), pad[sl].astype(bool)))
            start += size
        assert np.array_equal(keys, np.concatenate(want))
        assert np.array_equal(last, last_query)
