"""cocotb testbench of the OPQ rotation PE against its reference model (fanns.pe.opq).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `bubble`, `backpressure`, `seed`. The matrix is a
random orthogonal rotation quantized as numerics does (`quantize_opq_matrix`) with two rows at the
16-bit extremes (saturating outputs); queries are random over the whole signed range. An on-chip
matrix is filled once, then the queries run; a streamed matrix is sent again for every query.
Checks every output element bit-exactly; reports `checked` (elements), `saturated`, `mismatches`
and, per query, the accept cycle of its first word and the cycle of its last output word,
relative to the first query word.
"""

import cocotb
import numpy as np

from fanns.pe.opq import MATRIX_BITS, Opq
from fanns_tb import Cycles, StreamSink, StreamSource, params, report, start, unpack


@cocotb.test()
async def rotation_matches_reference(dut):
    p = params()
    pe = Opq(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    rot, _ = np.linalg.qr(rng.normal(size=(pe.d, pe.d)))
    a = pe.fmt().quantize_opq_matrix(rot)
    a[0] = (1 << (MATRIX_BITS - 1)) - 1
    a[-1] = -(1 << (MATRIX_BITS - 1))
    lo, hi = pe.elem_range()
    xs = rng.integers(lo, hi + 1, (p["queries"], pe.d))
    await start(dut)
    cycles = Cycles(dut)
    msrc = StreamSource(dut, "matrix", bubble=p["bubble"], seed=p["seed"] + 1)
    xsrc = StreamSource(dut, "x", bubble=p["bubble"], seed=p["seed"] + 2)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 3)
    sink.start(cycles)
    mwords = [w for row in a for w in pe.pack_words(row, MATRIX_BITS)]
    if pe.storage == "stream":
        mtask = cocotb.start_soon(msrc.send(mwords * p["queries"]))
    else:
        await msrc.send(mwords)
    await xsrc.send([w for x in xs for w in pe.pack_words(x, pe.vec_bits)], cycles)

    expected = []
    for x in xs:
        y = pe.rotate(x, a)
        expected += [
            (tuple(int(v) for v in y[k * pe.w : (k + 1) * pe.w]), int(k == pe.words - 1)) for k in range(pe.words)
        ]
    await sink.wait_for(len(expected))
    if pe.storage == "stream":
        await mtask
    got = []
    for v in sink.items[: len(expected)]:
        fields = unpack(v, [pe.vec_bits] * pe.w + [1])
        elems = tuple(f - (1 << pe.vec_bits) if f >> (pe.vec_bits - 1) else f for f in fields[:-1])
        got.append((elems, fields[-1]))
    mismatches = sum(g != e for g, e in zip(got, expected))
    assert mismatches == 0, f"{mismatches} mismatches; first: {next((g, e) for g, e in zip(got, expected) if g != e)}"
    t0 = xsrc.sent_cycles[0]
    starts = [xsrc.sent_cycles[i * pe.words] - t0 for i in range(p["queries"])]
    ends = [sink.cycles[(i + 1) * pe.words - 1] - t0 for i in range(p["queries"])]
    saturated = sum(abs(e) == hi for g, _ in expected for e in g)
    report(checked=len(expected) * pe.w, saturated=saturated, mismatches=mismatches, starts=starts, ends=ends)
