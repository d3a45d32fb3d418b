"""The performance model on the published FANNS designs themselves (thesis Table 6.3, p. 124)."""

from __future__ import annotations

import json

import pytest

from fanns.model.ivfpq import published_eval as pe
from fanns.model.ivfpq.published import TABLE, published_designs

QUERIES = 300  # synthetic sample queries per design: enough for a stable mean, fast

# Table 6.3 (p. 124): K -> (IVFDist PEs, BuildLUT PEs, PQDist PEs, SelCells queues, SelK arch, SelK streams)
TABLE_63 = {
    1: (16, 5, 57, 2, "hpq", 114),
    10: (11, 9, 36, 2, "hsmpqg", 36),
    100: (8, 5, 9, 1, "hpq", 18),
}


@pytest.fixture(scope="module")
def evals() -> dict[int, pe.PublishedEval]:
    return {e.k: e for e in pe.evaluate_all(queries=QUERIES)}


def test_reproduces_table_63_pe_counts(evals):
    for k, (ivf, lut, pq, cells, arch, streams) in TABLE_63.items():
        e = evals[k]
        assert (e.pes["ivf_dist"], e.pes["build_lut"], e.pes["pq_dist"]) == (ivf, lut, pq)
        assert e.streams["sel_cells"] == cells
        assert e.selk_arch == arch
        assert e.streams["sel_k"] == streams  # HPQ: two level-1 queues per PQDist PE, as published
    assert {e.nprobe for e in evals.values()} == {5, 17, 33}


def test_device_luts_match_table():
    assert json.loads(TABLE.read_text())["device_luts"] == pe.DEVICE_LUTS


def test_k1_and_k100_within_ten_percent(evals):
    # K=1: SelCells-bound (4,096 keys through two queues a key per two cycles, p. 114): 1.066x;
    # K=100: SelK-bound under the coupled PQDist-SelK model: 0.95x.
    for k in (1, 100):
        assert abs(evals[k].ratio - 1) <= pe.TOLERANCE, (k, evals[k].ratio)
    assert evals[1].bottleneck == "sel_cells"
    assert evals[100].bottleneck == "sel_k"


def test_k10_pinned_just_outside_ten_percent(evals):
    """K=10 measures 1.10-1.11x at the assumed imbalance 1.2, just outside +-10 %: the chapter
    does not publish SIFT100M's list imbalance (at 1.5 the ratio is 0.96x), and LUT loading is
    the other large term (double buffering: 1.52x). Pinned so a model change that moves it shows."""
    assert 1.08 <= evals[10].ratio <= 1.13, evals[10].ratio
    assert evals[10].bottleneck in ("pq_dist", "sel_k")


def test_assumptions_move_the_ratio_in_the_stated_direction():
    row = next(r for r in published_designs() if r["k"] == 10)
    base = pe.evaluate(row, pe.Assumptions(), QUERIES)
    # double buffering hides the 256-cycle LUT load per cell: faster
    assert pe.evaluate(row, pe.Assumptions(double_buffer=True), QUERIES).qps > 1.3 * base.qps
    # more imbalanced lists: more codes in the probed (size-biased) cells: slower
    assert pe.evaluate(row, pe.Assumptions(imbalance=1.5), QUERIES).qps < base.qps
    # draining the pipeline per cell or re-synchronising the LUT chain per cell only adds cycles
    assert pe.evaluate(row, pe.Assumptions(drain_per_cell=True), QUERIES).qps < base.qps
    assert pe.evaluate(row, pe.Assumptions(chain_per_cell=True), QUERIES).qps < base.qps


def test_published_pe_cost_is_much_larger_than_the_models():
    rows = {r["k"]: r for r in published_designs()}
    # 24.0 % of 1,303,680 LUTs for 57 PQDist PEs (Table 6.3): about 5,500 LUTs each
    assert pe.published_pe_luts(rows[1]) == pytest.approx(0.24 * 1_303_680 / 57)
    model = pe.model_pq_pe().resources("xcup")
    assert model.dsp == 0
    assert model.lut * 10 < pe.published_pe_luts(rows[1])
