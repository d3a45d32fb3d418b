"""Both faces of a design whose OPQ PE is wider than the I/O beat (issue 16: one OPQ PE rotates
each query, so for 384-d and wider data only wide lanes keep it off the critical path). d = 384,
m = 16 on u55c: 128 OPQ lanes, so a matrix row is 3 words of 2048 bits, each gathered from four
512-bit beats, and the rotated query is regrouped from 128-lane words to IVFDist's 32 and
BuildLUT's 8. The HLS kernel in C simulation (fast) and the RTL in the fast harness (slow: a
Verilator build) must equal the reference model bit for bit, and the RTL's cycles per query must
agree with the model."""

import pytest

from fanns.model.ivfpq.pinned import pinned_design
from tests.codegen.faces import check_hls_csim, check_rtl_fast, face_case
from tests.codegen.helpers import random_format, random_index


@pytest.fixture(scope="module")
def case():
    d, m = 384, 16
    data = random_index(nlist=16, n=1500, d=d, m=m, opq=True, empty=1, seed=7)
    fmt = random_format(d, m)
    design = pinned_design(
        data, fmt, board="u55c", nprobe=3, k=10, ivf=(2, 32, "bram"), lut=(2, 8, "bram"), pq=(3, 2), opq_lanes=128
    )
    assert design.stages.opq.lanes == 128
    return face_case("d384-opq-lanes128", data, fmt, design)


def test_hls_csim_is_bit_exact(case, tmp_path, build_root):
    check_hls_csim(case, tmp_path, build_root)


@pytest.mark.slow
def test_rtl_is_bit_exact_and_cycles_agree_with_the_model(case, tmp_path, build_root):
    check_rtl_fast(case, tmp_path, build_root)
