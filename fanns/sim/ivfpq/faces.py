"""Both faces of one pinned IVF-PQ design against the reference model, for the shape tests and
their benchmarks: a case (`face_case`: the design, random queries, the reference model's keys),
its HLS kernel's keys in C simulation (`hls_csim_keys`) and its RTL's run in the fast harness
(`rtl_fast_run`, the model built at g++ -O0: six queries run, the build is the cost); and the
padded-sub-vector designs (`PADDED_CASES`: lanes that divide neither d nor d/m) that
tests/codegen/test_padded_faces.py checks and benchmarks/padded_faces.py records.

Why in the package: a benchmark runs as `python benchmarks/X.py`, where only the installed
package is importable (not the tests).
"""

import dataclasses
from pathlib import Path

import numpy as np

from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.errors import FannsError
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run, measured_interval
from fanns.tools.vmodel import QUICK_BUILD

QUERIES = 6


def face_case(name: str, data, fmt, design) -> dict:
    """`design` with `QUERIES` random queries and the keys the reference model returns for them."""
    queries = np.random.default_rng(7).standard_normal((QUERIES, data.d)).astype(np.float32)
    expected = DesignReference(design, IvfPqReference(data, fmt)).search_keys(queries)
    test = TestQueries(queries, np.zeros((QUERIES, design.k), dtype=np.int64))
    return {"name": name, "data": data, "design": design, "queries": queries, "test": test, "keys": expected}


def hls_csim_keys(case: dict, work: Path, build_root: Path) -> np.ndarray:
    """The keys the case's generated HLS kernel returns in C simulation."""
    generate_hls(case["design"], case["data"], case["test"], work / "hls")
    with HlsCsim(work / "hls", build_root / f"hls_{case['name']}") as sim:
        return sim.search_keys(case["queries"])


def rtl_fast_run(case: dict, work: Path, build_root: Path) -> tuple[dict, object, float]:
    """The case's generated RTL run in the fast harness: the run, the model's prediction for it
    and the measured cycles per query."""
    design = case["design"]
    project = generate_rtl(design, case["data"], case["test"], work / "rtl")
    sim = RtlProjectSim(project.path, build_root / f"rtl_{case['name']}", harness="fast", options=QUICK_BUILD)
    sim.build()
    run = sim.run([Run(nq=QUERIES, nprobe=design.nprobe, k=design.k)])["runs"][0]
    return run, sim.predicted_run(0, QUERIES), measured_interval(run)


PADDED_CASES = {
    "d100-opq-lanes8": (100, 10, 12, "bram", (2, 8, "bram"), (2, 4, "bram")),
    "d100-opq-fetched": (100, 10, 12, "bram", (2, 8, "bram"), (2, 4, "memory")),
    "d100-opq-streamed": (100, 10, 12, "stream", (2, 8, "bram"), (2, 4, "bram")),
    "d96-lut-lanes4": (96, 16, 8, None, (3, 8, "uram"), (2, 4, "bram")),
    "d300-streamed": (300, 10, 32, None, (2, 16, "stream"), (1, 32, "bram")),
    "d300-streamed-fetched": (300, 10, 32, None, (2, 16, "stream"), (1, 32, "memory")),
}
"""name: d, m, dsub_hw, OPQ matrix storage (None: no OPQ), ivf (PEs, lanes, storage), lut (PEs,
lanes, centroids): tests/codegen/test_padded_faces.py's docstring says what each exercises."""


def padded_case(name: str) -> dict:
    """The pinned design of padded case `name` with its test queries and the reference model's keys."""
    d, m, dsub_hw, opq, ivf, lut = PADDED_CASES[name]
    data = random_index(nlist=16, n=2000, d=d, m=m, opq=opq is not None, empty=1)
    fmt = dataclasses.replace(random_format(d, m), dsub_hw=dsub_hw)
    if not (d % ivf[1] or (d // m) % lut[1]):
        raise FannsError(f"{name}: the lanes divide d and d/m, so nothing is padded")
    design = pinned_design(
        data, fmt, nprobe=3, k=10, ivf=ivf, lut=lut, pq=(3, 2), opq_lanes=ivf[1], opq_storage=opq or "bram"
    )
    return face_case(name, data, fmt, design)
