"""cocotb testbench of the bitonic sorting network against its reference model (fanns.pe.bitonic_sort).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_vectors`, `bubble`, `backpressure`, `seed`,
`timing_queries`. The first test sends `queries` random queries (each vector's keys from one of
the `random_keys` distributions) with input bubbles and output back-pressure and checks every
vector and its `last` bit-exactly (reports `checked`, `mismatches`); the second sends
`timing_queries` without stalls and reports per query `spans` = (vectors, cycles from the first
accepted input to the last output, inclusive).
"""

import cocotb
import numpy as np

from fanns.pe.bitonic_sort import BitonicSort
from fanns_tb import pack, params, report, start
from fanns_tb.selection import random_keys, run_queries


def make_queries(pe, rng, count, max_vectors):
    def beat(keys, last):
        return pack([(int(k), pe.key_bits) for k in keys] + [(last, 1)])

    queries = []
    for _ in range(count):
        n = int(rng.integers(1, max_vectors + 1))
        keys = np.stack([random_keys(rng, pe.l, pe.key_bits) for _ in range(n)])
        out = pe.sort(keys)
        queries.append(([beat(keys[v], v == n - 1) for v in range(n)], [beat(out[v], v == n - 1) for v in range(n)]))
    return queries


async def check(dut, seed, count, max_vectors, bubble, backpressure):
    p = params()
    pe = BitonicSort(**p["pe"])
    await start(dut)
    queries = make_queries(pe, np.random.default_rng(seed), count, max_vectors)
    return await run_queries(dut, queries, pe.key_bits, bubble, backpressure, seed, decode=list)


@cocotb.test()
async def sorted_vectors_match_reference(dut):
    p = params()
    checked, mismatches, first, _ = await check(
        dut, p["seed"], p["queries"], p["max_vectors"], p["bubble"], p["backpressure"]
    )
    report(checked=checked, mismatches=mismatches)
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"


@cocotb.test()
async def cycles_without_stalls(dut):
    p = params()
    _, mismatches, first, spans = await check(dut, p["seed"] + 100, p["timing_queries"], p["max_vectors"], 0.0, 0.0)
    report(spans=spans)
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"
