"""cocotb testbench of the wide-to-narrow converter (fanns.pe.stream_unpack).

Parameters (FANNS_TB_PARAMS): `pe`, `frames` (list of word counts), `partial` (probability
that a frame's first/last word keeps only a prefix/suffix or a random non-empty subset),
`bubble`, `backpressure`, `seed`. Checks every item and last flag against the reference
model; reports `checked` and per frame the span from its first word in to its last item out.
"""

import cocotb
import numpy as np

from fanns.pe.stream_unpack import StreamUnpack
from fanns_tb import Cycles, StreamSink, StreamSource, pack, params, report, start, unpack


def random_keep(rng, k: int) -> int:
    keep = 0
    while keep == 0:
        keep = (
            int(rng.integers(1, 1 << k))
            if k < 63
            else int.from_bytes(rng.bytes((k + 7) // 8), "little") & ((1 << k) - 1)
        )
    return keep


@cocotb.test()
async def items_match_reference(dut):
    p = params()
    pe = StreamUnpack(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    src = StreamSource(dut, "i", bubble=p["bubble"], seed=p["seed"] + 1)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 2)
    sink.start(cycles)
    full = (1 << pe.k) - 1
    expected, spans = [], []
    for n in p["frames"]:
        words = []
        for j in range(n):
            data = int.from_bytes(rng.bytes((pe.word_bits + 7) // 8), "little") & ((1 << pe.word_bits) - 1)
            keep = full
            if rng.random() < p["partial"] and j in (0, n - 1):
                keep = random_keep(rng, pe.k)
            words.append((data, keep, int(j == n - 1)))
        expected += pe.unpack(words)
        first = len(src.sent_cycles)
        await src.send([pack([(d, pe.word_bits), (kp, pe.k), (la, 1)]) for d, kp, la in words], cycles)
        await sink.wait_for(len(expected))
        spans.append(
            (sum(bin(kp).count("1") for _, kp, _ in words), sink.cycles[len(expected) - 1] - src.sent_cycles[first] + 1)
        )
    got = [tuple(unpack(v, [pe.item_bits, 1])) for v in sink.items]
    mismatches = sum(g != e for g, e in zip(got, expected)) + abs(len(got) - len(expected))
    report(checked=len(expected), mismatches=mismatches, spans=spans)
    assert mismatches == 0, f"{mismatches} mismatches"
