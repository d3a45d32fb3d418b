"""Regression of the u250 hang of issue 17: ROM sections of different word widths at load.

The DSE's u250 design for R@100=0.7 on sift-10k (512-bit DDR4 ports) hung: IVFDist took 8-lane
(128-bit) words and BuildLUT 16-lane (256-bit) ones, so the I/O router split the centroids and
the codebook through two beat splitters. The 128-bit one still emits the last pieces of the IVF
section's final beat (4 words per beat) while the 256-bit one already emits codebook words, so
two ROM words went on chip in one cycle; the load counter counted one, never reached the total,
and the accelerator waited in LOAD forever. Same-width sections share one splitter and never
overlap, which is why 16 lanes on u250 and the tested u55c designs passed.

The pinned design here has that shape at the smallest size (d = 128, m = 16, K = 100, two PEs per
stage); a few queries must finish and equal the reference model bit for bit.
"""

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run

QUERIES = 2


def split_design():
    data = random_index(nlist=32, n=2000, d=128, m=16, empty=2)
    fmt = random_format(128, 16)
    design = pinned_design(data, fmt, board="u250", nprobe=4, k=100, ivf=(2, 8, "bram"), lut=(2, 16, "bram"), pq=(2, 1))
    return data, fmt, design


def test_the_design_loads_through_two_splitters():
    """The shape the regression needs: 128- and 256-bit ROM words from 512-bit beats."""
    _, _, design = split_design()
    assert design.stages.ivf_dist.lanes * 16 == 128 and design.stages.build_lut.lanes * 16 == 256
    assert design.stages.pq_dist.port_bits == 512


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_u250_mixed_width_load_finishes_bit_exact(tmp_path, build_root):
    data, fmt, design = split_design()
    queries = np.random.default_rng(5).standard_normal((QUERIES, 128)).astype(np.float32)
    test = TestQueries(queries, np.zeros((QUERIES, design.k), dtype=np.int64))
    project = generate_rtl(design, data, test, tmp_path / "project")
    sim = RtlProjectSim(project.path, build_root / "rtl")
    sim.build()
    run = sim.run([Run(nq=QUERIES, nprobe=design.nprobe, k=design.k)])["runs"][0]
    expected = DesignReference(design, IvfPqReference(data, fmt)).search_keys(queries)
    assert run["status"] & 1, run  # loaded
    assert run["mismatched_keys"] == 0 and run["checked_keys"] == QUERIES * design.k, run
    assert np.array_equal(run["keys"], expected)
