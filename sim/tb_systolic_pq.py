"""cocotb testbench of the replace-only systolic priority queue against its reference model.

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_items`, `bubble`, `backpressure`, `seed`,
optional `n` (every query has exactly n items) and `pipelined` (queries back to back). Checks
every output key and `last` flag bit-exactly against `SystolicPQ.select`; reports `checked`
(output keys), `inputs` (input keys), `mismatches` and `spans` [(N, cycles)].
"""

import cocotb
import numpy as np

from fanns.pe.systolic_pq import SystolicPQ
from fanns_tb import params, report, start
from fanns_tb.selection import key_items, random_keys, run_queries


@cocotb.test()
async def queue_matches_reference(dut):
    p = params()
    pe = SystolicPQ(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    queries, inputs = [], 0
    for _ in range(p["queries"]):
        n = p.get("n") or int(rng.integers(1, p["max_items"] + 1))
        keys = random_keys(rng, n, pe.key_bits)
        out = pe.select(keys)
        queries.append((key_items(keys, pe.key_bits), [(int(k), int(j == pe.s - 1)) for j, k in enumerate(out)]))
        inputs += n
    checked, mismatches, first, spans = await run_queries(
        dut, queries, pe.key_bits, p["bubble"], p["backpressure"], p["seed"], p.get("pipelined", False)
    )
    assert mismatches == 0, f"{mismatches} mismatches; first (index, got, expected): {first}"
    report(checked=checked, inputs=inputs, mismatches=mismatches, spans=spans)
