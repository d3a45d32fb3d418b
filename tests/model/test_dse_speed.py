"""The DSE's shortcuts change nothing: back options left out untimed as dominated, option groups
shared between the contexts they do not depend on, and SelK's floor below its interval."""

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.design.ivfpq import PqDistStage
from fanns.model.ivfpq import dse, options
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.search import prune
from fanns.model.ivfpq.workload import synthetic_workload

FIELDS = ("cycles", "latency", "res", "channels", "lanes")


@pytest.fixture(scope="module")
def u55c():
    return load_board("u55c")


@pytest.fixture(scope="module")
def small():
    """A small-PE workload (m = 8): hundreds of PQDist PEs fit, so most back options are dominated."""
    return synthetic_workload(10**6, 64, 8, 256, 6, 10, False, queries=40, seed=3)


def back_pair(w, board, lut_words=1):
    ctx = dse.context(w, board, board.clock_mhz, lut_words=lut_words)
    args = (ctx, stage_model.Probes.of(w.probed), w.list_sizes, Budget.from_board(board, 0.6).limits())
    return ctx, options.back_options(*args), options.back_options(*args, skip_dominated=False)


@pytest.mark.parametrize("lut_words", [pytest.param(1, marks=pytest.mark.slow), 4])  # 1: ~5x the options
def test_dominated_back_options_are_those_the_pruning_drops(u55c, small, lut_words):
    _, fast, full = back_pair(small, u55c, lut_words)
    assert fast.dominated > 0 and len(fast) + fast.dominated == len(full)
    assert (fast.fit, fast.raw) == (full.fit, full.raw) and np.array_equal(fast.floor, full.floor)
    a, b = prune(fast), prune(full)
    assert a.configs == b.configs and a.details == b.details
    for name in FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.slow  # times every back option of `small`
def test_sel_k_floor_is_below_every_interval(u55c, small):
    ctx, _, full = back_pair(small, u55c)
    probes = stage_model.Probes.of(small.probed)
    by_pes: dict = {}
    for i, (st, _) in enumerate(full.configs):
        by_pes.setdefault((st.pes, st.double_buffer, st.memory), []).append(i)
    tight = 0
    for (pes, _, memory), rows in by_pes.items():
        st = full.configs[rows[0]][0]
        pe, mem = stage_model.pq_pe(ctx, st), ctx.memory(memory)
        work = stage_model.pq_work(stage_model.pq_shares(ctx.m, probes, pes, mem.port_bits), pe)
        configs = [(full.configs[i][1], full.configs[i][0].pes_per_channel()) for i in rows]
        floors = stage_model.sel_k_floors_many(configs, work, pe, mem.beats_per_cycle)
        intervals = full.cycles[rows, 1]
        assert (floors <= intervals).all()
        tight += int(np.isclose(floors, intervals, rtol=1e-6).sum())
    assert tight > 0  # the floor is the interval where level 2 or a held stream binds


def outcome_record(out) -> dict:
    """The whole outcome of a DSE: every ranked and Pareto design and the option counts."""

    def design(p):
        return (p.workload.label(), p.ctx, repr(p.stages), p.cycles, p.resources, p.channels, p.slr, p.latency)

    return {"top": [design(p) for p in out.top], "pareto": [design(p) for p in out.pareto], "counts": out.option_counts}


# two whole DSEs, one timing every back option: minutes of CPU (53 min wall at load 17), so long;
# the fast tier checks the pruned group equals the exhaustive one
# (test_dominated_back_options_are_those_the_pruning_drops)
@pytest.mark.slow
@pytest.mark.long
def test_the_dse_chooses_what_the_exhaustive_dse_chooses(u55c, monkeypatch):
    """Two workloads (one with OPQ), every padding and LUT words: the same ranked designs, Pareto
    front and option counts as with every back option timed and every group enumerated anew for
    each (workload, padding, LUT words)."""
    ws = [synthetic_workload(10**6, 96, 8, 128, 4, 10, opq, queries=30, seed=5) for opq in (False, True)]
    fast = dse.run(ws, u55c, "R@10=0.8", u55c.clock_mhz, top=8)
    # a key no two contexts share: no group reused
    monkeypatch.setattr(dse, "CONTEXT_KEY", {g: (lambda ctx: (id(ctx),)) for g in options.GROUPS})
    original = options.back_options
    monkeypatch.setattr(options, "back_options", lambda *a, **k: original(*a, **{**k, "skip_dominated": False}))
    slow = dse.run(ws, u55c, "R@10=0.8", u55c.clock_mhz, top=8)
    assert fast.best is not None and len(fast.top) == 8
    assert outcome_record(fast) == outcome_record(slow)


def test_pes_per_channel_counts_channel_of():
    for pes in range(1, 80):
        for channels in range(1, pes + 1):
            st = PqDistStage(pes, True, "hbm", channels, 256)
            counts = [0] * channels
            for p in range(pes):
                counts[st.channel_of(p)] += 1
            assert st.pes_per_channel() == counts
