"""Query-by-query stream checking and random selection keys, shared by the selection benches.

`run_queries` sends each query's input beats on one stream, waits until that query's expected
output beats have arrived on another, and measures the span from the first accepted input beat
to the last output beat (both inclusive), the quantity the timing models predict.
`random_keys` mixes the key distributions that break selection hardware: the full range,
narrow ranges (many duplicates), and the all-ones sentinel.
"""
from __future__ import annotations

import numpy as np
from cocotb.triggers import ClockCycles

from fanns_tb import Cycles, StreamSink, StreamSource


def random_keys(rng: np.random.Generator, shape: tuple[int, ...], key_bits: int) -> np.ndarray:
    """uint64 keys below 2**key_bits; rows of the last axis draw from one of four distributions."""
    top = (1 << key_bits) - 1
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    n = shape[-1]
    out = np.empty((rows, n), dtype=np.uint64)
    kind = rng.integers(0, 4, rows)
    for r in range(rows):
        if kind[r] == 0 or key_bits < 4:  # full range
            out[r] = rng.integers(0, top, n, dtype=np.uint64, endpoint=True)
        elif kind[r] == 1:  # a narrow window: many equal keys
            base = int(rng.integers(0, top - 7, dtype=np.uint64, endpoint=True))
            out[r] = np.uint64(base) + rng.integers(0, 8, n).astype(np.uint64)
        elif kind[r] == 2:  # around the sentinel, some keys equal to it
            out[r] = np.uint64(top) - rng.integers(0, 4, n).astype(np.uint64)
        else:  # small keys with the sentinel mixed in
            out[r] = rng.integers(0, min(top, 1000), n, dtype=np.uint64, endpoint=True)
            out[r][rng.random(n) < 0.3] = np.uint64(top)
    return out.reshape(shape)


async def run_queries(dut, queries, in_name: str = "i", out_name: str = "o", bubble: float = 0.0, backpressure: float = 0.0, seed: int = 0):
    """Drive `queries` (pairs of input payload list, expected output payload list) through the DUT.

    Returns (checked, mismatches, first mismatch or None, spans) where spans lists, per query,
    (number of input beats, cycles from the first accepted input to the last output, inclusive).
    """
    cycles = Cycles(dut)
    src = StreamSource(dut, in_name, bubble=bubble, seed=seed + 1)
    sink = StreamSink(dut, out_name, backpressure=backpressure, seed=seed + 2)
    sink.start(cycles)
    expected, spans = [], []
    for beats, outs in queries:
        expected += outs
        await src.send(beats, cycles)
        await sink.wait_for(len(expected))
        spans.append((len(beats), sink.cycles[len(expected) - 1] - src.sent_cycles[-len(beats)] + 1))
    await ClockCycles(dut.clk, 64)  # anything beyond the expected beats would show up by now
    got = sink.items[: len(expected)]
    bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    extra = len(sink.items) - len(expected)
    assert extra == 0, f"{extra} output beats more than expected"
    return len(expected), len(bad), (bad[0] if bad else None), spans
