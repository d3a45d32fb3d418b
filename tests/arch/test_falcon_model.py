"""Falcon QPP cycle model: bounds, monotonicity, DST speedup, bandwidth. (Its cycle counts are checked
against the generated RTL in tests/sim/test_falcon_rtl.py.)"""

import math

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.index.graph_traversal import TraversalConfig, dst
from fanns.model.graph.qpp import (
    ASSUMED_LATENCY_CYCLES,
    FALCON_LATENCY_CYCLES,
    RATE_SCALE,
    MemorySystem,
    QppConfig,
    simulate,
)


def qpp(d, **kw):
    return QppConfig(d=d, elem_bytes=1, l=32, k=10, cand_size=32, max_degree=16, **kw)


@pytest.fixture(scope="module")
def traces(synthetic):
    g = synthetic["graphs"]["hnsw"]
    qs = g.fmt.quantize(synthetic["queries"][:25])
    return g, {
        (mg, mc): [dst(g, q, TraversalConfig(l=32, k=10, mg=mg, mc=mc), trace=True).trace for q in qs]
        for mg, mc in [(1, 1), (1, 3), (4, 2)]
    }


def test_bfs_latency_is_bounded_below_by_two_memory_trips_per_hop(traces):
    g, tr = traces
    cfg = qpp(g.fmt.d, bfc_units=4)
    for t in tr[1, 1]:
        assert simulate(t, cfg).latency >= t.groups * 2 * cfg.memory.latency_cycles


def test_latency_grows_with_memory_latency(traces):
    g, tr = traces
    for key in tr:
        prev = None
        for lat in (20, 60, 150):
            total = sum(simulate(t, qpp(g.fmt.d, memory=MemorySystem(latency_cycles=lat))).latency for t in tr[key])
            assert prev is None or total > prev
            prev = total


def test_dst_hides_memory_latency(traces):
    g, tr = traces
    for cfg in (qpp(g.fmt.d, bfc_units=4), qpp(g.fmt.d, pipelines=4)):
        bfs = np.mean([simulate(t, cfg).latency for t in tr[1, 1]])
        mcs = np.mean([simulate(t, cfg).latency for t in tr[1, 3]])
        dst_ = np.mean([simulate(t, cfg).latency for t in tr[4, 2]])
        assert bfs / mcs > 1.3 and bfs / dst_ > bfs / mcs, (bfs, mcs, dst_)


def test_bandwidth_is_shared_between_fetch_engines():
    mem = MemorySystem(total_gbps=77.0, freq_mhz=200.0, port_bytes=64)
    assert qpp(128, memory=mem).beat_bytes == 64
    shared = qpp(128, memory=mem, pipelines=8)  # 8 QPPs x (1 vector + 1 list engine) share 385 B/cycle
    assert shared.beat_bytes == pytest.approx(385 / 16)
    # 2 beats of 64 bytes at 385/16 bytes per cycle: 5.32 cycles of channel time, in 1/RATE_SCALE cycles
    assert shared.vector_beats() == 2 and shared.timing()["vector_time"] == math.ceil(RATE_SCALE * 128 / (385 / 16))
    assert qpp(96, memory=mem).l2dist().w == 48  # w divides d and keeps up with 64 B per cycle


def test_memory_system_from_board():
    board = load_board("u250")
    mem = MemorySystem.from_board(board)
    # at the board's clock (140 MHz: boards/u250.yaml clock_source): Shuhai's 106.7 ns row miss is 15 cycles
    assert (mem.channels, mem.total_gbps, mem.port_bytes, mem.freq_mhz) == (4, pytest.approx(77.0), 64, 140.0)
    assert mem.latency_cycles == 15 and "Shuhai" in mem.source and "latency_cycles assumed" not in mem.source
    falcon = MemorySystem.from_board(board, freq_mhz=200)
    assert falcon.latency_cycles == FALCON_LATENCY_CYCLES == MemorySystem().latency_cycles == 22  # 21.3 rounded up
    mem = MemorySystem.from_board(board, freq_mhz=200, latency_cycles=80)
    assert mem.freq_mhz == 200 and mem.latency_cycles == 80 and mem.bytes_per_cycle() == pytest.approx(385.0)
    assert "given" in mem.source


def test_memory_latency_per_memory_kind():
    """HBM reads take longer than DDR4 reads (Shuhai's U280); a memory with no published
    measurement (the Zynq boards' PS DDR) falls back to the assumption and says so."""
    hbm = MemorySystem.from_board(load_board("u55c"), freq_mhz=200)
    assert hbm.latency_cycles == 28 > FALCON_LATENCY_CYCLES  # 137.8 ns = 27.6 cycles of 200 MHz
    zynq = MemorySystem.from_board(load_board("zcu104"))
    assert zynq.latency_cycles == ASSUMED_LATENCY_CYCLES and "latency_cycles assumed" in zynq.source
