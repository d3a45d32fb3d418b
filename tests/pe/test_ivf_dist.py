"""IVF distance PE: reference model, RTL (cocotb + Verilator), HLS (g++ C simulation), timing."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.numerics import IvfPqFormat, split_keys
from fanns.paths import shared_dir
from fanns.pe.ivf_dist import IvfDist
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim

CONFIGS = [
    IvfDist(d=16, w=4, vec_bits=8, nlist=40, ivf_shift=3, storage="bram", id_base=1000),
    IvfDist(d=12, w=3, vec_bits=16, nlist=25, ivf_shift=0, storage="stream", id_base=7),
]


@pytest.fixture(scope="module", params=CONFIGS, ids=lambda pe: f"d{pe.d}w{pe.w}b{pe.vec_bits}{pe.storage}")
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(
        pe.component(), "ivf_dist", build_root / f"ivf_dist_{pe.d}_{pe.w}_{pe.vec_bits}_{pe.storage}"
    )
    return pe, sim


def test_reference_is_shifted_saturated_l2():
    rng = np.random.default_rng(1)
    pe = IvfDist(d=16, w=4, vec_bits=16, nlist=30, ivf_shift=2, storage="stream", id_base=5)
    q = rng.integers(-(2**15), 2**15, 16)
    c = rng.integers(-(2**15), 2**15, (30, 16))
    dist, ids = split_keys(pe.keys(q, c))
    exact = ((c - q) ** 2).sum(1)
    assert np.array_equal(dist, np.minimum(exact >> 2, 2**32 - 1))
    assert (exact >> 2).max() >= 2**32  # the saturation branch is exercised
    assert np.array_equal(ids, 5 + np.arange(30))
    fmt = IvfPqFormat(d=16, m=4, scale=1.0, ivf_shift=2, lut_shift=0, vec_bits=16)
    assert np.array_equal(dist, fmt.ivf_distances(q[None], c)[0])


def test_bad_parameters_are_user_errors():
    with pytest.raises(FannsError, match="must divide"):
        IvfDist(d=10, w=4)
    with pytest.raises(FannsError, match="storage"):
        IvfDist(storage="hbm")


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(pe.testbench, {"pe": pe.params(), "queries": 60, "bubble": 0.3, "backpressure": 0.3, "seed": 4})
    assert out["mismatches"] == 0 and out["fwd_ok"]
    assert out["checked"] >= 1000


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    out = sim.run(pe.testbench, {"pe": pe.params(), "queries": 6, "bubble": 0.0, "backpressure": 0.0, "seed": 8})
    assert [e + 1 for e in out["ends"]] == [pe.cycles(i + 1) for i in range(6)]


@pytest.mark.parametrize("pe", CONFIGS, ids=["bram", "stream"])
def test_hls_csim_matches_reference(pe, build_root):
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_ivf_dist.cpp"],
        build_root / "csim",
        {
            "TB_D": pe.d,
            "TB_W": pe.w,
            "TB_NLIST": pe.nlist,
            "TB_SHIFT": pe.ivf_shift,
            "TB_DIST_BITS": pe.ivf_dist_bits,
            "TB_STREAM": int(pe.storage == "stream"),
        },
    )
    rng = np.random.default_rng(3)
    lo, hi = pe.elem_range()
    for trial in range(3):
        nq = int(rng.integers(1, 20))
        q = rng.integers(lo, hi + 1, (nq, pe.d)).astype(np.int32)
        c = rng.integers(lo, hi + 1, (pe.nlist, pe.d)).astype(np.int32)
        keys, last, fwd = run_program(
            binary,
            [q, c],
            [("uint64", (nq, pe.nlist)), ("uint8", (nq, pe.nlist)), ("int32", (nq, pe.d))],
            build_root / f"csim_ivf_dist_{pe.storage}_{trial}",
            args=[str(nq), str(pe.id_base)],
        )
        assert np.array_equal(keys, np.stack([pe.keys(qi, c) for qi in q]))
        assert np.array_equal(last[:, -1], np.ones(nq)) and not last[:, :-1].any()
        assert np.array_equal(fwd, q)
