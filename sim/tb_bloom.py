"""cocotb testbench of the Bloom filter PE against its reference model (fanns.pe.bloom).

Parameters (FANNS_TB_PARAMS): `pe` (the PE's parameters), `queries`, `max_ids`, `id_range`,
`bubble`, `backpressure`, `seed`. Ids are drawn from a small range so that repeats (true
positives), hash collisions (false positives) and read-after-write hazards on one word all occur.
Checks every (id, visited, last) bit-exactly; reports `checked`, `visited` (ids reported visited),
per query `spans` (N, cycles from the first accepted id to the last result, inclusive) and `gaps`
(cycles from accepting a query's last id to accepting the next query's first id).
"""

import cocotb
import numpy as np

from fanns.pe.bloom import Bloom
from fanns_tb import Cycles, StreamSink, StreamSource, pack, params, report, start, unpack


@cocotb.test()
async def bloom_matches_reference(dut):
    p = params()
    pe = Bloom(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    src = StreamSource(dut, "i", bubble=p["bubble"], seed=p["seed"] + 1)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 2)
    sink.start(cycles)
    queries, expected = [], []
    pool = rng.integers(0, 2**32, size=p["id_range"])
    for qi in range(p["queries"]):
        n = int(rng.integers(1, p["max_ids"] + 1))
        picks = rng.integers(0, p["id_range"], size=n)
        ids = pool[picks] if qi % 2 else picks  # full 32-bit ids, or small consecutive ones
        flags = pe.test_and_set(pe.new_state(), ids)
        expected += [(int(i), int(f), int(k == n - 1)) for k, (i, f) in enumerate(zip(ids, flags))]
        queries.append(ids)
    # All queries back to back: the source waits only for the PE (clearing included).
    await src.send([pack([(i, 32), (k == len(ids) - 1, 1)]) for ids in queries for k, i in enumerate(ids)], cycles)
    await sink.wait_for(len(expected))
    spans, gaps, first = [], [], 0
    for ids in queries:
        last = first + len(ids) - 1
        spans.append((len(ids), sink.cycles[last] - src.sent_cycles[first] + 1))
        if last + 1 < len(src.sent_cycles):
            gaps.append(src.sent_cycles[last + 1] - src.sent_cycles[last])
        first = last + 1
    got = [tuple(unpack(v, [32, 1, 1])) for v in sink.items[: len(expected)]]
    mismatches = sum(g != e for g, e in zip(got, expected))
    assert mismatches == 0, f"{mismatches} mismatches; first: {next((g, e) for g, e in zip(got, expected) if g != e)}"
    report(checked=len(expected), mismatches=mismatches, visited=sum(e[1] for e in expected), spans=spans, gaps=gaps)
