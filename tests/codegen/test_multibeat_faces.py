"""Both faces of designs whose PQ codes are wider than one memory beat, or narrower than 4 bytes
(issue 16: 768-d embeddings with m = 48..96; d < 4). A code of m bytes wider than a beat takes
ceil(8m / port_bits) consecutive beats of its own, zero padded (`fanns.pe.channel_feeder`); a
beat of codes with m < 4 holds no more codes than it holds 32-bit ids. The HLS kernel in C
simulation (fast) and the RTL in the fast harness (slow: a Verilator build each) must equal the
reference model bit for bit; the RTL's cycles per query must agree with the model, which prices
a code at its beats.

* d = 768, m = 48 on u55c (256-bit HBM ports): 384-bit codes, 2 beats each.
* d = 768, m = 96 on u55c: 768-bit codes, 3 beats each.
* d = 768, m = 32 on zcu104 (128-bit HP ports): 256-bit codes, 2 beats each.
* d = 2, m = 2 and d = 3, m = 3 on u55c and zcu104: 8 and 4 codes to a beat (the ids' count).
"""

import pytest

from fanns.images.ivfpq import pq_layouts
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.sim.ivfpq.faces import face_case
from tests.codegen.faces import check_hls_csim, check_rtl_fast
from tests.tiers import long_params

# name: board, d, m, ivf (PEs, lanes), lut (PEs, lanes), pq (PEs, channels), (codes per unit, beats per unit)
CASES = {
    "d768-m48-u55c": ("u55c", 768, 48, (2, 16), (2, 16), (3, 2), (1, 2)),
    "d768-m96-u55c": ("u55c", 768, 96, (1, 16), (2, 8), (2, 1), (1, 3)),
    "d768-m32-zcu104": ("zcu104", 768, 32, (1, 8), (2, 8), (3, 2), (1, 2)),
    "d2-m2-u55c": ("u55c", 2, 2, (1, 1), (2, 1), (3, 2), (8, 1)),
    "d3-m3-zcu104": ("zcu104", 3, 3, (1, 1), (2, 1), (2, 1), (4, 1)),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    board, d, m, ivf, lut, pq, unit = CASES[request.param]
    data = random_index(nlist=16, n=1500, d=d, m=m, empty=1, seed=d + m)
    fmt = random_format(d, m)
    design = pinned_design(
        data, fmt, board=board, nprobe=3, k=10, ivf=(*ivf, "bram"), lut=(*lut, "bram"), pq=pq, opq_lanes=ivf[1]
    )
    assert {(lay.codes_per_unit, lay.beats_per_unit) for _, lay in pq_layouts(design)} == {unit}
    return face_case(request.param, data, fmt, design)


def test_hls_csim_is_bit_exact(case, tmp_path, build_root):
    check_hls_csim(case, tmp_path, build_root)


# CI simulates the RTL of one multi-beat design (2 beats a code on an HBM port); the others are long
@pytest.mark.slow
@pytest.mark.parametrize("case", long_params(sorted(CASES), long=set(CASES) - {"d768-m48-u55c"}), indirect=True)
def test_rtl_is_bit_exact_and_cycles_agree_with_the_model(case, tmp_path, build_root):
    check_rtl_fast(case, tmp_path, build_root)
