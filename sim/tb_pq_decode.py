"""cocotb testbench of the PQ decode unit against its reference model (fanns.pe.pq_decode).

Parameters (FANNS_TB_PARAMS): `pe`, `queries`, `max_cells` (cells per query), `max_codes` (items
per cell), `bubble`, `backpressure`, `seed`, `isolated` (send one cell at a time and wait for
its keys). Random LUTs (one in eight is all-maximum, the largest distance), random codes and
ids, padding items at the end of some cells and whole padding-only cells. LUT beats (`lut_words`
words each) and code items are driven by two independent sources, so a double-buffered unit
loads ahead.

Reports `checked`, `mismatches`, `sizes` (items per cell), and per cell the accept cycles of
its first LUT beat, first code and last code plus, per cell, the cycle its last key left the
unit; all relative to the first LUT beat accepted.
"""

import cocotb
import numpy as np

from fanns.pe.pq_decode import KSUB, PqDecode
from fanns_tb import Cycles, StreamSink, StreamSource, pack, params, report, start, unpack


def make_cells(pe: PqDecode, p: dict, rng: np.random.Generator) -> list[dict]:
    cells = []
    top = (1 << pe.lut_bits) - 1
    for _ in range(p["queries"]):
        ncells = int(rng.integers(1, p["max_cells"] + 1))
        for c in range(ncells):
            n = int(rng.integers(1, p["max_codes"] + 1))
            lut = np.full((pe.m, KSUB), top) if rng.random() < 0.125 else rng.integers(0, top + 1, (pe.m, KSUB))
            codes = rng.integers(0, KSUB, (n, pe.m))
            ids = rng.integers(0, 1 << 32, n, dtype=np.uint64)
            pad = np.zeros(n, dtype=bool)
            kind = rng.random()
            if kind < 0.1:
                pad[:] = True  # an empty cell: only padding
            elif kind < 0.5:
                pad[n - int(rng.integers(0, min(n, 8) + 1)) :] = True
            cells.append({"lut": lut, "codes": codes, "ids": ids, "pad": pad, "last_query": c == ncells - 1})
    return cells


def items_of(pe: PqDecode, cell: dict) -> list[int]:
    n = len(cell["ids"])
    out = []
    for t in range(n):
        codes = sum(int(v) << (8 * i) for i, v in enumerate(cell["codes"][t]))
        last_cell = t == n - 1
        out.append(
            pack(
                [
                    (codes, 8 * pe.m),
                    (int(cell["ids"][t]), 32),
                    (cell["pad"][t], 1),
                    (last_cell, 1),
                    (last_cell and cell["last_query"], 1),
                ]
            )
        )
    return out


@cocotb.test()
async def keys_match_reference(dut):
    p = params()
    pe = PqDecode(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    cells = make_cells(pe, p, rng)
    await start(dut)
    cycles = Cycles(dut)
    lsrc = StreamSource(dut, "lut", bubble=p["bubble"], seed=p["seed"] + 1)
    csrc = StreamSource(dut, "codes", bubble=p["bubble"], seed=p["seed"] + 2)
    sink = StreamSink(dut, "o", backpressure=p["backpressure"], seed=p["seed"] + 3)
    sink.start(cycles)

    expected = []
    for cell in cells:
        keys = pe.scan(cell["lut"], cell["codes"], cell["ids"], cell["pad"])
        n = len(keys)
        expected += [(int(k), int(cell["last_query"] and t == n - 1)) for t, k in enumerate(keys)]
    lut_beats = [pe.lut_beats(cell["lut"]) for cell in cells]
    items = [items_of(pe, cell) for cell in cells]
    sizes = [len(it) for it in items]

    async def send(src, chunks):
        for chunk in chunks:
            await src.send(chunk, cycles)

    if p.get("isolated"):
        for c in range(len(cells)):
            lut_task = cocotb.start_soon(send(lsrc, [lut_beats[c]]))
            await send(csrc, [items[c]])
            await lut_task
            await sink.wait_for(sum(sizes[: c + 1]))
    else:
        lut_task = cocotb.start_soon(send(lsrc, lut_beats))
        await send(csrc, items)
        await lut_task
    await sink.wait_for(len(expected))

    got = [tuple(unpack(v, [pe.key_bits, 1])) for v in sink.items[: len(expected)]]
    mismatches = sum(g != e for g, e in zip(got, expected))
    assert mismatches == 0, f"{mismatches} mismatches; first: {next((g, e) for g, e in zip(got, expected) if g != e)}"
    t0 = lsrc.sent_cycles[0]
    schedule, k = [], 0
    for c, n in enumerate(sizes):
        schedule.append(
            (lsrc.sent_cycles[c * pe.load_cycles] - t0, csrc.sent_cycles[k] - t0, csrc.sent_cycles[k + n - 1] - t0)
        )
        k += n
    last_out = [sink.cycles[e - 1] - t0 for e in np.cumsum(sizes)]
    report(checked=len(expected), mismatches=mismatches, sizes=sizes, schedule=schedule, last_out=last_out)
