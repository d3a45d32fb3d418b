"""cocotb testbench of the bitonic sorting network against its reference model (fanns.pe.bitonic_sort).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_vectors`, `bubble`, `backpressure`, `seed`.
Checks every output vector and its `last` bit-exactly; reports `checked` (vectors), `mismatches`
and per query `spans` = (vectors, cycles from the first accepted input to the last output).
"""
import cocotb
import numpy as np
from fanns_tb import pack, params, report, start
from fanns_tb.queries import random_keys, run_queries

from fanns.pe.bitonic_sort import BitonicSort


def beat(keys, last, key_bits):
    return pack([(int(k), key_bits) for k in keys] + [(last, 1)])


@cocotb.test()
async def sorted_vectors_match_reference(dut):
    p = params()
    pe = BitonicSort(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    queries = []
    for _ in range(p["queries"]):
        n = int(rng.integers(1, p["max_vectors"] + 1))
        keys = random_keys(rng, (n, pe.l), pe.key_bits)
        out = pe.sort(keys)
        last = [int(v == n - 1) for v in range(n)]
        queries.append(([beat(keys[v], last[v], pe.key_bits) for v in range(n)], [beat(out[v], last[v], pe.key_bits) for v in range(n)]))
    checked, mismatches, first, spans = await run_queries(dut, queries, bubble=p["bubble"], backpressure=p["backpressure"], seed=p["seed"])
    report(checked=checked, mismatches=mismatches, spans=spans)
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"
