"""cocotb testbench of HPQ and AHPQ (fanns.pe.hpq, fanns.pe.ahpq) against their reference model.

Parameters (FANNS_TB_PARAMS): `pe_name` ("hpq" or "ahpq"), `pe`, `queries`, `max_items`,
`bubble`, `backpressure`, `seed`, optional `sizes` (query q has sizes[q] items on every stream), `skew`
(fraction of queries whose smallest keys crowd into the even items of stream 0, which overflows
AHPQ's short level-1 queues) and `pipelined` (all queries back to back). Checks every output key
and flag bit-exactly against `select`; reports `checked`, `inputs`, `mismatches`, `inexact`
(queries whose expected output differs from the exact s smallest) and `spans` [(N, cycles)].
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles

from fanns.numerics import smallest_keys
from fanns.pe import get_pe
from fanns_tb import Cycles, StreamSink, StreamSource, params, report, start
from fanns_tb.selection import decode_items, key_items, random_keys


def make_query(pe, rng, p, q):
    """Query q: z key arrays (one per stream)."""
    sizes = [p["sizes"][q]] * pe.z if p.get("sizes") else [int(v) for v in rng.integers(1, p["max_items"] + 1, pe.z)]
    streams = [random_keys(rng, n, pe.key_bits) for n in sizes]
    if rng.random() < p.get("skew", 0.0) and sizes[0] > 2:
        low = streams[0][0::2]
        streams[0][0::2] = rng.integers(0, 16, len(low), dtype=np.uint64)  # far below the other keys
    return streams


@cocotb.test()
async def hpq_matches_reference(dut):
    p = params()
    pe = get_pe(p["pe_name"])(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    srcs = [StreamSource(dut, f"i{j}", bubble=p["bubble"], seed=p["seed"] + 10 + j) for j in range(pe.z)]
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 2)
    sink.start(cycles)
    queries = [make_query(pe, rng, p, q) for q in range(p["queries"])]
    expected, inexact = [], 0
    for streams in queries:
        out = pe.select(streams)
        inexact += not np.array_equal(out, smallest_keys(np.concatenate(streams), pe.s, fill_bits=pe.key_bits))
        expected += [(int(k), int(i == pe.s - 1)) for i, k in enumerate(out)]
    spans = []
    if p.get("pipelined"):
        tasks = [
            cocotb.start_soon(src.send([b for q in queries for b in key_items(q[j], pe.key_bits)], cycles))
            for j, src in enumerate(srcs)
        ]
        await sink.wait_for(len(expected))
        for t in tasks:
            await t
        first = min(src.sent_cycles[0] for src in srcs)
        spans.append((max(len(q[0]) for q in queries), sink.cycles[-1] - first + 1))
    else:
        for q, streams in enumerate(queries):
            marks = [len(src.sent_cycles) for src in srcs]
            tasks = [
                cocotb.start_soon(src.send(key_items(streams[j], pe.key_bits), cycles)) for j, src in enumerate(srcs)
            ]
            for t in tasks:
                await t
            await sink.wait_for((q + 1) * pe.s)
            first = min(src.sent_cycles[mk] for src, mk in zip(srcs, marks))
            spans.append((max(len(s) for s in streams), sink.cycles[(q + 1) * pe.s - 1] - first + 1))
    await ClockCycles(dut.clk, 32)
    assert len(sink.items) == len(expected), f"{len(sink.items) - len(expected)} output items more than expected"
    got = decode_items(sink.items, pe.key_bits)
    bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert not bad, f"{len(bad)} mismatches; first (index, got, expected): {bad[0]}"
    report(
        checked=len(expected),
        inputs=sum(len(s) for q in queries for s in q),
        mismatches=len(bad),
        inexact=inexact,
        spans=spans,
    )
