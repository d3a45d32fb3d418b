"""The generated HLS kernels (IVF-PQ and graph) compiled against Xilinx's own C-simulation headers
(`hls_stream.h` and what it includes, from the hls4ml wheel: tests/xilinx_headers.py) instead of
the portability header's stand-ins, through the project's own `make csim_vendor`: every test query
must return the reference model's keys (the host exits non-zero otherwise)."""

import re
import shlex
import subprocess

import numpy as np
import pytest

from fanns.codegen.graph.hls import generate_graph_hls
from fanns.codegen.ivfpq.hls import generate_hls
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.pinned import pinned_graph_design
from tests.codegen.test_hls_project import SMALL, small_case
from tests.tiers import slow_params
from tests.xilinx_headers import headers


@pytest.fixture(scope="module")
def vendor():
    return headers()


def csim_vendor(project, vendor):
    """`make csim_vendor` in the project; its output. Fails on a compile error or a mismatch."""
    proc = subprocess.run(
        ["make", "-s", "-C", str(project), "csim_vendor", f"HLS_INCLUDE={vendor}"], capture_output=True, text=True
    )
    assert proc.returncode == 0, f"make csim_vendor failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def included_headers(project, vendor):
    """The headers the vendor build of the kernel reads (g++ -M with the Makefile's own flags)."""
    flags = subprocess.run(
        ["make", "-s", "-C", str(project), "-p", "-n", "csim_vendor", f"HLS_INCLUDE={vendor}"],
        capture_output=True,
        text=True,
    ).stdout
    csim_flags = re.search(r"^CSIM_FLAGS := (.*)$", flags, re.M).group(1)
    proc = subprocess.run(
        ["g++", *shlex.split(csim_flags), "-DFANNS_VITIS", f"-I{vendor}", "-M", "src/kernel.cpp"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# every corner is bit-exact with the stand-in headers in the fast tier (test_hls_project); with
# Xilinx's, the fast tier keeps the selection networks and the widest codes, the slow tier the rest
@pytest.mark.parametrize("name", slow_params(sorted(SMALL), fast={"hsmpqg-ahpq", "wide-codes-m64"}))
def test_ivfpq_kernel_with_xilinx_headers_equals_reference(name, vendor, tmp_path):
    design, data, test = small_case(name)
    generate_hls(design, data, test, tmp_path / "p")
    out = csim_vendor(tmp_path / "p", vendor)
    assert re.search(r"queries differing from the reference model: 0$", out, re.M), out
    deps = included_headers(tmp_path / "p", vendor)
    assert f"{vendor}/hls_stream.h" in deps and "fanns_hls.h" in deps


@pytest.mark.parametrize("board", ["u250", "zcu104"])
def test_graph_kernel_with_xilinx_headers_equals_reference(board, vendor, tmp_path):
    base = np.random.default_rng(5).standard_normal((400, 16)).astype(np.float32)
    graph = build_graph(base, "hnsw", max_degree=16, fmt=graph_format_for(base))
    design = pinned_graph_design(
        graph, board=board, units=2, channels=2, l_max=32, k_max=5, bloom=(2, 2048), runtime=(32, 5, 4, 2)
    )
    queries = graph.fmt.quantize(base[:6] + 0.05)
    gt = np.argsort(((base[None, :, :] - (base[:6] + 0.05)[:, None, :]) ** 2).sum(-1), axis=1)[:, :5]
    generate_graph_hls(design, graph, queries, tmp_path / "p", groundtruth=gt)
    out = csim_vendor(tmp_path / "p", vendor)
    assert re.search(r"queries differing from the DST reference: 0$", out, re.M), out
    assert f"{vendor}/hls_stream.h" in included_headers(tmp_path / "p", vendor)
