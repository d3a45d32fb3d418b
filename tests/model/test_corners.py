"""The corners of the option space (`fanns.model.ivfpq.corners`): each is a design the DSE could
emit (its options as the DSE enumerates them, within the budget and placed on the SLRs) that takes
one option to the extreme the DSE offers. Slow: each corner enumerates the DSE's options of every
padding of d = 100 (about 4 CPU s)."""

import pytest

from fanns.boards import load_board
from fanns.model.ivfpq import dse, report
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.corners import corner_point
from fanns.model.ivfpq.options import all_options
from fanns.model.ivfpq.workload import synthetic_workload

UTIL = 0.6
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def case():
    """d = 100 with m = 20 (issue 46's shape: sub-vectors of 5, padded for wide lanes) on a U55C."""
    board = load_board("u55c")
    w = synthetic_workload(20_000, 100, 20, 128, 2, 10, False, queries=50, seed=0)
    return w, board


def _offered(w, board, group):
    ctx = dse.context(w, board, board.clock_mhz)
    limits = Budget.from_board(board, UTIL).limits()
    return all_options(ctx, stage_model.Probes.of(w.probed), w.list_sizes, limits)[group]


def _design(point, board):
    budget = Budget.from_board(board, UTIL)
    outcome = dse.Outcome("R@10=0.5", board, budget, board.clock_mhz, [point.workload], [], [point], [], None)
    assert point.resources.fits(budget.total)
    return report.to_design(point, outcome, None)  # validates the design file


def test_the_most_ivf_pes_behind_hsmpqg_are_every_cell(case):
    w, board = case
    point = corner_point("ivf-pes-hsmpqg-most", w, board, board.clock_mhz, UTIL)
    most = max(cfg[0].pes for cfg in _offered(w, board, "front").configs if cfg[1].arch == "hsmpqg")
    design = _design(point, board)
    assert design.stages.ivf_dist.pes == design.stages.sel_cells.streams == most == w.nlist
    assert design.stages.sel_cells.arch == "hsmpqg"


def test_w8_corner_loads_eight_lut_words_on_the_most_channels(case):
    w, board = case
    design = _design(corner_point("lut-words-8-channels", w, board, board.clock_mhz, UTIL), board)
    pq = design.stages.pq_dist
    assert pq.lut_words == 8 and design.stages.build_lut.pes % 8 == 0
    assert pq.channels == board.memory[0].count - 1  # every HBM channel but the host I/O one
    assert max(pq.pes_per_channel()) <= 2  # `options.WIDE_LUT_PES_PER_CHANNEL`
