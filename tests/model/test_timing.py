"""The design's RTL clock estimate and the clock a prediction uses: sourced default, RTL estimate, --clock."""

import math

import pytest

from fanns.boards import Clock, load_board
from fanns.calibration import fit_timing
from fanns.model.ivfpq import timing
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.model.timing import SLR_CROSSING_NS, TimingElement, reset_element, resolve_clock, slowest_first
from fanns.pe import timing_table
from fanns.pe.timing_table import TimingFit
from fanns.tools.delay_models import XCUP


def _point(params: dict, delay: float, ff: float) -> dict:
    t = {
        "reg_to_reg": delay,
        "lut_levels": 3,
        "carry_cells": 1,
        "blocks": [],
        "path": ["FDRE/4", "LUT6/1", "LUT6/1", "LUT3/1", "CARRY4/1"],
        "max_lut_levels": 3,
        "max_fanout": 9,
        "max_fanout_net": "en",
        "in_to_reg": 0.5,
        "reg_to_out": 0.4,
        "in_to_out": 0.0,
        "cells": 100,
    }
    return {"params": params, "features": {"1": 1.0, "log2_ff": math.log2(1 + ff)}, "timing": t}


def test_the_fit_is_exact_at_its_points_and_says_when_it_extrapolates():
    fit = fit_timing([_point({"x": 1}, 2.0, 15), _point({"x": 2}, 2.5, 255), _point({"x": 3}, 3.0, 4095)])
    assert fit.coefficients["1"] == pytest.approx(1.5) and fit.coefficients["log2_ff"] == pytest.approx(0.125)
    assert fit.max_rel_error == pytest.approx(0.0, abs=1e-9)

    class Fake:
        name = "fake"

        def __init__(self, x, ff):
            self.x, self.ff = x, ff

        def params(self):
            return {"x": self.x}

        def timing_features(self, family):
            return {"1": 1.0, "log2_ff": math.log2(1 + self.ff)}

    measured = fit.predict(Fake(2, 255), "xcup")
    assert measured.basis == "measured" and measured.reg_to_reg == 2.5 and measured.fmax_mhz == 400
    fitted = fit.predict(Fake(9, 65535), "xcup")
    assert fitted.reg_to_reg == pytest.approx(3.5) and fitted.basis.startswith("fitted (3 points")
    assert fitted.depth_text() == "3 LUT levels, 1 carry cell"


def test_the_clock_is_the_users_else_the_lower_of_board_and_estimate():
    board = Clock(140.0, "board", "a published build")
    fast = slowest_first([reset_element(XCUP, 1000)], "xcup", [])
    assert fast.fmax_mhz > 140 and resolve_clock(board, None, fast) == board
    slow = slowest_first([reset_element(XCUP, 1000), _element(9.0)], "xcup", ["infra.control"])
    got = resolve_clock(board, None, slow)
    assert (got.origin, got.mhz) == ("rtl", 111.1) and "pe x.y" in got.source
    assert slow.limit.label == "x.y" and slow.uncovered == ("infra.control",)
    assert resolve_clock(board, Clock.user(300), slow) == Clock.user(300)  # --clock overrides both
    assert resolve_clock(board, None, None) == board


def _element(delay: float) -> TimingElement:
    return TimingElement("pe", "x.y", delay, "9 LUT levels", "measured")


def test_slr_crossings_follow_the_assignment():
    slr = {
        "SLR0": [["infra", "axil_csr", 1], ["ivf_dist", "ivf_dist[8]", 2]],
        "SLR1": [["ivf_dist", "ivf_dist[8]", 2], ["sel_cells", "hpq", 4], ["pq_dist", "pq_decode", 8]],
        "SLR2": [["sel_k", "hpq", 8]],
    }
    found = {e.label: e.delay_ns for e in timing.slr_elements(slr)}
    assert found == {
        "within ivf_dist": SLR_CROSSING_NS,
        "pq_dist -> sel_k (SLR1 -> SLR2)": SLR_CROSSING_NS,
        "sel_k -> infra results (SLR2 -> SLR0)": 2 * SLR_CROSSING_NS,
    }
    assert timing.slr_elements({"SLR0": [["infra", "a", 1], ["sel_k", "b", 1]]}) == []


@pytest.fixture
def measured_tables(monkeypatch):
    """Every PE measured at one delay on xcup (the committed tables are checked elsewhere)."""
    fit = TimingFit(["1", "log2_ff", "log2_lut"], {"1": 2.0}, [_point({"never": 0}, 2.0, 1)], 0.0, "test")
    monkeypatch.setattr(timing_table, "load_timing_table", lambda family: _Every(fit))


class _Every(dict):
    def __init__(self, fit):
        super().__init__()
        self.fit = fit

    def get(self, name, default=None):
        return self.fit


class _Outcome:
    def __init__(self, clock_mhz):
        self.clock_mhz, self.best = clock_mhz, object()


def test_the_dse_runs_again_at_a_lower_estimate(monkeypatch):
    """The board's 140 MHz stands while the chosen design's estimate is above it; below it, the
    DSE runs again at the estimate (memory per cycle, and so the best design, move with the
    clock); --clock is taken as given, the estimate still reported."""
    u55c = load_board("u55c")
    runs = []
    monkeypatch.setattr(timing.dse, "run", lambda w, b, g, mhz, *a, **k: runs.append(mhz) or _Outcome(mhz))
    estimates = iter([500.0, 500.0])
    monkeypatch.setattr(timing, "point_timing", lambda p: slowest_first([_element(1e3 / next(estimates))], "x", []))
    out = timing.run([], u55c, "goal", None)
    assert runs == [140.0] and out.clock == u55c.clock and out.timing.fmax_mhz == pytest.approx(500.0)

    runs.clear()
    estimates = iter([100.0, 120.0])  # the design chosen at 100 MHz reaches 120: 100 stands
    out = timing.run([], u55c, "goal", None)
    assert runs == [140.0, 100.0] and (out.clock.origin, out.clock_mhz) == ("rtl", 100.0)
    assert out.timing.fmax_mhz == pytest.approx(120.0)

    runs.clear()
    estimates = iter([100.0])
    out = timing.run([], u55c, "goal", Clock.user(300))
    assert runs == [300.0] and out.clock == Clock.user(300) and out.timing.fmax_mhz == pytest.approx(100.0)


@pytest.mark.slow
def test_a_real_dse_at_the_estimate(measured_tables, monkeypatch):
    """With every PE at 2 ns (500 MHz) the board's 140 MHz stands; an estimate of 100 MHz makes
    the real DSE run again, and its QPS is at 100 MHz."""
    u55c = load_board("u55c")
    w = synthetic_workload(10**4, 32, 8, 16, 2, 10, False, queries=50)
    out = timing.run([w], u55c, "R@10=0.8", None, 0.6, top=1)
    assert out.clock == u55c.clock and out.clock_mhz == 140.0
    assert all(e.fmax_mhz == 500 for e in out.timing.elements if e.kind == "pe")
    assert "infra.control" in out.timing.uncovered  # controller registers have no PE of their own
    assert "infra.axil_csr" not in out.timing.uncovered  # the register file is one PE, timed whole
    monkeypatch.setattr(timing, "design_timing", lambda units, slr, fam, csr: slowest_first([_element(10.0)], fam, []))
    low = timing.run([w], u55c, "R@10=0.8", None, 0.6, top=1)
    assert (low.clock.origin, low.clock_mhz) == ("rtl", 100.0) and low.best.qps < out.best.qps
