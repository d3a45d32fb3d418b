"""cocotb testbench of the narrow-to-wide converter (fanns.pe.stream_pack).

Parameters (FANNS_TB_PARAMS): `pe`, `frames` (list of item counts), `bubble`, `backpressure`,
`seed`. Checks every output word (data, keep, last) against the reference model; reports
`checked` (items) and per frame the span from its first item in to its last word out.
"""

import cocotb
import numpy as np

from fanns.pe.stream_pack import StreamPack
from fanns_tb import Cycles, StreamSink, StreamSource, pack, params, report, start, unpack


@cocotb.test()
async def words_match_reference(dut):
    p = params()
    pe = StreamPack(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    src = StreamSource(dut, "i", bubble=p["bubble"], seed=p["seed"] + 1)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 2)
    sink.start(cycles)
    expected, spans, items_total = [], [], 0
    for n in p["frames"]:
        items = [
            (int.from_bytes(rng.bytes((pe.item_bits + 7) // 8), "little") & ((1 << pe.item_bits) - 1), int(j == n - 1))
            for j in range(n)
        ]
        items_total += n
        expected += pe.pack(items)
        first = len(src.sent_cycles)
        await src.send([pack([(v, pe.item_bits), (la, 1)]) for v, la in items], cycles)
        await sink.wait_for(len(expected))
        spans.append((n, sink.cycles[len(expected) - 1] - src.sent_cycles[first] + 1))
    got = [tuple(unpack(v, [pe.word_bits, pe.k, 1])) for v in sink.items]
    mismatches = sum(g != e for g, e in zip(got, expected)) + abs(len(got) - len(expected))
    report(checked=items_total, words=len(expected), mismatches=mismatches, spans=spans)
    assert mismatches == 0, f"{mismatches} mismatches"
