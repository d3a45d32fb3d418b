"""The generated host programs of a host-memory design replay the driver's plan (docs/host_tier.md):
`data/prefetch_plan.bin` holds the pinned lists' descriptors (sent after the index load) and one
prefetch per chunk of test queries (sent before the chunk's searches), made by the driver's planner.

Checked: the file's descriptors and expected hit rates are what the driver's own mirror
(`HostTierMirror`, the c-sim / rtl-sim / pynq backends' planner) gives for the same drafts, chunks
and budget; the C-simulation host (g++ -Werror, run) returns the reference keys with the prefetches
and with `--cold`, and leaves every cache region byte for byte as the planner's array model of the
descriptors it replayed (`apply_regions`: the pinned lists only when cold); a plan whose descriptor
leaves a list's cache slot unwritten (a MOVE onto itself from the empty region) changes the keys of
the queries that read it (the table is used) with the prefetches, and a chunk's only when it is
replayed (not with `--cold`); both XRT hosts (HLS and RTL faces) pass g++'s checks against the XRT
stand-in headers, and the RTL host's prefetch call passes one value per kernel argument (mode 2,
the cells buffer at `cells_addr`).
"""

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.prefetch_files import PLAN_FILE, budget
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.driver.ivfpq.host_tier import HostTierMirror
from fanns.driver.ivfpq.project import Project
from fanns.images.ivfpq import TABLE_WORDS
from fanns.model.ivfpq.prefetch_plan import FROM_HOST, MOVE, apply_regions
from fanns.reference.ivfpq import host_queries
from fanns.tools.csim import compile_program
from tests.codegen.kernel_checks import kernel_xml
from tests.codegen.test_hls_host_tier import project  # noqa: F401  (a host-memory HLS project with pinned lists)

XRT = Path(__file__).parent / "xrt_api"


def read_plan(folder: Path) -> tuple[int, np.ndarray, list[np.ndarray]]:
    """(chunk, pinned descriptors, each chunk's) of the project's plan file, by its documented layout."""
    w = np.fromfile(folder / PLAN_FILE, dtype="<u4")
    chunk, chunks, pinned = int(w[0]), int(w[1]), int(w[2])
    counts = w[3 : 3 + chunks].astype(int)
    at = 3 + chunks
    out = [w[at : at + 4 * pinned].reshape(-1, 4)]
    at += 4 * pinned
    for n in counts:
        out.append(w[at : at + 4 * n].reshape(-1, 4))
        at += 4 * n
    assert at == w.size
    return chunk, out[0], out[1:]


@pytest.fixture(scope="module")
def host_csim(project, build_root):  # noqa: F811
    folder = project[0]
    return compile_program(
        [folder / "src" / "host_csim.cpp", folder / "src" / "kernel.cpp"],
        build_root / "host_csim_tier",
        include_dirs=[folder / "src"],
    )


def test_the_plan_is_the_drivers(project):  # noqa: F811
    folder, design, data, queries = project
    chunk, pinned, chunks = read_plan(folder)
    summary = json.loads((folder / "fanns_project.json").read_text())["test"]["prefetch_plan"]
    assert (summary["chunk"], summary["chunks"]) == (chunk, len(chunks)) and len(chunks) == -(-len(queries) // chunk)
    mirror = HostTierMirror(Project.open(folder))
    assert summary["budget_bytes"] == mirror.plan.ring.capacity * mirror.plan.bytes_per_beat  # no DSE budget: the ring
    q_host = host_queries(design.format, data.metric, queries)
    nlist, nprobe = design.index.nlist, design.nprobe
    assert np.array_equal(mirror.loaded(), pinned) and len(pinned) == len(design.stages.pq_dist.host_tier.pinned)
    cold = mirror.plan.cached(mirror.cells(q_host, nprobe)).mean()
    for c, desc in enumerate(chunks):
        part = q_host[c * chunk : (c + 1) * chunk]
        assert np.array_equal(mirror.prefetch(part, summary["budget_bytes"], nlist), desc)
        mirror.searched(mirror.cells(part, nprobe))
    ops = {int(op) for d in chunks for op in d[:, 1]}
    assert FROM_HOST in ops and len(ops) > 1  # the later chunks move or evict what earlier ones placed
    assert summary["hit_rate"] == pytest.approx(mirror.stats()["cell_hit_rate"], abs=1e-12)
    assert summary["cold_hit_rate"] == pytest.approx(cold, abs=1e-12) and summary["hit_rate"] > cold > 0


def run_host(exe, folder: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), str(folder), *map(str, args)], capture_output=True, text=True)


def expected_regions(folder: Path, design, descriptors: np.ndarray) -> list[np.ndarray]:
    """Every channel's cache region after `descriptors`, on the planner's array model."""
    nlist, pb = design.index.nlist, design.stages.pq_dist.port_bits // 8
    channels = range(design.stages.pq_dist.channels)
    host = [np.fromfile(folder / "images" / f"pq_codes_{c}.bin", dtype=np.uint8) for c in channels]
    caches = [np.fromfile(folder / "images" / f"pq_cache_{c}.bin", dtype=np.uint8) for c in channels]
    tables = [h[: nlist * TABLE_WORDS * 4].view("<u4").reshape(nlist, TABLE_WORDS) for h in host]
    apply_regions(descriptors, host, caches, tables, pb)
    return caches


@pytest.mark.parametrize("mode", ["prefetch", "cold"])
def test_csim_host_replays_the_plan(project, host_csim, tmp_path, mode):  # noqa: F811
    """Batches of 3 (not a divisor of the chunk): a batch never crosses a chunk."""
    folder, design, *_ = project
    _chunk, pinned, chunks = read_plan(folder)
    flags = ["--cold"] if mode == "cold" else []
    run = run_host(host_csim, folder, 3, *flags, "--dump-cache", tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "reference model: 0" in run.stdout
    summary = json.loads((folder / "fanns_project.json").read_text())["test"]["prefetch_plan"]
    rate = summary["cold_hit_rate"] if mode == "cold" else summary["hit_rate"]
    assert f"the plan expects {100 * rate:.1f} % of the probed cells cached" in run.stdout
    assert ("cold (--cold)" in run.stdout) == (mode == "cold")
    sent = np.concatenate([pinned] + ([] if mode == "cold" else chunks))
    for c, want in enumerate(expected_regions(folder, design, sent)):
        got = np.fromfile(tmp_path / f"pq_cache_{c}.bin", dtype=np.uint8)
        assert np.array_equal(got, want), f"pq_cache_{c}"
    assert np.any(want)


def test_an_unwritten_cache_slot_changes_the_keys(project, host_csim, tmp_path):  # noqa: F811
    """The hosts really send the descriptors and the kernel reads the slots they name: a pinned
    list's, or the first chunk's first copy, made a MOVE onto itself from the empty region, leaves
    the table pointing at zeros; the queries probing that list get other keys."""
    folder = project[0]
    for target in ("pinned", "chunk"):
        copy = tmp_path / target
        shutil.copytree(folder, copy)
        chunk, pinned, chunks = read_plan(copy)
        words = np.fromfile(copy / PLAN_FILE, dtype="<u4")
        head = 3 + len(chunks) + (0 if target == "pinned" else 4 * len(pinned))
        assert words[head + 1] == FROM_HOST
        words[head + 1], words[head + 3] = MOVE, words[head + 2]
        words.tofile(copy / PLAN_FILE)
        warm, cold = run_host(host_csim, copy, 4), run_host(host_csim, copy, 4, "--cold")
        assert warm.returncode == 1 and "reference model: 0" not in warm.stdout, target
        assert (cold.returncode == 1) == (target == "pinned"), cold.stdout


def test_xrt_hosts_replay_the_plan_and_pass_gcc_checks(project, tmp_path):  # noqa: F811
    folder, design, data, queries = project
    rtl = tmp_path / "rtl"
    generate_rtl(design, data, TestQueries(queries, np.zeros((len(queries), design.k), np.int64)), rtl)
    assert (rtl / PLAN_FILE).read_bytes() == (folder / PLAN_FILE).read_bytes()  # one plan for both faces
    for src in (folder / "src", rtl / "src"):
        cmd = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{XRT}", f"-I{src}"]
        check = subprocess.run([*cmd, str(src / "host.cpp")], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        host = (src / "host.cpp").read_text()
        assert 'take_flag(argc, argv, "--cold")' in host and "prefetch(plan.pinned);" in host
        assert "prefetch(plan.chunks[first / plan.chunk]);" in host
    names = [a.get("name") for a in kernel_xml(rtl).find("args").findall("arg")]
    host = (rtl / "src" / "host.cpp").read_text()
    copy = re.search(r"xrt::run copy = krnl\(([^;]*)\);", host).group(1).split(", ")
    assert len(copy) == len(names) and copy[names.index("mode")] == "2u" and copy[names.index("nq")] == "m"
    assert copy[names.index("cells_addr")] == "cells_bo" and f"krnl.group_id({names.index('cells_addr')})" in host
    hls = (folder / "src" / "host.cpp").read_text()
    n_images = len(json.loads((folder / "images" / "manifest.json").read_text())["images"])
    hls_copy = re.search(r"xrt::run copy = krnl\(([^;]*)\);", hls).group(1).split(", ")
    assert hls_copy[2 + n_images :] == ["cells_bo", "query_bo", "m", "0u", "2u"]


def test_the_budget_is_the_dses_when_the_design_records_one(project):  # noqa: F811
    design = project[1]
    assert budget(design, 3136) == (3136, "the ring's bytes (the design records no DSE budget)")
    chosen = dataclasses.replace(design, prediction={"host_tier": {"budget_bytes": 1000}})
    assert budget(chosen, 3136)[0] == 1000
