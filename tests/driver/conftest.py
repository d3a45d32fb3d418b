"""One small design generated as both an HLS and an RTL project (same design, index and test
queries, so the same memory images), shared by the driver tests (read-only: tests that alter a
project copy it first)."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq_streams import DesignReference

NPROBE, K = 3, 100
"""The design of tests/codegen/test_rtl.py "random-k100" (so a session builds its Verilog once)."""


@dataclass
class Projects:
    hls: Path
    rtl: Path
    design: object
    data: object
    reference: DesignReference
    queries: np.ndarray  # float queries, more than the projects' test queries
    groundtruth: np.ndarray


def make_projects(root: Path) -> Projects:
    data = random_index(nlist=12, n=900, d=32, m=8, empty=2)
    design = pinned_design(
        data, random_format(32, 8), nprobe=NPROBE, k=K, ivf=(3, 16, "bram"), lut=(2, 16, "bram"), pq=(5, 2)
    )
    rng = np.random.default_rng(5)
    queries = rng.standard_normal((400, 32)).astype(np.float32)
    gt = np.argsort(((queries[:, None, :] - rng.standard_normal((1, 900, 32))) ** 2).sum(-1), axis=1)[:, :K]
    test = TestQueries(queries[:12], gt[:12])
    generate_hls(design, data, test, root / "hls")
    generate_rtl(design, data, test, root / "rtl")
    return Projects(root / "hls", root / "rtl", design, data, DesignReference(design, data), queries, gt)


@pytest.fixture(scope="session")
def projects(tmp_path_factory) -> Projects:
    return make_projects(tmp_path_factory.mktemp("driver-projects"))
