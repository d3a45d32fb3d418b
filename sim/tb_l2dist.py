"""cocotb testbench of the L2 distance PE against its reference model (fanns.pe.l2dist).

Parameters (FANNS_TB_PARAMS): `pe` (the PE's parameters), `queries`, `max_vectors`, `bubble`,
`backpressure`, `seed`. Checks every distance bit-exactly; reports `checked` and, per query,
`cycles` from the first accepted database word to the last distance out (inclusive).
"""

import cocotb
import numpy as np

from fanns.pe.l2dist import L2Dist
from fanns_tb import Cycles, StreamSink, StreamSource, pack, params, report, start, unpack


@cocotb.test()
async def distances_match_reference(dut):
    p = params()
    pe = L2Dist(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    qsrc = StreamSource(dut, "q", bubble=p["bubble"], seed=p["seed"] + 1)
    xsrc = StreamSource(dut, "x", bubble=p["bubble"], seed=p["seed"] + 2)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 3)
    sink.start(cycles)
    lo, hi = pe.elem_range()
    expected, spans = [], []
    for _ in range(p["queries"]):
        n = int(rng.integers(1, p["max_vectors"] + 1))
        q = rng.integers(lo, hi + 1, size=pe.d)
        x = rng.integers(lo, hi + 1, size=(n, pe.d))
        x[0] = q  # distance zero
        if n > 1:
            x[1] = np.where(q > (lo + hi) // 2, lo, hi)  # the largest distance
        dists = pe.distances(q, x)
        expected += [(int(dv), int(i == n - 1)) for i, dv in enumerate(dists)]
        await qsrc.send(pe.pack_words(q))
        words = [pack([(w, pe.w * pe.vec_bits), (i == n - 1, 1)]) for i in range(n) for w in pe.pack_words(x[i])]
        await xsrc.send(words, cycles)
        await sink.wait_for(len(expected))
        spans.append((n, sink.cycles[len(expected) - 1] - xsrc.sent_cycles[-len(words)] + 1))
    got = [tuple(unpack(v, [pe.dist_bits, 1])) for v in sink.items[: len(expected)]]
    mismatches = sum(g != e for g, e in zip(got, expected))
    assert mismatches == 0, f"{mismatches} mismatches; first: {next((g, e) for g, e in zip(got, expected) if g != e)}"
    report(checked=len(expected), mismatches=mismatches, spans=spans)
