"""cocotb testbench of the bitonic partial merger against its reference model (fanns.pe.bitonic_merge).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_vectors`, `bubble`, `backpressure`, `seed`.
Each input beat is two independently drawn ascending l-arrays; every output beat and its `last`
are checked bit-exactly. Reports `checked` (beats), `mismatches` and per query `spans`.
"""
import cocotb
import numpy as np
from fanns_tb import pack, params, report, start
from fanns_tb.queries import random_keys, run_queries

from fanns.pe.bitonic_merge import BitonicMerge


def fields(keys, key_bits):
    return [(int(k), key_bits) for k in keys]


@cocotb.test()
async def merged_arrays_match_reference(dut):
    p = params()
    pe = BitonicMerge(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    queries = []
    for _ in range(p["queries"]):
        n = int(rng.integers(1, p["max_vectors"] + 1))
        a = np.sort(random_keys(rng, (n, pe.l), pe.key_bits), axis=-1)
        b = np.sort(random_keys(rng, (n, pe.l), pe.key_bits), axis=-1)
        out = pe.merge(a, b)
        ins = [pack(fields(a[v], pe.key_bits) + fields(b[v], pe.key_bits) + [(v == n - 1, 1)]) for v in range(n)]
        outs = [pack(fields(out[v], pe.key_bits) + [(v == n - 1, 1)]) for v in range(n)]
        queries.append((ins, outs))
    checked, mismatches, first, spans = await run_queries(dut, queries, bubble=p["bubble"], backpressure=p["backpressure"], seed=p["seed"])
    report(checked=checked, mismatches=mismatches, spans=spans)
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"
