"""Both faces of a design whose OPQ and BuildLUT PEs are wider than the I/O beat (issue 16: one
OPQ PE rotates each query, and BuildLUT PEs pay only up to nprobe, so for 384-d data only wide
lanes keep them off the critical path). d = 384, m = 16 on u55c, the design the DSE picks for a
synthetic 384-d set at nprobe 2: 192 OPQ lanes (a matrix row is 2 words of 3072 bits, each
gathered from twelve 256-bit beats), 32 IVFDist lanes, 96 BuildLUT lanes (4 sub-vectors of 24 per
word); the rotated query is regrouped from 192-lane words to 32 and 96. The OPQ matrix is in
UltraRAM (where the DSE puts it when block RAM is short: from d = 1536 on a U55C), or streamed
per query (where no on-chip memory holds it: from d = 2048 on a U55C): then each 3072-bit row
word waits for its twelve beats, so the channel, not the PE, sets OPQ's pace (the model's
`opq_stream_slowdown`: 12x). The HLS kernel in C simulation (fast) and the RTL in the fast
harness (slow: a Verilator build) must equal the reference model bit for bit, and the RTL's
cycles per query must agree with the model."""

import pytest

from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.sim.ivfpq.faces import face_case
from tests.codegen.faces import check_hls_csim, check_rtl_fast
from tests.tiers import long_params

OPQ_STORAGE = ["uram", "stream"]


@pytest.fixture(scope="module", params=OPQ_STORAGE)
def case(request):
    d, m = 384, 16
    data = random_index(nlist=16, n=1500, d=d, m=m, opq=True, empty=1, seed=7)
    fmt = random_format(d, m)
    design = pinned_design(
        data,
        fmt,
        board="u55c",
        nprobe=2,
        k=10,
        ivf=(1, 32, "bram"),
        lut=(2, 96, "bram"),
        pq=(3, 2),
        opq_lanes=192,
        opq_storage=request.param,
    )
    assert (design.stages.opq.lanes, design.stages.build_lut.lanes) == (192, 96)
    return face_case(f"d384-opq192-{request.param}-lut96", data, fmt, design)


def test_hls_csim_is_bit_exact(case, tmp_path, build_root):
    check_hls_csim(case, tmp_path, build_root)


# CI simulates the RTL with the OPQ matrix streamed per query; in UltraRAM it is long
@pytest.mark.slow
@pytest.mark.parametrize("case", long_params(OPQ_STORAGE, long={"uram"}), indirect=True)
def test_rtl_is_bit_exact_and_cycles_agree_with_the_model(case, tmp_path, build_root):
    check_rtl_fast(case, tmp_path, build_root)
