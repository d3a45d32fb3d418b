"""Per-stage cycle formulas of the IVF-PQ model against the PE library and brute force."""

import math

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.design.ivfpq import BuildLutStage, IvfDistStage, OpqStage, PqDistStage
from fanns.design.ivfpq_selectors import selectors_for
from fanns.errors import FannsError
from fanns.model.ivfpq import stages as stage_model
from fanns.numerics import IvfPqFormat
from fanns.pe.build_lut import BuildLut
from fanns.pe.hpq import Hpq
from fanns.pe.ivf_dist import IvfDist
from fanns.pe.opq import Opq
from fanns.pe.pq_decode import KSUB, PqDecode


def ctx(nlist=1000, nprobe=7, k=10, m=16, d=128, opq=True, clock=140.0, board="u55c"):
    fmt = IvfPqFormat(d=d, m=m, scale=1.0, ivf_shift=0, lut_shift=0, vec_bits=16, lut_bits=16)
    return stage_model.Context(
        fmt=fmt,
        n=10**6,
        nlist=nlist,
        nprobe=nprobe,
        k=k,
        opq=opq,
        clock_mhz=clock,
        memories=stage_model.memories(load_board(board), clock),
    )


@pytest.mark.parametrize("m, port", [(16, 256), (8, 256), (32, 256), (16, 512), (64, 256), (48, 256)])
def test_packing_matches_an_explicit_split(m, port):
    """Every PE takes positions p, p+P, ...; shares padded to whole code beats; ids in whole beats."""
    packing = stage_model.Packing(m, port)
    rng = np.random.default_rng(m + port)
    for n in [0, 1, 2, 5, 63, 64, 65, 1000, *rng.integers(0, 5000, 20)]:
        for pes in (1, 2, 3, 7, 16, 57):
            shares = [len(range(p, int(n), pes)) for p in range(pes)]
            longest = max(shares)
            per_beat = port // (8 * m)
            if per_beat >= 1:
                code_beats = math.ceil(longest / per_beat)
                padded = code_beats * per_beat
            else:
                code_beats, padded = longest * math.ceil(8 * m / port), longest
            assert packing.items(n, pes) == max(1, padded)
            assert packing.beats(n, pes) == code_beats + math.ceil(padded * 32 / port)
            assert padded >= longest and (n == 0 or padded - longest < max(1, per_beat))


@pytest.mark.parametrize("double_buffer", [True, False])
def test_pq_cycles_are_the_pe_schedule(double_buffer):
    """Steady state per query = the span a query adds to a long stream of cells in PqDecode's own
    schedule; latency = PqDecode.cycles_for_cells of the query alone."""
    rng = np.random.default_rng(int(double_buffer))
    pe = PqDecode(m=16, lut_bits=16, double_buffer=double_buffer)
    probed = rng.choice([0, 1, 3, 40, 255, 256, 257, 600, 2000], size=(30, 5))
    c = ctx(nprobe=5)
    probes = stage_model.Probes.of(probed)
    for pes in (1, 3, 8):
        shares = stage_model.pq_shares(c.m, probes, pes, 256)
        work = stage_model.pq_work(shares, pe)
        cells = shares.items.ravel().tolist()
        sched = pe.schedule(cells + [1])
        starts = [s[1] for s in sched]
        for q in range(1, probed.shape[0]):  # a query's share of the stream: its first cell's start to the next query's
            span = starts[(q + 1) * 5] - starts[q * 5]
            assert work.pe_cycles[q] == span
        for q in range(probed.shape[0]):
            assert work.pe_latency[q] == pe.cycles_for_cells(shares.items[q].tolist())
        assert (shares.items_per_query == shares.items.sum(1)).all()


def test_cell_cycles_follow_the_schedule():
    rng = np.random.default_rng(5)
    for banks in (True, False):
        pe = PqDecode(m=8, lut_bits=12, double_buffer=banks)
        sizes = rng.integers(1, 700, 200).tolist()
        sched = pe.schedule(sizes)
        gaps = np.diff([s[1] for s in sched])
        assert (gaps == pe.cell_cycles(sizes[:-1])).all()
        assert pe.cycles_for_cells(sizes) == KSUB + pe.cell_cycles(sizes[:-1]).sum() + sizes[-1] + pe.depth()


def test_compute_stage_cycles_are_the_pes_intervals():
    c = ctx(nlist=1000, nprobe=7)
    for lanes in (8, 16, 32):
        assert stage_model.opq_timing(c, OpqStage(lanes)).interval == Opq(d=128, w=lanes, vec_bits=16).ii()
        for pes in (1, 3, 7, 64):
            st = IvfDistStage(pes, lanes, "bram")
            t = stage_model.ivf_timing(c, st)
            assert t.interval == IvfDist(d=128, w=lanes, vec_bits=16, nlist=math.ceil(1000 / pes)).ii()
            sel = stage_model.select_stage("hpq", pes, 7, 64)
            assert stage_model.sel_cells_timing(c, sel, st).interval == Hpq(z=pes, s=7, key_bits=64).interval(
                math.ceil(1000 / pes)
            )
            lut = BuildLut(d=128, m=16, w=lanes, vec_bits=16)
            lut_interval = stage_model.lut_timing(c, BuildLutStage(pes, lanes, "bram")).interval
            assert lut_interval == pytest.approx(7 / pes * lut.ii())  # the LUTs go round the PEs


def test_ivf_chunks_are_balanced_and_contiguous():
    for nlist in (1, 7, 1000, 4096):
        for pes in range(1, min(nlist, 70) + 1):
            chunks = stage_model.ivf_chunks(nlist, pes)
            assert [b for b, _ in chunks] == list(np.cumsum([0] + [n for _, n in chunks[:-1]]))
            sizes = [n for _, n in chunks]
            assert sum(sizes) == nlist and max(sizes) == math.ceil(nlist / pes) and min(sizes) == nlist // pes


def test_streamed_centroids_take_channels_at_full_rate():
    c = ctx()
    mem = c.memories[0]
    for lanes in (4, 8, 16, 32):
        channels, slow = stage_model.ivf_stream_channels(c, 10, lanes)
        word = lanes * 16
        if word <= mem.port_bits * mem.beats_per_cycle:
            per = math.floor(mem.port_bits * mem.beats_per_cycle / word)
            assert (channels, slow) == (math.ceil(10 / per), 1.0)
        else:
            assert channels == 10 and slow == pytest.approx(word / (mem.port_bits * mem.beats_per_cycle))


def test_channel_rate_is_port_bandwidth_and_reader_bound():
    u55c = load_board("u55c")
    at140 = stage_model.memories(u55c, 140.0)[0]
    at450 = stage_model.memories(u55c, 450.0)[0]
    assert at140.beats_per_cycle == 1.0  # 32 B/cycle x 140 MHz < 14.375 GB/s
    assert at450.beats_per_cycle == pytest.approx(14.375e9 / 450e6 / 32)
    reader = stage_model.channel_reader(256)
    assert stage_model.reader_rate(reader) == reader.words_per_cycle(stage_model.MEM_LATENCY_CYCLES) == 1.0


def test_pq_stage_is_the_slower_of_scan_and_channel():
    c = ctx(nprobe=4)
    rng = np.random.default_rng(9)
    probes = stage_model.Probes.of(rng.integers(0, 3000, size=(50, 4)))
    for pes, channels in ((8, 8), (8, 2), (8, 1), (30, 3)):
        st = PqDistStage(pes, True, "hbm", channels, 256)
        t, work = stage_model.pq_timing(c, st, probes)
        busiest = math.ceil(pes / channels)
        expect = np.maximum(work.pe_cycles, busiest * work.beats / c.memories[0].beats_per_cycle).mean()
        assert t.interval == pytest.approx(expect)
        assert t.detail["bound"] == ("memory" if t.detail["memory_cycles"] > t.detail["compute_cycles"] else "compute")
    fewer = stage_model.pq_timing(c, PqDistStage(8, True, "hbm", 1, 256), probes)[0]
    more = stage_model.pq_timing(c, PqDistStage(8, True, "hbm", 8, 256), probes)[0]
    assert fewer.interval > more.interval  # one channel cannot feed 8 PEs


def test_sel_k_interval_couples_pq_dist_and_the_selection_pe():
    """SelK holds the PQDist PEs after each query (`fanns.model.ivfpq.selk`): its interval is never
    below the selection PE's own `interval(n)` nor below PQDist's, and PEs on more channels
    (smaller lockstep groups) are held no longer."""
    c = ctx()
    rng = np.random.default_rng(3)
    probes = stage_model.Probes.of(rng.integers(0, 900, size=(40, 7)))
    sel = stage_model.select_stage("hpq", 6, 100, 52)
    pe = Hpq(z=6, s=100, key_bits=52)
    rate = c.memory("hbm").beats_per_cycle
    got = {}
    for channels in (1, 3, 6):
        st = PqDistStage(6, True, "hbm", channels, 256)
        t, work = stage_model.pq_timing(c, st, probes)
        got[channels] = stage_model.sel_k_timing(
            sel, work, stage_model.pq_pe(c, st), st.pes_per_channel(), rate, st.port_bits
        ).interval
        assert got[channels] >= np.mean([pe.interval(int(n)) for n in work.shares.items_per_query])
        assert got[channels] >= t.interval
    assert got[1] >= got[3] >= got[6] and got[1] > got[6]
    assert sel.s1 == pe.s1 == 100


def test_coupled_recurrence_reduces_to_the_selection_pes_interval():
    """One PE with its LUTs loaded long before its keys are due (cells of many items, no
    channel limit, only the datapath registers ahead): the recurrence is the PE's own back-to-back `interval(n)`."""
    from fanns.model.ivfpq.selk import Buffers, ChannelFeed, coupled_intervals
    from fanns.pe.hsmpqg import Hsmpqg

    items = np.array([[3000, 2000, 2500], [700, 900, 4000]])
    unlimited = ChannelFeed(np.zeros(2), np.zeros(items.shape), 0.0)
    for sel in (Hpq(z=1, s=10, key_bits=52), Hpq(z=1, s=100, key_bits=52), Hsmpqg(z=36, s=10, key_bits=52)):
        buffers = Buffers(keys=PqDecode(m=16).depth() + 1, chain=32)
        got = coupled_intervals(sel, PqDecode(m=16), items, [(0, 0)], unlimited, buffers)
        assert np.array_equal(got, [sel.interval(int(n)) for n in items.sum(1)])


def test_selection_architectures_give_their_pes_timing():
    from fanns.pe.ahpq import Ahpq, ahpq_queue_length
    from fanns.pe.hsmpqg import Hsmpqg

    assert selectors_for("sel_cells") == [("hpq", {}), ("hsmpqg", {})]
    assert [a for a, _ in selectors_for("sel_k")] == ["hpq", "hsmpqg", "ahpq"]
    st = stage_model.select_stage("ahpq", 16, 100, 52, {"target": 0.99})
    assert st.s1 == ahpq_queue_length(100, 32, 0.99) < 100
    assert stage_model.selector_pe(st) == Ahpq(z=16, s=100, key_bits=52, target=0.99)
    st = stage_model.select_stage("hsmpqg", 36, 10, 52)
    assert st.s1 == 10 and stage_model.selector_pe(st) == Hsmpqg(z=36, s=10, key_bits=52)
    work = stage_model.pq_work(
        stage_model.pq_shares(16, stage_model.Probes.of(np.array([[300, 20], [5, 900]])), 36, 256), PqDecode(m=16)
    )
    pe = Hsmpqg(z=36, s=10, key_bits=52)
    got = stage_model.sel_k_intervals(st, work, PqDecode(m=16), [36], 1.0, 256)
    assert np.all(got >= [pe.interval(int(n)) for n in work.shares.items_per_query])
    with pytest.raises(FannsError, match="HSMPQG needs s < z"):
        stage_model.select_stage("hsmpqg", 8, 10, 52)
