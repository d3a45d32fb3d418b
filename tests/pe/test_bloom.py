"""Bloom filter PE: MurmurHash2, reference model, false-positive rate, RTL, HLS, timing."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.paths import shared_dir
from fanns.pe.bloom import Bloom, murmur2, murmur2_u32
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from fanns.tools.yosys import synthesize
from tests.tiers import slow_params

# Known answers of the reference C implementation of MurmurHash2 (32-bit), seed 0x71b4954d, for
# inputs of length 16 down to 0, as published in Apache Commons Codec's MurmurHash2Test.
MURMUR2_INPUTS = [
    "ed53c4a53b1bbdc2527dc3ef535fae3b",
    "2165594ed812f90580e91eede456bb",
    "2b02b1d03dce313d97c4910df717",
    "8ea79a02e8b96ada92ade92d21",
    "a96dea7706ce1b8548274cfe",
    "ec93a01260eec80ac59062",
    "556d9366146ddf005899",
    "3c72201fd25919dba1",
    "23a8b18755f78a4b",
    "e2421c2dc1e43e",
    "66a6b55a74d9",
    "e876a89076",
    "eb253f87",
    "37a0a9",
    "5b5d",
    "7e",
    "",
]
MURMUR2_SEEDED = [
    0xD92E493E,
    0x8B50903B,
    0xC3372A7B,
    0x48F07E9E,
    0x8A5E4A6E,
    0x57916DF4,
    0xA346171F,
    0x1E319C86,
    0x9E1A03CD,
    0x9F973E6C,
    0x2D8C77F5,
    0xABED8751,
    0x296708B6,
    0x24F8078B,
    0x111B1553,
    0xA7DA1996,
    0xFE776C70,
]

CONFIGS = [Bloom(h=3, b=3 * 1024, w=32, seed=5), Bloom(h=2, b=2 * 128, w=8)]


def sequential_test_and_set(pe: Bloom, ids) -> list[bool]:
    """The filter written the obvious way, one id at a time (checks the vectorised model)."""
    bits = [set() for _ in range(pe.h)]
    out = []
    for i in ids:
        pos = [murmur2(int(i).to_bytes(4, "little"), s) % pe.bank_bits for s in pe.seeds()]
        out.append(all(p in bits[u] for u, p in enumerate(pos)))
        for u, p in enumerate(pos):
            bits[u].add(p)
    return out


def test_murmur2_known_answers():
    for hexkey, want in zip(MURMUR2_INPUTS, MURMUR2_SEEDED):
        assert murmur2(bytes.fromhex(hexkey), 0x71B4954D) == want, hexkey


def test_murmur2_of_ids_is_murmur2_of_their_bytes():
    ids = np.random.default_rng(1).integers(0, 2**32, 2000, dtype=np.uint64)
    for seed in (0, 0x9E3779B9, 0xFFFFFFFF):
        fast = murmur2_u32(ids, seed)
        assert [int(v) for v in fast] == [murmur2(int(i).to_bytes(4, "little"), seed) for i in ids]


def test_vectorised_reference_equals_sequential_filter():
    rng = np.random.default_rng(2)
    for pe in [*CONFIGS, Bloom(h=1, b=64, w=8), Bloom(h=5, b=5 * 256, w=16)]:
        ids = rng.integers(0, 400, 3000)
        assert list(pe.test_and_set(pe.new_state(), ids)) == sequential_test_and_set(pe, ids)


def test_state_carries_over_between_calls():
    pe = Bloom(h=3, b=3 * 512, w=16)
    ids = np.random.default_rng(3).integers(0, 10**6, 900)
    state = pe.new_state()
    split = np.concatenate([pe.test_and_set(state, ids[:400]), pe.test_and_set(state, ids[400:])])
    assert np.array_equal(split, pe.test_and_set(pe.new_state(), ids))
    assert pe.test_and_set(state, ids[:50]).all()  # inserted ids are always reported visited


@pytest.mark.parametrize("h,b,n", [(1, 2**12, 1000), (3, 3 * 2**12, 2000), (3, 3 * 2**14, 6000), (4, 2**13, 1500)])
def test_false_positive_rate_matches_theory(h, b, n):
    """After n distinct ids, 200k fresh ids are reported visited at the rate (1 - e^(-hn/b))^h."""
    pe = Bloom(h=h, b=b, w=64)
    rng = np.random.default_rng(h * 1000 + n)
    ids = rng.choice(2**32, n + 200_000, replace=False)
    state = pe.new_state()
    pe.test_and_set(state, ids[:n])
    rate = _probe_only(pe, state, ids[n:]).mean()
    p = pe.false_positive_rate(n)
    assert abs(rate - p) <= 5 * np.sqrt(p * (1 - p) / 200_000), (rate, p)
    assert pe.false_positive_rate_approx(n) == pytest.approx(p, rel=0.03)


@pytest.mark.parametrize("h,b", [(2, 2 * 2**11), (3, 3 * 2**12)])
def test_false_positives_while_filling_match_theory(h, b):
    """Streaming distinct ids through test-and-set: the j-th is a false positive with p(j-1)."""
    pe = Bloom(h=h, b=b, w=32)
    rng = np.random.default_rng(b)
    n, trials = 3000, 30
    expected = sum(pe.false_positive_rate(j) for j in range(n))
    var = sum(pe.false_positive_rate(j) * (1 - pe.false_positive_rate(j)) for j in range(n))
    got = sum(int(pe.test_and_set(pe.new_state(), rng.choice(2**32, n, replace=False)).sum()) for _ in range(trials))
    assert abs(got / trials - expected) <= 5 * np.sqrt(var / trials), (got / trials, expected)


def _probe_only(pe: Bloom, state: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Membership answers without setting bits (the FP rate after exactly n inserts)."""
    pos = pe.positions(ids)
    return np.all(state[np.arange(pe.h)[None, :], pos], axis=1)


def test_parameters_are_validated():
    with pytest.raises(FannsError, match="multiple of h"):
        Bloom(h=3, b=2**16)
    with pytest.raises(FannsError, match="power-of-two"):
        Bloom(h=3, b=3 * 1000)
    with pytest.raises(FannsError):
        Bloom(h=2, b=64, w=64)
    with pytest.raises(FannsError):
        Bloom(h=0)
    assert Bloom(h=3, b=3 * 2**16, w=64).clear_cycles() == 1024


# the slow tier adds three hashes over a 3,072-bit block RAM array
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"h2b256w8"}, ids=lambda pe: f"h{pe.h}b{pe.b}w{pe.w}"))
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(pe.component(), "bloom", build_root / f"bloom_{pe.h}_{pe.b}_{pe.w}_{pe.seed}")
    return pe, sim


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {
            "pe": pe.params(),
            "queries": 16,
            "max_ids": 300,
            "id_range": 400,
            "bubble": 0.3,
            "backpressure": 0.3,
            "seed": 7,
        },
    )
    assert out["mismatches"] == 0
    assert out["checked"] >= 1000
    assert 0 < out["visited"] < out["checked"]


def test_rtl_cycles_and_clearing_match_timing_model(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {
            "pe": pe.params(),
            "queries": 10,
            "max_ids": 200,
            "id_range": 300,
            "bubble": 0.0,
            "backpressure": 0.0,
            "seed": 3,
        },
    )
    assert out["mismatches"] == 0
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"
    assert out["gaps"] and all(g == pe.query_gap() for g in out["gaps"]), (out["gaps"], pe.query_gap())


@pytest.mark.parametrize("pe", [CONFIGS[0], Bloom(h=4, b=4 * 2**12, w=64, seed=77)], ids=["h3w32", "h4w64"])
def test_hls_csim_matches_reference(pe, build_root):
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_bloom.cpp"],
        build_root / "csim",
        {"TB_H": pe.h, "TB_BANK_BITS": pe.bank_bits, "TB_W": pe.w, "TB_SEED": f"{pe.seed}u"},
    )
    rng = np.random.default_rng(11)
    ids, last, expected = [], [], []
    for _ in range(12):
        n = int(rng.integers(1, 800))
        q = rng.integers(0, 2**32, n, dtype=np.uint64) % rng.choice([600, 2**32])
        ids.append(q)
        last.append(np.arange(n) == n - 1)
        expected.append(pe.test_and_set(pe.new_state(), q))
    ids, last, expected = (np.concatenate(a) for a in (ids, last, expected))
    (visited,) = run_program(
        binary,
        [ids.astype(np.uint32), last.astype(np.uint8)],
        [("uint8", (len(ids),))],
        build_root / "csim_bloom",
        args=[str(len(ids))],
    )
    assert np.array_equal(visited.astype(bool), expected)
    assert 0 < expected.sum() < len(expected)


@pytest.mark.slow  # a fresh yosys synthesis (test_calibration keeps one in the fast tier)
def test_fresh_synthesis_matches_calibrated_model():
    """A size the table was not fitted on: block RAMs and DSPs exact, logic within 25 %."""
    pe = Bloom(h=2, b=2 * 2**15, w=32)
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.bram18 == pytest.approx(predicted.bram18, abs=0.5)
    assert measured.dsp == pytest.approx(predicted.dsp, abs=0.5)
    assert measured.lut == pytest.approx(predicted.lut, rel=0.25)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.25)
