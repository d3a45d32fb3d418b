"""BuildLUT PEs beyond nprobe: the LUTs of a run go round the PEs across queries (the k-th LUT
to PE k mod P), so 3 PEs at nprobe 2 build the LUTs of 1.5 queries at a time and a query costs
2/3 of a LUT interval. Before, every query started at PE 0: the third PE never worked and a
query cost a whole interval, so this design's RTL would measure 1.5x the model. BuildLUT is the
bottleneck here (8 words a sub-centroid row: 2,056 cycles a LUT, the other stages under 200 a
query). Both faces must equal the reference model bit for bit, and the RTL's cycles per query
must agree with the model's nprobe / P intervals.

A second design paces the probes: one IVFDist PE of 2 lanes takes 544 cycles a query, so at
nprobe 1 the first LUTs of a run reach BuildLUT's 3 PEs one IVFDist interval apart, not at once,
and a short run's span holds that spacing (`fanns.model.ivfpq.selk.LutSource.arrival`): over its
6 queries the RTL measures 629.2 cycles a query and the model says 629.2; without the spacing the
model said 544.0 (-13.5 %)."""

import pytest

from fanns.boards import load_board
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import sequence as sequence_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.sim.ivfpq.faces import face_case
from tests.codegen.faces import check_hls_csim, check_rtl_fast

NPROBE, LUT_PES = 2, 3


def _case(name: str, nprobe: int, ivf: tuple[int, int, str]) -> dict:
    d, m = 64, 16
    data = random_index(nlist=16, n=1200, d=d, m=m, empty=1, seed=11)
    fmt = random_format(d, m)
    design = pinned_design(data, fmt, board="u55c", nprobe=nprobe, k=10, ivf=ivf, lut=(LUT_PES, 8, "bram"), pq=(4, 2))
    return face_case(name, data, fmt, design)


@pytest.fixture(scope="module")
def case():
    return _case("lut3-nprobe2", NPROBE, (2, 16, "bram"))


@pytest.fixture(scope="module")
def paced():
    return _case("lut3-paced", 1, (1, 2, "bram"))


def test_the_model_spreads_a_querys_luts_over_every_pe(case):
    design = case["design"]
    ctx = stage_model.design_context(design, load_board(design.board))
    timing = stage_model.lut_timing(ctx, design.stages.build_lut)
    ii = stage_model.lut_pe(ctx, design.stages.build_lut).ii()
    assert timing.interval == pytest.approx(NPROBE * ii / LUT_PES)
    assert timing.detail["probes_per_pe"] == pytest.approx(NPROBE / LUT_PES, abs=1e-3)


def test_hls_csim_is_bit_exact(case, tmp_path, build_root):
    check_hls_csim(case, tmp_path, build_root)


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_rtl_is_bit_exact_and_cycles_agree_with_the_model(case, tmp_path, build_root):
    check_rtl_fast(case, tmp_path, build_root)


def test_the_model_spaces_the_first_luts_by_the_stages_in_front(paced):
    design = paced["design"]
    ctx = stage_model.design_context(design, load_board(design.board))
    source = sequence_model.lut_source(ctx, design.stages)
    ivf = stage_model.ivf_timing(ctx, design.stages.ivf_dist).interval
    assert source.arrival == ivf > stage_model.lut_timing(ctx, design.stages.build_lut).interval / 2


@pytest.mark.slow
def test_rtl_with_paced_probes_is_bit_exact_and_cycles_agree_with_the_model(paced, tmp_path, build_root):
    check_rtl_fast(paced, tmp_path, build_root)
