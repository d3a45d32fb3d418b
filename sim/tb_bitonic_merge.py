"""cocotb testbench of the bitonic partial merger against its reference model (fanns.pe.bitonic_merge).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_vectors`, `bubble`, `backpressure`, `seed`,
`timing_queries`. Each input beat is two independently drawn ascending l-arrays (a third of the
beats interleave b with a). The first test runs `queries` random queries with bubbles and
back-pressure and checks every output beat and its `last` bit-exactly (reports `checked`,
`mismatches`); the second runs `timing_queries` without stalls and reports per query `spans`.
"""

import cocotb
import numpy as np

from fanns.pe.bitonic_merge import BitonicMerge
from fanns_tb import pack, params, report, start
from fanns_tb.selection import random_keys, run_queries


def make_queries(pe, rng, count, max_vectors):
    def fields(keys):
        return [(int(k), pe.key_bits) for k in keys]

    def arrays(n):
        return np.sort(np.stack([random_keys(rng, pe.l, pe.key_bits) for _ in range(n)]), axis=-1)

    queries = []
    for _ in range(count):
        n = int(rng.integers(1, max_vectors + 1))
        a, b = arrays(n), arrays(n)
        mix = rng.random(n) < 1 / 3
        b[mix] = np.sort(a[mix] ^ np.uint64(1), axis=-1)  # interleaved with a
        out = pe.merge(a, b)
        ins = [pack(fields(a[v]) + fields(b[v]) + [(v == n - 1, 1)]) for v in range(n)]
        queries.append((ins, [pack(fields(out[v]) + [(v == n - 1, 1)]) for v in range(n)]))
    return queries


async def check(dut, seed, count, max_vectors, bubble, backpressure):
    p = params()
    pe = BitonicMerge(**p["pe"])
    await start(dut)
    queries = make_queries(pe, np.random.default_rng(seed), count, max_vectors)
    return await run_queries(dut, queries, pe.key_bits, bubble, backpressure, seed, decode=list)


@cocotb.test()
async def merged_arrays_match_reference(dut):
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
