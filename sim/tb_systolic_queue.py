"""cocotb testbench of the graph-search queue (fanns.pe.systolic_queue) against its reference model.

Parameters (FANNS_TB_PARAMS): `pe`, `rounds`, `bubble`, `backpressure`, `seed`. Drives command
sequences shaped like Falcon's use (CLEAR, bursts of INSERTs, POPs, FLUSHes, with keys from
`random_keys`), checks every output (key, last) bit-exactly against `BoundedQueue`, and checks
`worst` in every cycle where `worst_valid` is high against the model's largest kept key. Reports
`checked` (outputs), `commands`, `worst_checked`, `mismatches` and, for the cycle model, the
accept and output cycles relative to the first accepted command.
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, RisingEdge

from fanns.pe.systolic_queue import BoundedQueue, Op, SystolicQueue
from fanns_tb import Cycles, StreamSink, StreamSource, pack, params, report, start
from fanns_tb.selection import decode_items, random_keys


def commands(pe, rng, rounds):
    """Falcon-like command sequence: per round a CLEAR, then insert/pop phases, then a FLUSH."""
    cmds = []
    for _ in range(rounds):
        cmds.append((Op.CLEAR, 0))
        for _ in range(int(rng.integers(1, 6))):
            keys = random_keys(rng, int(rng.integers(1, 2 * pe.s + 12)), pe.key_bits)
            cmds += [(Op.INSERT, int(k)) for k in keys]
            cmds += [(Op.POP, 0)] * int(rng.integers(0, 4))
            if rng.random() < 0.2:
                cmds.append((Op.FLUSH, 0))
        cmds.append((Op.FLUSH, 0))
    return cmds


@cocotb.test()
async def queue_matches_reference(dut):
    p = params()
    pe = SystolicQueue(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    src = StreamSource(dut, "cmd", bubble=p["bubble"], seed=p["seed"] + 1)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 2)
    sink.start(cycles)
    samples = []

    async def monitor():
        while True:
            await RisingEdge(dut.clk)
            if int(dut.worst_valid.value):
                samples.append((cycles.now, int(dut.worst.value)))

    cmds = commands(pe, rng, p["rounds"])
    expected = BoundedQueue(pe.s, pe.key_bits).run(cmds)
    cocotb.start_soon(monitor())
    await src.send([pack([(key, pe.key_bits), (op, 2)]) for op, key in cmds], cycles)
    await sink.wait_for(len(expected))
    await ClockCycles(dut.clk, 32)
    assert len(sink.items) == len(expected), f"{len(sink.items) - len(expected)} output items more than expected"
    got = decode_items(sink.items, pe.key_bits)
    bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert not bad, f"{len(bad)} mismatches; first (index, got, expected): {bad[0]}"

    # `worst` sampled at cycle c reflects the commands accepted before c.
    model, applied, wrong, checked = BoundedQueue(pe.s, pe.key_bits), 0, [], 0
    for c, worst in samples:
        while applied < len(cmds) and src.sent_cycles[applied] < c:
            model.run([cmds[applied]])
            applied += 1
        if c > src.sent_cycles[0]:
            checked += 1
            if worst != model.worst:
                wrong.append((c, worst, model.worst))
    assert not wrong, f"{len(wrong)} wrong `worst` samples; first (cycle, got, expected): {wrong[0]}"
    t0 = src.sent_cycles[0]
    report(
        checked=len(expected),
        commands=len(cmds),
        worst_checked=checked,
        mismatches=len(bad),
        ops=[int(op) for op, _ in cmds],
        accepts=[c - t0 for c in src.sent_cycles],
        outputs=[c - t0 for c in sink.cycles],
    )
