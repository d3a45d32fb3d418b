"""The DSE and W LUT words a cycle (`PqDistStage.lut_words`): which W it searches, and what W buys.

Why: on lists shorter than a LUT per PE every PQDist PE waits 256 cycles a probed cell for its
LUT, so a query costs nprobe x 256 cycles whatever the PE count; W words a beat cut the wait to
256 / W. The DSE searches a space per W only where the loads would bound the design."""

import dataclasses

import numpy as np

from fanns.boards import load_board
from fanns.design.ivfpq import BuildLutStage
from fanns.model.ivfpq import dse
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.options import WIDE_LUT_PES_PER_CHANNEL, back_options
from fanns.model.ivfpq.workload import synthetic_workload


def test_short_lists_search_every_w_and_long_lists_only_one():
    board = load_board("u55c")
    short = synthetic_workload(100_000, 128, 16, 1024, 8, 10, False, queries=20, seed=0)  # ~100 codes a list
    long = synthetic_workload(100_000_000, 128, 16, 8192, 16, 10, False, queries=20, seed=0)  # ~12,000
    assert dse.lut_word_choices(short, board, 300.0) == [1, 2, 4, 8]
    assert dse.lut_word_choices(long, board, 300.0) == [1]


def test_w_is_a_space_of_its_own_and_pays_on_short_lists(monkeypatch):
    """On ~100-code lists at nprobe 8 the best design loads several words a cycle and is faster
    than the best of one word a cycle, whose PQDist PEs spend 8 x 256 cycles a query loading."""
    board = load_board("u55c")
    w = synthetic_workload(100_000, 128, 16, 1024, 8, 10, False, queries=20, seed=0)
    best = dse.run([w], board, "R@10=0.5", 300.0, top=1).best
    assert best.ctx.lut_words > 1 and best.stages.pq_dist.lut_words == best.ctx.lut_words
    assert best.stages.build_lut.pes % best.ctx.lut_words == 0
    monkeypatch.setattr(dse, "lut_word_choices", lambda *_: [1])
    one = dse.run([w], board, "R@10=0.5", 300.0, top=1).best
    assert one.ctx.lut_words == 1 and one.timings["pq_dist"].interval >= 8 * 256
    assert best.qps > 1.5 * one.qps


def test_the_groups_build_as_many_luts_as_whole_pes():
    """G groups of W PEs of a W-th of the rows: about the LUT rate of G * W PEs of whole LUTs."""
    board = load_board("u55c")
    w = synthetic_workload(100_000, 128, 16, 1024, 8, 10, False, queries=20, seed=0)
    one = dse.context(w, board, 300.0)
    four = dse.context(w, board, 300.0, lut_words=4)
    st = BuildLutStage(8, 16, "bram")
    a, b = stage_model.lut_timing(one, st).interval, stage_model.lut_timing(four, st).interval
    assert np.isclose(b, a * (4 * (256 // 4 + 1)) / (256 + 1))
    assert dataclasses.replace(four, lut_words=1) == one


def test_wide_luts_put_at_most_two_pes_on_a_channel():
    """The feeder's per-cell timing is verified for W > 1 only up to 2 PEs a channel
    (`options.WIDE_LUT_PES_PER_CHANNEL`); one word a cycle keeps every grouping."""
    board = load_board("u55c")
    w = synthetic_workload(100_000, 128, 16, 1024, 8, 10, False, queries=20, seed=0)
    for ways, most in ((4, WIDE_LUT_PES_PER_CHANNEL), (1, None)):
        ctx = dse.context(w, board, 300.0, lut_words=ways)
        limits = Budget.from_board(board, 0.6).limits()
        # every option offered (none left out as dominated: the groupings offered, not kept)
        back = back_options(ctx, stage_model.Probes.of(w.probed), w.list_sizes, limits, skip_dominated=False)
        busiest = {max(st.pes_per_channel()) for st, _ in back.configs}
        assert (max(busiest) <= most) if most else max(busiest) > WIDE_LUT_PES_PER_CHANNEL
