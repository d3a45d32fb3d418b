"""Generated HLS kernels in C simulation on real data: for several designs (OPQ on and off,
on-chip / streamed / fetched centroids, HBM and DDR boards, irregular PE counts, HPQ, HSMPQG and
AHPQ selection), every query's top-K ids and distances equal the reference model bit for bit,
and the recall equals the explorer's hardware-faithful recall."""

import subprocess

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.index.recall import recall_at
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq import IvfPqReference, host_queries
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim, search_keys_within
from fanns.tools.verilator import DesignStuck
from tests.codegen.conftest import GOAL
from tests.tiers import slow_params

# name: (dataset, opq, board, nprobe (None: the explorer's for GOAL), K, ivf (PEs, lanes, storage),
#        lut (PEs, lanes, centroids), pq (PEs, channels), selection architectures)
DESIGNS = {
    "sift-opq-onchip": ("sift", True, "u55c", None, 10, (3, 16, "bram"), (2, 16, "bram"), (5, 2), {}),
    "sift-stream-11ivf": ("sift", False, "u55c", None, 10, (11, 16, "stream"), (1, 32, "memory"), (11, 4), {}),
    "sift-ddr-k25": ("sift", False, "u250", 7, 25, (4, 32, "uram"), (3, 8, "memory"), (7, 2), {}),
    "sift-opq-13pq": ("sift", True, "u55c", 9, 10, (6, 8, "stream"), (4, 16, "uram"), (13, 5), {}),
    "sift-hsmpqg-ahpq": (
        "sift",
        False,
        "u55c",
        6,
        25,
        (8, 16, "bram"),
        (2, 16, "bram"),
        (13, 4),
        {"sel_cells": "hsmpqg", "sel_k": "ahpq"},
    ),
    "deep-d96": ("deep", False, "u55c", 8, 10, (5, 32, "stream"), (3, 8, "bram"), (9, 3), {}),
}


@pytest.fixture(scope="module", params=sorted(DESIGNS))
def case(request, sift_exploration, deep_index, tmp_path_factory, build_root):
    dataset, opq, board, nprobe, k, ivf, lut, pq, selection = DESIGNS[request.param]
    if dataset == "sift":
        ex = sift_exploration[opq]
        data, fmt, queries, gt = ex.data, ex.fmt, ex.queries, ex.groundtruth
        hw_recall = ex.record["goals"][GOAL]["all_queries_hw_recall"] if nprobe is None else None
        nprobe = nprobe or ex.record["goals"][GOAL]["nprobe"]
    else:
        data, fmt, queries, gt = deep_index
        hw_recall = None
    design = pinned_design(data, fmt, board=board, nprobe=nprobe, k=k, ivf=ivf, lut=lut, pq=pq, **selection)
    folder = tmp_path_factory.mktemp(request.param) / "project"
    generate_hls(design, data, TestQueries(queries, gt), folder)
    sim = HlsCsim(folder, build_root / "hls_csim")
    yield {
        "name": request.param,
        "design": design,
        "data": data,
        "fmt": fmt,
        "queries": queries,
        "gt": gt,
        "hw_recall": hw_recall,
        "folder": folder,
        "sim": sim,
    }
    sim.close()


def test_csim_equals_reference_bit_for_bit(case):
    """Against the stream-level model of the design (`DesignReference`), which is the whole-accelerator
    reference itself for exact selection (checked here too) and adds AHPQ's level-1 truncation."""
    design = case["design"]
    keys = case["sim"].search_keys(case["queries"])
    ref = IvfPqReference(case["data"], case["fmt"])
    expected = DesignReference(design, ref).search_keys(case["queries"])
    assert keys.shape == (case["queries"].shape[0], design.k)
    mismatching = int((keys != expected).any(1).sum())
    assert mismatching == 0, f"{case['name']}: {mismatching} queries differ from the model"
    if design.stages.sel_k.arch != "ahpq":
        assert np.array_equal(expected, ref.search_keys(case["queries"], design.nprobe, design.k))
    assert (keys[:, 0] & np.uint64(0xFFFFFFFF) < case["data"].ntotal).all()  # real neighbours, not padding


AT_GOAL = [name for name, spec in sorted(DESIGNS.items()) if spec[3] is None]


@pytest.mark.parametrize("case", AT_GOAL, indirect=True)
def test_recall_equals_explorers_hardware_recall(case):
    ids, _ = case["sim"].search(case["queries"])
    assert round(recall_at(ids, case["gt"], 10), 6) == case["hw_recall"]


def test_batches_of_any_size_give_the_same_keys(case):
    sim, q = case["sim"], case["queries"][:37]
    whole = sim.search_keys(q)
    parts = np.concatenate([sim.search_keys(q[i : i + 5]) for i in range(0, 37, 5)])
    assert np.array_equal(whole, parts)
    assert sim.search_keys(q[:0]).shape == (0, case["design"].k)


@pytest.mark.parametrize("case", ["sift-opq-onchip"], indirect=True)
def test_makefile_csim_target_checks_the_test_set(case):
    """`make csim` builds with plain g++ -Wall -Werror and exits 0 only when no query differs from
    the reference model's keys in data/."""
    folder = case["folder"]
    run = subprocess.run(["make", "-C", str(folder), "csim"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "queries differing from the reference model: 0" in run.stdout
    assert f"R@10 = {case['hw_recall']:.4f}" in run.stdout
    assert "QPS of the C simulation on this machine" in run.stdout  # its speed is not the accelerator's
    # a corrupted reference file must make the same program fail
    keys = folder / "data" / "reference_keys.bin"
    raw = bytearray(keys.read_bytes())
    raw[3] ^= 0x10
    keys.write_bytes(bytes(raw))
    run = subprocess.run([str(folder / "build" / "csim" / "host_csim"), str(folder)], capture_output=True, text=True)
    assert run.returncode == 1 and "queries differing from the reference model: 1" in run.stdout


# threads are checked fast on the 11-IVFDist design and test_hls_project's five corners; the slow tier
# adds the 13 PQ PEs' (17 s of threaded C simulation)
@pytest.mark.parametrize(
    "case", slow_params(["sift-opq-13pq", "sift-stream-11ivf"], fast={"sift-stream-11ivf"}), indirect=True
)
def test_dataflow_threads_with_declared_fifo_depths(case, build_root):
    """Every process a thread, every FIFO of the depth the kernel declares: the region neither
    deadlocks nor leaves data behind, and the results are the same."""
    q = case["queries"][:40]
    with HlsCsim(case["folder"], build_root / "hls_csim", threads=True) as sim:
        assert np.array_equal(sim.search_keys(q), case["sim"].search_keys(q))


@pytest.mark.parametrize("case", ["sift-stream-11ivf"], indirect=True)
def test_wall_time_limit_stops_the_c_simulation(case, build_root):
    """`fanns sim --backend csim --timeout T`: the search runs in a child process; within the limit
    it gives the in-process keys, past it the child is stopped and the error says so."""
    fmt, metric = case["fmt"], case["sim"].metric
    q_fx = host_queries(fmt, metric, case["queries"][:6])
    keys = search_keys_within(case["folder"], build_root / "hls_csim", q_fx, 600.0)
    assert np.array_equal(keys, case["sim"].search_keys_fx(q_fx))
    with pytest.raises(DesignStuck, match="no result after 1e-06 s of wall time"):
        search_keys_within(case["folder"], build_root / "hls_csim", np.repeat(q_fx, 200, axis=0), 1e-6)
