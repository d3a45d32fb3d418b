"""Budget with the shell under the cap per SLR, and the first-fit SLR assignment rule."""

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.model.ivfpq.budget import Budget, SlrFill, assign_slrs, overflow_text
from fanns.model.ivfpq.stages import Unit
from fanns.resources import Resources


def test_budget_is_cap_times_device_minus_shell_per_slr():
    board = load_board("u55c")
    b = Budget.from_board(board, 0.6)
    for name, dev in board.device_slrs.items():
        shell = board.shell.get(name, Resources())
        for got, d, s in zip(b.slrs[name].as_tuple(), dev.as_tuple(), shell.as_tuple()):
            assert got == max(0.0, 0.6 * d - s)
    assert b.slrs["SLR0"].lut == pytest.approx(0.6 * 434560 - 208600)
    assert b.vector()[-1] == 32  # HBM channels
    assert b.total.lut == pytest.approx(sum(r.lut for r in b.slrs.values()))


def test_a_cap_below_the_shell_leaves_nothing_in_that_slr():
    b = Budget.from_board(load_board("u55c"), 0.3)
    assert b.slrs["SLR0"].uram == 0.0 and b.slrs["SLR0"].lut == 0.0
    assert b.slrs["SLR1"].lut > 0


def small_budget() -> Budget:
    slrs = {
        "A": Resources(lut=100, ff=100, bram18=10, uram=0, dsp=4),
        "B": Resources(lut=300, ff=300, bram18=0, uram=2, dsp=0),
    }
    return Budget("toy", 0.6, Resources(), Resources(), slrs, (4,), ("hbm",))


def test_first_fit_in_pipeline_order_and_instance_granularity():
    b = small_budget()
    units = [
        Unit("ivf_dist", "pe", 3, Resources(lut=30, ff=30, dsp=1)),  # 3 fit A (90 LUT)
        Unit("build_lut", "store", 1, Resources(bram18=8)),  # BRAM only in A
        Unit("pq_dist", "pe", 5, Resources(lut=40, ff=40)),  # A is full: all go to B
        Unit("sel_k", "hpq", 2, Resources(lut=5, ff=5)),  # back fills A's gap first (first fit)
    ]
    got = assign_slrs(units, b)
    assert got == {
        "A": [["ivf_dist", "pe", 3], ["build_lut", "store", 1], ["sel_k", "hpq", 2]],
        "B": [["pq_dist", "pe", 5]],
    }


def test_an_instance_too_large_for_every_slr_fails_even_if_the_total_fits():
    b = small_budget()
    assert assign_slrs([Unit("lut", "store", 1, Resources(bram18=11))], b) is None  # 11 > 10 in A, 0 in B
    assert assign_slrs([Unit("pq", "pe", 9, Resources(lut=40, ff=1))], b) == {
        "A": [["pq", "pe", 2]],
        "B": [["pq", "pe", 7]],
    }
    assert assign_slrs([Unit("pq", "pe", 10, Resources(lut=40))], b) is None


def first_fit(units, budget):
    """The assignment rule written plainly, on float64 vectors (the reference for `SlrFill`)."""
    names = list(budget.slrs)
    room = np.array([budget.slrs[n].as_tuple() for n in names], dtype=np.float64)
    out = {n: [] for n in names}
    for unit in units:
        each, left = unit.each.as_array(), unit.count
        for s, name in enumerate(names):
            need = each > 0
            k = left if not need.any() else int(np.floor(np.min(room[s, need] / each[need]) + 1e-9))
            k = min(left, max(0, k))
            if k:
                room[s] -= k * each
                left -= k
                out[name].append([unit.stage, unit.label, k])
        if left:
            return None
    return out


@pytest.mark.parametrize("seed", range(20))
def test_slr_fill_continued_from_a_prefix_equals_the_plain_first_fit(seed):
    """The DSE places a design's front stages once and continues the fill for each back option:
    any split of the units gives the plain rule's assignment (or its failure), on a board's SLRs
    with fractional resources."""
    rng = np.random.default_rng(seed)
    b = Budget.from_board(load_board(["u55c", "u250", "u280"][seed % 3]), 0.6)
    scale = b.total.as_array() / 40
    units = [
        Unit("s", f"u{i}", int(rng.integers(0, 12)), Resources(*(scale * rng.random(5) * (rng.random(5) < 0.7))))
        for i in range(int(rng.integers(1, 30)))
    ]
    cut = int(rng.integers(0, len(units) + 1))
    head = SlrFill.start(b).place(units[:cut])
    fill = None if head is None else head.place(units[cut:])
    assert (None if fill is None else fill.assignment()) == first_fit(units, b) == assign_slrs(units, b)


def test_overflow_text_names_the_resource_and_the_excess():
    b = small_budget()
    use = np.array([800, 10, 0, 0, 0, 5], dtype=float)
    lines = overflow_text(use, b)
    assert lines == [
        "LUT: needs 800, the budget allows 400 (+100%)",
        "hbm channels: needs 5, the budget allows 4 (+25%)",
    ]
