"""cocotb testbench of the bitonic partial merger against its reference model (fanns.pe.bitonic_merge).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_vectors`, `bubble`, `backpressure`, `seed`,
`timing_queries`. Each input beat is two independently drawn ascending l-arrays (a third of the
beats interleave b with a). The first test runs `queries` random queries with bubbles and
back-pressure and checks every output beat and its `last` bit-exactly (reports `checked`,
`mismatches`); the second runs `timing_queries` without stalls and reports per query `spans`.
"""
import cocotb
import numpy as np
from fanns_tb import pack, params, report, start
from fanns_tb.queries import random_keys, run_queries

from fanns.pe.bitonic_merge import BitonicMerge


def make_queries(pe, rng, count, max_vectors):
    def fields(keys):
        return [(int(k), pe.key_bits) for k in keys]

    queries = []
    for _ in range(count):
        n = int(rng.integers(1, max_vectors + 1))
        a = np.sort(random_keys(rng, (n, pe.l), pe.key_bits), axis=-1)
        b = np.sort(random_keys(rng, (n, pe.l), pe.key_bits), axis=-1)
        mix = rng.random(n) < 1 / 3
        b[mix] = np.sort(a[mix] ^ np.uint64(1), axis=-1)  # interleaved with a
        out = pe.merge(a, b)
        ins = [pack(fields(a[v]) + fields(b[v]) + [(v == n - 1, 1)]) for v in range(n)]
        queries.append((ins, [pack(fields(out[v]) + [(v == n - 1, 1)]) for v in range(n)]))
    return queries


@cocotb.test()
async def merged_arrays_match_reference(dut):
    p = params()
    pe = BitonicMerge(**p["pe"])
    await start(dut)
    queries = make_queries(pe, np.random.default_rng(p["seed"]), p["queries"], p["max_vectors"])
    checked, mismatches, first, _ = await run_queries(dut, queries, bubble=p["bubble"], backpressure=p["backpressure"], seed=p["seed"])
    report(checked=checked, mismatches=mismatches)
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"


@cocotb.test()
async def cycles_without_stalls(dut):
    p = params()
    pe = BitonicMerge(**p["pe"])
    await start(dut)
    queries = make_queries(pe, np.random.default_rng(p["seed"] + 100), p["timing_queries"], p["max_vectors"])
    _, mismatches, first, spans = await run_queries(dut, queries, seed=p["seed"] + 100)
    report(spans=spans)
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"
