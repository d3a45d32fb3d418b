"""Both faces of designs with streamed IVF centroids (`ivf_dist.storage: stream`, issue 16): the
HLS kernel in C simulation (fast) and the RTL in the fast harness (slow: a Verilator build each)
must equal the reference model bit for bit, and the RTL's cycles per query must agree with the
model's. Every design is IVFDist-bound (a large nlist, few probes), so the interval measured is
the streamed stage's own.

* 3 PEs of 4 lanes share one channel (four 64-bit words per 256-bit HBM beat), 512 centroids
  split 171/171/170: the last row is ragged.
* 1 PE of 16 lanes: one 256-bit word per beat.
* 1 PE of 32 lanes: a 512-bit word gathered from two beats (the model halves its rate).
"""

import pytest

from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.sim.ivfpq.faces import face_case
from tests.codegen.faces import check_hls_csim, check_rtl_fast

# name: d, m, nlist, ivf (PEs, lanes, storage), lut (PEs, lanes, centroids)
CASES = {
    "3-pes-share-a-channel": (32, 8, 512, (3, 4, "stream"), (2, 32, "bram")),
    "1-pe-word-per-beat": (32, 8, 256, (1, 16, "stream"), (2, 32, "bram")),
    "1-pe-word-of-two-beats": (64, 8, 256, (1, 32, "stream"), (2, 32, "bram")),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    d, m, nlist, ivf, lut = CASES[request.param]
    data = random_index(nlist=nlist, n=2000, d=d, m=m, opq=False, empty=1)
    fmt = random_format(d, m)
    design = pinned_design(data, fmt, nprobe=2, k=10, ivf=ivf, lut=lut, pq=(3, 2))
    assert design.stages.ivf_dist.storage == "stream"
    return face_case(request.param, data, fmt, design)


def test_hls_csim_is_bit_exact(case, tmp_path, build_root):
    check_hls_csim(case, tmp_path, build_root)


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_rtl_is_bit_exact_and_cycles_agree_with_the_model(case, tmp_path, build_root):
    check_rtl_fast(case, tmp_path, build_root)
