"""The performance model on the published FANNS designs themselves (thesis Table 6.3, p. 124)."""

from __future__ import annotations

import json

import pytest

from fanns.model.ivfpq import published_eval as pe
from fanns.model.ivfpq.published import TABLE, parse_factory, published_designs

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


def test_all_three_within_ten_percent(evals):
    """With the published performance model's structure (per-cell LUT load, chain skew and
    pipeline depth; SIFT100M's measured scan ratio) every published design lands within +-10 %."""
    for k in (1, 10, 100):
        assert abs(evals[k].ratio - 1) <= pe.TOLERANCE, (k, evals[k].ratio)
    assert evals[1].bottleneck == "pq_dist"
    assert evals[10].bottleneck == evals[100].bottleneck == "sel_k"


def _published_stage5(row: dict) -> float:
    """Cycles per query of the published PQDist array as FANNS's performance model states them
    (Auto-ANNS-Accelerator performance_model/stages.py, stage 5), written out independently."""
    nlist, opq = parse_factory(row["index"])
    pes, nprobe = int(row["pq_dist"][0]), int(row["nprobe"])
    codes = int(pe.PUBLISHED_SCAN_RATIO[opq][nlist] * 1e8 / nlist / pes) + 1
    return nprobe * ((2 + 256 + pes - 1) + (63 + codes))


def test_pq_dist_agrees_with_the_published_formula(evals):
    """This model's PQDist cycles (synthetic size-biased probes, its own LUT load and code rate)
    are within 1 % of the published model's closed form on all three designs."""
    for row in published_designs():
        model = evals[row["k"]].intervals["pq_dist"]
        assert model == pytest.approx(_published_stage5(row), rel=0.01), row["k"]


def test_assumptions_move_the_ratio_in_the_stated_direction():
    row = next(r for r in published_designs() if r["k"] == 10)
    base = pe.evaluate(row, pe.Assumptions(), QUERIES)
    # double buffering hides the 256-cycle LUT load per cell: faster
    assert pe.evaluate(row, pe.Assumptions(double_buffer=True), QUERIES).qps > 1.3 * base.qps
    # more imbalanced lists: more codes in the probed (size-biased) cells: slower
    assert pe.evaluate(row, pe.Assumptions(imbalance=1.5), QUERIES).qps < base.qps
    # overlapping cells (no drain, no chain re-synchronisation per cell) only removes cycles
    assert pe.evaluate(row, pe.Assumptions(drain_per_cell=False), QUERIES).qps > base.qps
    assert pe.evaluate(row, pe.Assumptions(chain_per_cell=False), QUERIES).qps > base.qps


def test_published_pe_cost_is_much_larger_than_the_models():
    rows = {r["k"]: r for r in published_designs()}
    # 24.0 % of 1,303,680 LUTs for 57 PQDist PEs (Table 6.3): about 5,500 LUTs each
    assert pe.published_pe_luts(rows[1]) == pytest.approx(0.24 * 1_303_680 / 57)
    model = pe.model_pq_pe().resources("xcup")
    assert model.dsp == 0
    assert model.lut * 10 < pe.published_pe_luts(rows[1])
