"""PQDist loading W LUT words a cycle (`PqDistStage.lut_words`), BuildLUT building each LUT in
groups of W PEs (PE r of a group the rows j = r mod W). Why: on short lists every PQDist PE
waits 256 cycles a probed cell for its LUT; W words a beat cut that to 256 / W.

Two pinned designs on 16 cells of ~75 codes (every list shorter than a LUT): W = 4 with two
groups of four BuildLUT PEs, double-buffered; W = 2 with three groups, the centroids fetched
from memory and single-buffered PEs. Both faces must return the reference model's keys bit for
bit, and the RTL's cycles per query must agree with the model's. On the W = 4 design the model
gives a quarter of W = 1's cycles a query (BuildLUT's rows split four ways, and the loads)."""

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.sim.ivfpq.faces import face_case
from tests.codegen.faces import check_hls_csim, check_rtl_fast


def _design(lut_words: int, lut: tuple[int, int, str], nprobe: int, double_buffer: bool):
    d, m = 64, 16
    data = random_index(nlist=16, n=1200, d=d, m=m, empty=1, seed=11)
    fmt = random_format(d, m)
    design = pinned_design(
        data,
        fmt,
        board="u55c",
        nprobe=nprobe,
        k=10,
        ivf=(2, 16, "bram"),
        lut=lut,
        pq=(4, 2),
        double_buffer=double_buffer,
        lut_words=lut_words,
    )
    return data, fmt, design


@pytest.fixture(scope="module")
def four():
    data, fmt, design = _design(4, (8, 8, "bram"), 3, True)
    return face_case("lut-words4", data, fmt, design)


@pytest.fixture(scope="module")
def two_fetched():
    data, fmt, design = _design(2, (6, 16, "memory"), 5, False)
    return face_case("lut-words2-fetched", data, fmt, design)


def test_the_design_records_the_lut_words_and_the_model_builds_its_pes(four):
    design = four["design"]
    assert design.stages.to_dict()["pq_dist"]["lut_words"] == 4
    ctx = stage_model.design_context(design, load_board(design.board))
    assert ctx.lut_words == 4 and ctx.lut_groups(design.stages.build_lut) == 2
    assert stage_model.lut_pe(ctx, design.stages.build_lut).rows == 64
    assert stage_model.pq_pe(ctx, design.stages.pq_dist).load_cycles == 64


def test_four_words_a_cycle_quarter_the_pq_dist_cycles_of_one(four):
    """The same PEs at one LUT word a cycle: each of the 4 PQDist PEs scans ~19 codes of a
    75-code cell but loads 256 LUT words a probe; at four words a cycle it loads 64. (BuildLUT's
    8 PEs build as many LUTs a cycle either way: 8 whole ones, or 2 groups of quarter ones.)"""
    _, _, one = _design(1, (8, 8, "bram"), 3, True)
    probes = stage_model.Probes.of(np.full((4, 3), 75))
    cycles, builds = [], []
    for d in (one, four["design"]):
        ctx = stage_model.design_context(d, load_board(d.board))
        cycles.append(stage_model.pq_timing(ctx, d.stages.pq_dist, probes)[0].interval)
        builds.append(stage_model.lut_timing(ctx, d.stages.build_lut).interval)
    assert cycles[1] == pytest.approx(cycles[0] / 4)
    assert builds[1] == pytest.approx(builds[0], rel=0.02)


def test_hls_csim_is_bit_exact(four, tmp_path, build_root):
    check_hls_csim(four, tmp_path, build_root)


def test_hls_csim_with_fetched_centroids_is_bit_exact(two_fetched, tmp_path, build_root):
    check_hls_csim(two_fetched, tmp_path, build_root)


@pytest.mark.slow
def test_rtl_is_bit_exact_and_cycles_agree_with_the_model(four, tmp_path, build_root):
    check_rtl_fast(four, tmp_path, build_root)


@pytest.mark.slow
def test_rtl_with_fetched_centroids_is_bit_exact_and_cycles_agree(two_fetched, tmp_path, build_root):
    check_rtl_fast(two_fetched, tmp_path, build_root)
