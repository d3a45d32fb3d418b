"""Selection-key helpers shared by the queue testbenches: random keys and query-by-query runs.

`random_keys` mixes the distributions that break selection hardware (full range, many equal
keys, keys at or near the sentinel). `run_queries` drives whole queries through one input and
one output stream and measures, per query, the cycles from its first accepted input item to its
last output item (both inclusive), which is what the PE timing models predict.
"""

from __future__ import annotations

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles

from fanns_tb import Cycles, StreamSink, StreamSource, pack, unpack


def random_keys(rng: np.random.Generator, n: int, key_bits: int) -> np.ndarray:
    """`n` uint64 keys below 2**key_bits from one of four distributions (chosen at random)."""
    top = (1 << key_bits) - 1
    kind = int(rng.integers(0, 4)) if key_bits >= 4 else 0
    if kind == 0:  # full range
        return rng.integers(0, top, n, dtype=np.uint64, endpoint=True)
    if kind == 1:  # a narrow window: many equal keys
        base = int(rng.integers(0, top - 7, dtype=np.uint64, endpoint=True))
        return np.uint64(base) + rng.integers(0, 8, n).astype(np.uint64)
    if kind == 2:  # at and just below the sentinel
        return np.uint64(top) - rng.integers(0, 4, n).astype(np.uint64)
    keys = rng.integers(0, min(top, 1000), n, dtype=np.uint64, endpoint=True)  # small, sentinels mixed in
    keys[rng.random(n) < 0.3] = np.uint64(top)
    return keys


def key_items(keys, key_bits: int) -> list[int]:
    """Payloads {key, last} of one query (last on the final key)."""
    return [pack([(int(k), key_bits), (i == len(keys) - 1, 1)]) for i, k in enumerate(keys)]


def decode_items(items, key_bits: int) -> list[tuple[int, int]]:
    return [tuple(unpack(v, [key_bits, 1])) for v in items]


async def run_queries(
    dut, queries, key_bits: int, bubble: float, backpressure: float, seed: int, pipelined: bool = False, decode=None
):
    """Send each query's input payloads on `i`, check the expected (key, last) pairs on `o`.

    `decode` maps the list of received payloads to the form of the expected items (default:
    (key, last) pairs; `list` compares raw payloads, e.g. whole key vectors).

    Without `pipelined`, each query waits for its outputs before the next one is sent and spans
    are measured per query. With `pipelined`, all queries are sent back to back and a single
    span (first input of the first query to last output of the last query) is returned.
    Returns (checked, mismatches, first mismatch, spans).
    """
    cycles = Cycles(dut)
    src = StreamSource(dut, "i", bubble=bubble, seed=seed + 1)
    sink = StreamSink(dut, "o", backpressure=backpressure, seed=seed + 2)
    sink.start(cycles)
    expected, spans = [], []
    if pipelined:
        beats = [b for q, _ in queries for b in q]
        expected = [e for _, outs in queries for e in outs]
        sender = cocotb.start_soon(src.send(beats, cycles))
        await sink.wait_for(len(expected))
        await sender
        spans.append((len(beats), sink.cycles[len(expected) - 1] - src.sent_cycles[0] + 1))
    else:
        for beats, outs in queries:
            expected += outs
            await src.send(beats, cycles)
            await sink.wait_for(len(expected))
            spans.append((len(beats), sink.cycles[len(expected) - 1] - src.sent_cycles[-len(beats)] + 1))
    await ClockCycles(dut.clk, 32)
    assert len(sink.items) == len(expected), f"{len(sink.items) - len(expected)} output items more than expected"
    got = decode(sink.items) if decode else decode_items(sink.items, key_bits)
    bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    return len(expected), len(bad), (bad[0] if bad else None), spans
