"""cocotb testbench of the LUT construction PE against its reference model (fanns.pe.build_lut).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_probes`, `bubble`, `backpressure`, `seed`.
A random codebook over the whole signed range (row 0 at the maximum, row 1 at the minimum: the
largest residual distances, saturating); per query a random query and random probed centroids,
one of them equal to the query (zero residual); `rows` codebook rows for a PE that holds a share.
The codebook is filled once, then the probes run.
Checks every LUT word bit-exactly; reports `checked` (words), `entries`, `mismatches` and, per
probe, the accept cycle of its first input word and the cycle of its last LUT word, relative
to the first input word.
"""

import cocotb
import numpy as np

from fanns.pe.build_lut import BuildLut
from fanns_tb import Cycles, StreamSink, StreamSource, params, report, start, unpack


@cocotb.test()
async def luts_match_reference(dut):
    p = params()
    pe = BuildLut(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    lo, hi = pe.elem_range()
    book = rng.integers(lo, hi + 1, (pe.m, pe.rows, pe.dsub))
    book[:, 0, :] = hi
    book[:, 1, :] = lo
    probes = []
    for _ in range(p["queries"]):
        q = rng.integers(lo, hi + 1, pe.d)
        n = int(rng.integers(1, p["max_probes"] + 1))
        cents = rng.integers(lo, hi + 1, (n, pe.d))
        cents[0] = q
        if n > 1:
            cents[1] = np.where(q > 0, lo, hi)
        probes += [(q, cents[i], i == n - 1) for i in range(n)]
    await start(dut)
    cycles = Cycles(dut)
    xsrc = StreamSource(dut, "x", bubble=p["bubble"], seed=p["seed"] + 1)
    bsrc = StreamSource(dut, "codebook", bubble=p["bubble"], seed=p["seed"] + 2)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 3)
    sink.start(cycles)
    await bsrc.send(pe.codebook_words(book))
    await xsrc.send([w for q, c, last in probes for w in pe.input_words(q, c, last)], cycles)

    expected = []
    for q, c, last in probes:
        lut = pe.luts(q, c, book)
        expected += [(tuple(int(v) for v in lut[:, j]), int(last and j == pe.rows - 1)) for j in range(pe.rows)]
    await sink.wait_for(len(expected))
    got = []
    for v in sink.items[: len(expected)]:
        fields = unpack(v, [pe.lut_bits] * pe.m + [1])
        got.append((tuple(fields[:-1]), fields[-1]))
    mismatches = sum(g != e for g, e in zip(got, expected))
    assert mismatches == 0, f"{mismatches} mismatches; first: {next((g, e) for g, e in zip(got, expected) if g != e)}"
    t0 = xsrc.sent_cycles[0]
    starts = [xsrc.sent_cycles[i * pe.words] - t0 for i in range(len(probes))]
    ends = [sink.cycles[(i + 1) * pe.rows - 1] - t0 for i in range(len(probes))]
    saturated = sum(e == (1 << pe.lut_bits) - 1 for g, _ in expected for e in g)
    report(
        checked=len(expected),
        entries=len(expected) * pe.m,
        saturated=saturated,
        mismatches=mismatches,
        starts=starts,
        ends=ends,
    )
