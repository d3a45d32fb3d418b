"""cocotb testbench of the stream FIFO PE (fanns.pe.stream_fifo).

Parameters (FANNS_TB_PARAMS): `pe`, `bursts` (list of burst sizes), `bubble`, `backpressure`,
`seed`. Each burst of random words goes in, the bench waits until the FIFO has drained, then
sends the next. Checks every word, in order; reports `checked` and per burst `spans` (cycles
from the first accepted to the last delivered word, inclusive) and `max_level` (the most words
held at once, which must reach `depth` under back-pressure).
"""

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge

from fanns.pe.stream_fifo import StreamFifo
from fanns_tb import Cycles, StreamSink, StreamSource, params, report, start


@cocotb.test()
async def fifo_delivers_in_order(dut):
    p = params()
    pe = StreamFifo(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    src = StreamSource(dut, "i", bubble=p["bubble"], seed=p["seed"] + 1)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 2)
    sink.start(cycles)
    level = {"now": 0, "max": 0}

    async def watch_level():
        while True:
            await RisingEdge(dut.clk)
            level["now"] += int(dut.i__valid.value) & int(dut.i__ready.value)
            level["now"] -= int(dut.o__valid.value) & int(dut.o__ready.value)
            level["max"] = max(level["max"], level["now"])

    cocotb.start_soon(watch_level())
    expected, spans = [], []
    for n in p["bursts"]:
        words = [int.from_bytes(rng.bytes((pe.width + 7) // 8), "little") for _ in range(n)]
        words[0] = (1 << pe.width) - 1  # all ones
        if n > 1:
            words[1] = 0
        expected += list(pe.transfer(np.array(words, dtype=object)))
        first = len(src.sent_cycles)
        await src.send(words, cycles)
        await sink.wait_for(len(expected))
        spans.append((n, sink.cycles[len(expected) - 1] - src.sent_cycles[first] + 1))
    got = sink.items[: len(expected)]
    mismatches = sum(int(g) != int(e) for g, e in zip(got, expected))
    assert len(got) == len(expected)
    assert mismatches == 0, f"{mismatches} mismatches"
    for _ in range(5):
        await RisingEdge(dut.clk)
    assert len(sink.items) == len(expected), "the FIFO delivered words that were never sent"
    report(checked=len(expected), mismatches=mismatches, spans=spans, max_level=level["max"])
