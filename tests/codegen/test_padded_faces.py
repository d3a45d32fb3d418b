"""Both faces of designs whose lanes divide neither d nor d/m (issue 16): sub-vectors padded with
zeros (`format.dsub_hw`). The HLS kernel in C simulation (fast) and the RTL in the fast harness
(slow: a Verilator build each) must equal the reference model, which computes on the unpadded
arrays, bit for bit; the RTL's cycles per query must agree with the model, which prices the
padded beats.

* d = 100, m = 10, OPQ: sub-vectors of 10 padded to 12 (d_hw = 120): OPQ and IVFDist take 8
  lanes (8 does not divide 100), BuildLUT 4 (4 does not divide 10); with BuildLUT's centroids on
  chip and fetched from memory (a cell's 1,920 bits padded to eight 256-bit beats, four 64-bit
  words a beat: the fetch drops the padding), and with the OPQ matrix streamed per query (120 x
  120 int16 in 113 beats, the last one part padding; two 128-bit row words a beat).
* d = 96, m = 16 (Deep1B's shape): sub-vectors of 6 padded to 8: BuildLUT takes 4 lanes, IVFDist 8.
* d = 300, m = 10: sub-vectors of 30 padded to 32, 16 IVFDist lanes and 32 BuildLUT lanes, IVF
  centroids streamed; with BuildLUT's centroids on chip and fetched from memory (32 lanes of
  int16 are a 512-bit word, gathered from two 256-bit beats).
"""

import pytest

from fanns.sim.ivfpq.faces import PADDED_CASES, padded_case
from tests.codegen.faces import check_hls_csim, check_rtl_fast
from tests.tiers import long_params


@pytest.fixture(scope="module", params=sorted(PADDED_CASES))
def case(request):
    return padded_case(request.param)


def test_hls_csim_is_bit_exact(case, tmp_path, build_root):
    check_hls_csim(case, tmp_path, build_root)


# CI simulates the RTL of the padded design that streams the IVF centroids and fetches BuildLUT's;
# the other padded designs are long
@pytest.mark.slow
@pytest.mark.parametrize(
    "case", long_params(sorted(PADDED_CASES), long=set(PADDED_CASES) - {"d300-streamed-fetched"}), indirect=True
)
def test_rtl_is_bit_exact_and_cycles_agree_with_the_model(case, tmp_path, build_root):
    check_rtl_fast(case, tmp_path, build_root)
