"""HSMPQG: network proof (0-1 principle), reference = exact s smallest, RTL bit-exact + cycles, HLS."""

import itertools
import math

import numpy as np
import pytest

from fanns.engines.cmpnet import Network, bitonic_sorter, merge_tree
from fanns.errors import FannsError
from fanns.numerics import sentinel, smallest_keys
from fanns.paths import shared_dir
from fanns.pe.hpq import Hpq
from fanns.pe.hsmpqg import Hsmpqg
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from fanns.tools.yosys import synthesize
from tests.tiers import slow_params

CONFIGS = [Hsmpqg(z=6, s=3, key_bits=20), Hsmpqg(z=12, s=5, key_bits=64), Hsmpqg(z=5, s=1, key_bits=20)]


# z=6, s=3: two 4-wide sorters with tied-off inputs, their merge and an HPQ over 3 streams (the
# PE's roads at the smallest size); the slow tier adds the same roads at z=12, s=5 with 64-bit
# keys, and s=1 (no sorter, a minimum tree)
@pytest.fixture(
    scope="module", params=slow_params(CONFIGS, fast={"z6s3k20"}, ids=lambda pe: f"z{pe.z}s{pe.s}k{pe.key_bits}")
)
def rtl(request, build_root):
    pe = request.param
    return pe, RtlSim.from_component(pe.component(), "hsmpqg", build_root / f"hsmpqg_{pe.z}_{pe.s}_{pe.key_bits}")


def random_streams(rng, pe, max_items):
    return [
        rng.integers(0, sentinel(pe.key_bits), int(n), dtype=np.uint64, endpoint=True)
        for n in rng.integers(1, max_items + 1, pe.z)
    ]


@pytest.mark.parametrize("z,s", [(16, 10), (13, 4), (9, 8), (6, 1), (15, 2), (3, 2)])
def test_network_selects_the_s_smallest_of_every_zero_one_cycle(z, s):
    """0-1 principle: correct on all 2**z binary cycles, so correct on every cycle of keys."""
    pe = Hsmpqg(z=z, s=s, key_bits=1)
    x = np.array(list(itertools.product([0, 1], repeat=z)), dtype=np.uint64)
    padded = np.concatenate([x, np.ones((len(x), pe.sorters * pe.l - z), dtype=np.uint64)], axis=1)
    assert np.array_equal(pe.network().evaluate(padded, 1), np.sort(x, axis=1)[:, :s])


@pytest.mark.parametrize("z,s,key_bits", [(80, 10, 64), (36, 10, 52), (12, 5, 64), (5, 1, 20), (33, 16, 52), (3, 2, 4)])
def test_reference_is_exact_smallest_of_all_streams(z, s, key_bits):
    pe = Hsmpqg(z=z, s=s, key_bits=key_bits)
    rng = np.random.default_rng(z * s)
    for _ in range(100):
        streams = random_streams(rng, pe, 3 * s + 5)
        if rng.random() < 0.3:  # duplicates and sentinels
            streams = [
                k % np.uint64(7) if j % 2 else np.full(len(k), sentinel(key_bits), dtype=np.uint64)
                for j, k in enumerate(streams)
            ]
        assert np.array_equal(pe.select(streams), smallest_keys(np.concatenate(streams), s, fill_bits=key_bits))


def test_structure_follows_figure_6_6():
    """s = 10 sorts groups of 16; 64 < z <= 80 needs five sorters (Fig. 6.6), 16 < z <= 32 two, 32 < z <= 48 three."""
    for z, sorters in [(80, 5), (65, 5), (32, 2), (17, 2), (48, 3), (33, 3)]:
        pe = Hsmpqg(z=z, s=10, key_bits=64)
        assert (pe.l, pe.sorters) == (16, sorters)
        depth = 4 * 5 // 2 + math.ceil(math.log2(sorters)) * (1 + 4)
        assert pe.network().depth == depth
        assert pe.latency() == depth + Hpq(z=10, s=10, key_bits=64).latency()
    assert Hsmpqg(z=20, s=1).l == 1 and Hsmpqg(z=20, s=16).l == 16 and Hsmpqg(z=20, s=17).l == 32


def test_dummy_inputs_and_unused_outputs_cost_nothing():
    """Tying dummies to the sentinel and pruning unused outputs leaves fewer comparators than the full tree."""
    full = Hsmpqg(z=80, s=16, key_bits=64).network().cost()["comparators"]
    assert Hsmpqg(z=65, s=16, key_bits=64).network().cost()["comparators"] < full
    assert Hsmpqg(z=80, s=10, key_bits=64).network().cost()["comparators"] < full


@pytest.mark.parametrize("z,s", [(80, 10), (65, 16), (12, 5), (20, 1), (33, 16), (100, 3)])
def test_pruning_before_the_tie_off_builds_the_same_network(z, s):
    """The network is pruned to its s outputs before the dummy inputs are tied off (cheaper for the
    DSE); tying off the whole network and pruning once gives the very same stages."""
    pe = Hsmpqg(z=z, s=s, key_bits=64)
    whole = Network.beside([bitonic_sorter(pe.l)] * pe.sorters).then(merge_tree(pe.sorters, pe.l))
    assert pe.network() == whole.with_sentinel_inputs(range(z, pe.sorters * pe.l)).pruned(range(s))


def test_bad_parameters_and_inputs_are_user_errors():
    with pytest.raises(FannsError, match="s < z") as err:
        Hsmpqg(z=8, s=8)
    assert "hpq" in str(err.value)
    with pytest.raises(FannsError):
        Hsmpqg(z=8, s=0)
    with pytest.raises(FannsError):
        Hsmpqg(z=8, s=4, key_bits=65)
    pe = Hsmpqg(z=3, s=2, key_bits=8)
    with pytest.raises(FannsError, match="expected 3 streams"):
        pe.select([[1], [2]])
    with pytest.raises(FannsError, match="at least one key"):
        pe.select([[1], [], [3]])
    with pytest.raises(FannsError, match="2\\*\\*8"):
        pe.select([[1], [2], [256]])


def tb_params(pe, **kw):
    return {"pe_name": pe.name, "pe": pe.params(), "bubble": 0.0, "backpressure": 0.0, "seed": 1} | kw


def test_rtl_matches_reference_timing_and_interval_models(rtl):
    """One build, three benches: random queries under bubbles/back-pressure, stall-free spans, back to back."""
    pe, sim = rtl
    out = sim.run(pe.testbench, tb_params(pe, queries=12, max_items=40, bubble=0.3, backpressure=0.4, seed=5))
    assert out["mismatches"] == 0 and out["inexact"] == 0
    assert out["inputs"] >= 1000
    sizes = [1, 2, 7, 2 * pe.s + 3, 40]
    out = sim.run(pe.testbench, tb_params(pe, queries=len(sizes), sizes=sizes, max_items=0))
    assert [n for n, _ in out["spans"]] == sizes
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"
    for n in (2, 30):
        out = sim.run(pe.testbench, tb_params(pe, queries=4, sizes=[n] * 4, max_items=0, pipelined=True))
        assert out["mismatches"] == 0
        ((_, cycles),) = out["spans"]
        assert cycles == pe.cycles(n) + 3 * pe.interval(n), f"N={n}: simulated {cycles}"


@pytest.mark.parametrize(
    "pe",
    [Hsmpqg(z=20, s=10, key_bits=64), Hsmpqg(z=9, s=3, key_bits=52), Hsmpqg(z=4, s=1, key_bits=64)],
    ids=["z20s10", "z9s3", "z4s1"],
)
def test_hls_csim_matches_reference(pe, build_root):
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_hpq.cpp"],
        build_root / "csim",
        {"TB_HSMPQG": 1, "TB_Z": pe.z, "TB_S": pe.s, "TB_KEY_BITS": pe.key_bits},
    )
    rng = np.random.default_rng(17)
    queries = 30
    streams = [random_streams(rng, pe, 4 * pe.s + 20) for _ in range(queries)]
    for q in streams[::3]:
        q[0][:] = np.uint64(sentinel(pe.key_bits))
        q[-1][:] = q[-1] % np.uint64(3)  # duplicates
    sizes = np.array([[len(k) for k in q] for q in streams], dtype=np.uint32)
    keys = np.concatenate([k for q in streams for k in q])
    (out,) = run_program(
        binary,
        [sizes, keys],
        [("uint64", (queries, pe.s))],
        build_root / f"csim_hsmpqg_{pe.z}_{pe.s}",
        args=[str(queries)],
    )
    for q in range(queries):
        assert np.array_equal(out[q], pe.select(streams[q])), f"query {q}"


@pytest.mark.slow  # a fresh yosys synthesis (test_calibration keeps one in the fast tier)
def test_fresh_synthesis_matches_calibrated_model():
    """A configuration the table was not fitted on: yosys now vs the committed linear model."""
    pe = Hsmpqg(z=5, s=2, key_bits=32)
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.lut == pytest.approx(predicted.lut, rel=0.10)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.05)
    assert measured.dsp == predicted.dsp == 0 and measured.bram18 == predicted.bram18 == 0
