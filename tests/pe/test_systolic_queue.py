"""Graph-search queue: reference model, schedule proof with pops, RTL (bit-exact outputs and
`worst`, exact accept/output cycles against `schedule`), HLS C simulation."""

import numpy as np
import pytest

from fanns.engines.systolic import zero_one_check
from fanns.errors import FannsError
from fanns.numerics import sentinel
from fanns.paths import shared_dir
from fanns.pe.systolic_queue import BoundedQueue, Op, SystolicQueue
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [SystolicQueue(s=7, key_bits=64), SystolicQueue(s=1, key_bits=3)]


# the slow tier adds the one-cell queue
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"s7k64"}, ids=lambda pe: f"s{pe.s}k{pe.key_bits}"))
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(pe.component(), "systolic_queue", build_root / f"systolic_queue_{pe.s}_{pe.key_bits}")
    return pe, sim


def random_commands(rng, s, key_bits, n):
    ops = rng.choice([Op.INSERT, Op.POP, Op.FLUSH, Op.CLEAR], n, p=[0.6, 0.3, 0.05, 0.05])
    keys = rng.integers(0, sentinel(key_bits), n, dtype=np.uint64, endpoint=True)
    keys[rng.random(n) < 0.1] = sentinel(key_bits)
    return [(int(o), int(k)) for o, k in zip(ops, keys)]


def naive_queue(commands, s, key_bits):
    """Unbounded list of live keys; the largest beyond s is dropped; empty pops give the sentinel."""
    live, out, fill = [], [], sentinel(key_bits)
    for op, key in commands:
        if op == Op.INSERT:
            live.append(key)
            if len(live) > s:
                live.remove(max(live))
        elif op == Op.POP:
            out.append((live.pop(live.index(min(live))) if live else fill, 1))
        elif op == Op.FLUSH:
            keys = sorted(live) + [fill] * (s - len(live))
            out += [(k, int(i == s - 1)) for i, k in enumerate(keys)]
            live = []
        else:
            live = []
    return out


@pytest.mark.parametrize("s", [1, 2, 7, 16])
def test_reference_matches_naive_bounded_queue(s):
    rng = np.random.default_rng(s)
    for key_bits in (3, 64):
        cmds = random_commands(rng, s, key_bits, 3000)
        assert BoundedQueue(s, key_bits).run(cmds) == naive_queue(cmds, s, key_bits)


@pytest.mark.parametrize("s", [2, 9, 12])
def test_schedule_with_pops_is_exact_for_all_zero_one_inputs(s):
    assert zero_one_check(s, with_pops=True)["settle"] == s - 1


def test_schedule_costs():
    pe = SystolicQueue(s=4, key_bits=64)
    ops = [Op.INSERT, Op.INSERT, Op.POP, Op.POP, Op.INSERT, Op.FLUSH, Op.CLEAR, Op.POP, Op.INSERT]
    accepts, outputs = pe.schedule(ops)
    # INSERTs 2 apart; POP s cycles after the last INSERT; FLUSH s outputs; CLEAR 1; POP at once.
    assert accepts == [0, 2, 6, 7, 8, 12, 16, 17, 18]
    assert outputs == [7, 8, 13, 14, 15, 16, 18]
    n = 5
    accepts, outputs = pe.schedule([Op.INSERT] * n + [Op.FLUSH])
    assert outputs[-1] - accepts[0] + 1 == pe.cycles(n)


def test_bad_parameters_raise_fanns_error():
    with pytest.raises(FannsError):
        SystolicQueue(s=0)


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(pe.testbench, {"pe": pe.params(), "rounds": 40, "bubble": 0.3, "backpressure": 0.4, "seed": 5})
    assert out["mismatches"] == 0
    assert out["commands"] >= 1000 and out["worst_checked"] >= 1000


def test_rtl_cycles_match_schedule(rtl):
    pe, sim = rtl
    out = sim.run(pe.testbench, {"pe": pe.params(), "rounds": 6, "bubble": 0.0, "backpressure": 0.0, "seed": 9})
    accepts, outputs = pe.schedule(out["ops"])
    assert out["accepts"] == accepts
    assert out["outputs"] == outputs


@pytest.mark.parametrize("pe", [SystolicQueue(s=16, key_bits=64), SystolicQueue(s=1, key_bits=52)], ids=["s16", "s1"])
def test_hls_csim_matches_reference(pe, build_root):
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_systolic_queue.cpp"],
        build_root / "csim",
        {"TB_S": pe.s, "TB_KEY_BITS": pe.key_bits},
    )
    rng = np.random.default_rng(21)
    cmds = random_commands(rng, pe.s, pe.key_bits, 5000)
    expected = BoundedQueue(pe.s, pe.key_bits).run(cmds)
    ops = np.array([op for op, _ in cmds], dtype=np.uint8)
    keys = np.array([k for _, k in cmds], dtype=np.uint64)
    (out,) = run_program(
        binary,
        [ops, keys],
        [("uint64", (len(expected), 2))],
        build_root / f"csim_sq_{pe.s}",
        args=[str(len(cmds)), str(len(expected))],
    )
    assert [(int(k), int(last)) for k, last in out] == expected
