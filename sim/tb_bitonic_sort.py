"""cocotb testbench of the bitonic sorting network against its reference model (fanns.pe.bitonic_sort).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_vectors`, `bubble`, `backpressure`, `seed`,
`timing_queries`. The first test sends `queries` random queries with input bubbles and output
back-pressure and checks every vector and its `last` bit-exactly (reports `checked`,
`mismatches`); the second sends `timing_queries` without stalls and reports per query `spans` =
(vectors, cycles from the first accepted input to the last output, inclusive).
"""
import cocotb
import numpy as np
from fanns_tb import pack, params, report, start
from fanns_tb.queries import random_keys, run_queries

from fanns.pe.bitonic_sort import BitonicSort


def make_queries(pe, rng, count, max_vectors):
    def beat(keys, last):
        return pack([(int(k), pe.key_bits) for k in keys] + [(last, 1)])

    queries = []
    for _ in range(count):
        n = int(rng.integers(1, max_vectors + 1))
        keys = random_keys(rng, (n, pe.l), pe.key_bits)
        out = pe.sort(keys)
        queries.append(([beat(keys[v], v == n - 1) for v in range(n)], [beat(out[v], v == n - 1) for v in range(n)]))
    return queries


@cocotb.test()
async def sorted_vectors_match_reference(dut):
    p = params()
    pe = BitonicSort(**p["pe"])
    await start(dut)
    queries = make_queries(pe, np.random.default_rng(p["seed"]), p["queries"], p["max_vectors"])
    checked, mismatches, first, _ = await run_queries(dut, queries, bubble=p["bubble"], backpressure=p["backpressure"], seed=p["seed"])
    report(checked=checked, mismatches=mismatches)
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"


@cocotb.test()
async def cycles_without_stalls(dut):
    p = params()
    pe = BitonicSort(**p["pe"])
    await start(dut)
    queries = make_queries(pe, np.random.default_rng(p["seed"] + 100), p["timing_queries"], p["max_vectors"])
    _, mismatches, first, spans = await run_queries(dut, queries, seed=p["seed"] + 100)
    report(spans=spans)
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"
