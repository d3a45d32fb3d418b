"""A lane count the DSE now offers for Deep1B's shape (issue 17): d = 96, m = 16 on u250.

Sub-vectors of 6 elements leave BuildLUT 1, 2 or 96 lanes on a 512-bit port; 96 lanes are
1536-bit words, three beats gathered per word at load and three 32-lane query words gathered per
BuildLUT word. Both faces of such a design must finish and equal the reference model bit for bit.
"""

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import buildable
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run

QUERIES = 2


@pytest.fixture(scope="module")
def d96():
    data, fmt = random_index(nlist=32, n=2000, d=96, m=16, empty=2), random_format(96, 16)
    design = pinned_design(data, fmt, board="u250", nprobe=4, k=10, ivf=(2, 32, "bram"), lut=(2, 96, "bram"), pq=(2, 1))
    assert buildable.stage_lanes("build_lut", 96, 16, fmt.vec_bits, 512) == [1, 2, 96]
    queries = np.random.default_rng(5).standard_normal((QUERIES, 96)).astype(np.float32)
    expected = DesignReference(design, IvfPqReference(data, fmt)).search_keys(queries)
    return data, design, queries, expected


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_rtl_with_96_lut_lanes_is_bit_exact(d96, tmp_path, build_root):
    data, design, queries, expected = d96
    test = TestQueries(queries, np.zeros((QUERIES, design.k), dtype=np.int64))
    project = generate_rtl(design, data, test, tmp_path / "project")
    sim = RtlProjectSim(project.path, build_root / "rtl")
    sim.build()
    run = sim.run([Run(nq=QUERIES, nprobe=design.nprobe, k=design.k)])["runs"][0]
    assert run["mismatched_keys"] == 0 and run["checked_keys"] == QUERIES * design.k, run
    assert np.array_equal(run["keys"], expected)


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_hls_with_96_lut_lanes_is_bit_exact(d96, tmp_path, build_root):
    data, design, queries, expected = d96
    generate_hls(design, data, TestQueries(queries, np.zeros((QUERIES, design.k), dtype=np.int64)), tmp_path / "hls")
    with HlsCsim(tmp_path / "hls", build_root / "hls_csim") as sim:
        assert np.array_equal(sim.search_keys(queries), expected)
