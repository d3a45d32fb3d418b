"""Falcon QPP cycle model: hand-computed traces, bounds, monotonicity, DST speedup, bandwidth."""
import numpy as np
import pytest

from fanns.arch.falcon_model import MemorySystem, QppConfig, QueueCosts, simulate
from fanns.boards import load_board
from fanns.explore.traversal import Trace, TraversalConfig, dst
from fanns.pe.bloom import Bloom


def hand_trace(groups: int) -> Trace:
    """Group 0: the entry (node 0) with neighbours 5 and 7; group 1: candidate 5 with neighbour 9."""
    t = Trace(
        group_parent=np.array([-1, 0]), group_cands=np.array([0, 1, 2]), group_checks=np.array([0, 3, 4]),
        cand_node=np.array([0, 5]), cand_degree=np.array([2, 1]), check_node=np.array([0, 5, 7, 9]),
        check_cand=np.array([-1, 0, 0, 1]), check_new=np.array([True, True, True, True]), new_kept=np.array([True] * 4),
    )
    if groups == 1:
        t = Trace(t.group_parent[:1], t.group_cands[:2], t.group_checks[:2], t.cand_node[:1], t.cand_degree[:1],
                  t.check_node[:3], t.check_cand[:3], t.check_new[:3], t.new_kept[:3])
    return t


HAND = QppConfig(d=64, elem_bytes=1, l=8, k=4, cand_size=8, bloom=Bloom(h=1, b=128, w=8),
                 memory=MemorySystem(latency_cycles=10), queues=QueueCosts())


@pytest.mark.parametrize("groups,latency", [(1, 56), (2, 107)])
def test_hand_computed_latency(groups, latency):
    # Worked by hand from the recurrences in the module docstring (list fetch 10+1, Bloom 6,
    # vector fetch 10+1, distance 1+3+6, inserts every 2 cycles, sort 7, sync 2, pop 1, out k=4).
    timing = simulate(hand_trace(groups), HAND)
    assert timing.latency == latency
    last_bloom_in = 13 if groups == 1 else 65
    assert timing.occupancy == max(latency, last_bloom_in + HAND.bloom.query_gap())
    assert list(timing.launch) == [0, 53][:groups]


def qpp(d, **kw):
    return QppConfig(d=d, elem_bytes=1, l=32, k=10, cand_size=32, **kw)


@pytest.fixture(scope="module")
def traces(synthetic):
    g = synthetic["graphs"]["hnsw"]
    qs = g.fmt.quantize(synthetic["queries"][:25])
    return g, {(mg, mc): [dst(g, q, TraversalConfig(l=32, k=10, mg=mg, mc=mc), trace=True).trace for q in qs]
               for mg, mc in [(1, 1), (1, 3), (4, 2)]}


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
    assert qpp(128, memory=mem, pipelines=8).beat_bytes == pytest.approx(385 / 8)
    assert qpp(128, memory=mem, pipelines=8).vector_beats() == 3
    assert qpp(96, memory=mem).l2dist().w == 48  # w divides d and keeps up with 64 B per cycle


def test_memory_system_from_board():
    board = load_board("u250")
    mem = MemorySystem.from_board(board)
    assert (mem.channels, mem.total_gbps, mem.port_bytes, mem.freq_mhz) == (4, pytest.approx(77.0), 64, 300.0)
    assert "assumed" in mem.source
    mem = MemorySystem.from_board(board, freq_mhz=200, latency_cycles=80)
    assert mem.freq_mhz == 200 and mem.latency_cycles == 80 and mem.bytes_per_cycle() == pytest.approx(385.0)
