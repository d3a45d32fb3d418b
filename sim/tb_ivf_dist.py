"""cocotb testbench of the IVF distance PE against its reference model (fanns.pe.ivf_dist).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `bubble`, `backpressure` (on `o` and `q_fwd`),
`seed`. Random centroids and queries over the whole signed range, plus a query equal to a
centroid (distance 0) and extreme rows (the largest distances; saturation when the format
allows). On-chip storage: the centroids are filled once, then queries run; streamed storage:
the centroid stream repeats all centroids for every query. Checks every key bit-exactly and the
forwarded query words; reports `checked`, `mismatches`, `fwd_ok` and, per query, the cycle of
its last key relative to the first query word accepted.
"""

import cocotb
import numpy as np

from fanns.pe.ivf_dist import IvfDist
from fanns_tb import Cycles, StreamSink, StreamSource, params, report, start, unpack


@cocotb.test()
async def keys_match_reference(dut):
    p = params()
    pe = IvfDist(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    lo, hi = pe.elem_range()
    cents = rng.integers(lo, hi + 1, (pe.nlist, pe.d))
    cents[0] = hi
    if pe.nlist > 1:
        cents[1] = lo
    queries = rng.integers(lo, hi + 1, (p["queries"], pe.d))
    queries[0] = cents[min(2, pe.nlist - 1)]
    if p["queries"] > 1:
        queries[1] = lo
    await start(dut)
    cycles = Cycles(dut)
    qsrc = StreamSource(dut, "q", bubble=p["bubble"], seed=p["seed"] + 1)
    csrc = StreamSource(dut, "centroids", bubble=p["bubble"], seed=p["seed"] + 2)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 3)
    fwd = StreamSink(dut, "q_fwd", backpressure=p["backpressure"], seed=p["seed"] + 4)
    sink.start(cycles)
    fwd.start(cycles)

    cwords = [w for c in cents for w in pe.pack_words(c)]
    qwords = [w for q in queries for w in pe.pack_words(q)]
    if pe.storage == "stream":
        ctask = cocotb.start_soon(csrc.send(cwords * p["queries"]))
    else:
        await csrc.send(cwords)
    await qsrc.send(qwords, cycles)
    expected = []
    for q in queries:
        keys = pe.keys(q, cents)
        expected += [(int(k), int(i == pe.nlist - 1)) for i, k in enumerate(keys)]
    await sink.wait_for(len(expected))
    await fwd.wait_for(len(qwords))
    if pe.storage == "stream":
        await ctask

    got = [tuple(unpack(v, [pe.key_bits, 1])) for v in sink.items[: len(expected)]]
    mismatches = sum(g != e for g, e in zip(got, expected))
    assert mismatches == 0, f"{mismatches} mismatches; first: {next((g, e) for g, e in zip(got, expected) if g != e)}"
    fwd_ok = fwd.items == qwords
    assert fwd_ok, "forwarded query words differ"
    t0 = qsrc.sent_cycles[0]
    ends = [sink.cycles[(i + 1) * pe.nlist - 1] - t0 for i in range(p["queries"])]
    report(checked=len(expected), mismatches=mismatches, fwd_ok=fwd_ok, ends=ends)
