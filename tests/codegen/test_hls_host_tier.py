"""The HLS face of the host-memory tier (docs/host_tier.md, "The faces") in g++ C simulation
through the driver's c-sim backend: the lists in host memory (HOST[0]), a cache region per PQ
channel, the prefetch command (mode 2) running the planner's descriptors, the hottest lists pinned
(placed by the driver after the index load). Keys bit-exact with the design's reference with a
cold cache (only the pinned lists cached), after a prefetch, and after prefetches that move and
evict; a corrupted cache beat of a pinned and of a prefetched list changes the keys (the cache is
really read)."""

import subprocess

import numpy as np
import pytest

import fanns.driver
from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.driver.ivfpq.accelerator import keys_to_results
from fanns.driver.ivfpq.project import Project
from fanns.driver.project import Bank
from fanns.images import ivfpq as ivfpq_images
from fanns.images.ivfpq import cache_list_beats
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.prefetch_plan import EVICT, MOVE
from fanns.model.ivfpq.skew import place_lists
from fanns.paths import shared_dir
from fanns.reference.ivfpq_streams import DesignReference
from fanns.tools.csim import compile_program

D, M, NPROBE, K = 32, 8, 4, 7
CACHE = 4096


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    data = random_index(nlist=12, n=300, d=D, m=M, empty=1, seed=3)
    shape = dict(nprobe=NPROBE, k=K, ivf=(3, 8, "bram"), pq=(5, 2))
    base = pinned_design(data, random_format(D, M), **shape, host_cache_bytes=CACHE)
    rng = np.random.default_rng(0)
    queries = rng.standard_normal((24, D)).astype(np.float32)
    design = pinned_design(data, base.format, **shape, host_cache_bytes=CACHE, host_pinned=hottest(base, data, queries))
    folder = tmp_path_factory.mktemp("host-tier") / "p"
    generate_hls(design, data, TestQueries(queries, np.zeros((24, K), dtype=np.int64)), folder)
    return folder, design, data, queries


def hottest(design, data, queries) -> tuple[int, ...]:
    """The lists the queries probe most that fit a quarter of the cache region (`skew.place_lists`)."""
    ref = DesignReference(design, data)
    cells = ref.probe(ref.ref.rotate(ref.ref.quantize_queries(queries)), NPROBE)
    beats = cache_list_beats(ivfpq_images.pack(design, data))
    room = design.stages.pq_dist.host_tier.cache_beats(2, design.stages.pq_dist.port_bits) // 4
    acc = np.where(beats > 0, np.bincount(cells.ravel(), minlength=data.nlist), 0)  # an empty list is never cached
    return tuple(int(c) for c in np.nonzero(place_lists(acc, beats, room))[0])


def test_the_project_maps_the_lists_to_host_memory(project):
    folder, design, *_ = project
    cfg = (folder / "connectivity.cfg").read_text()
    assert "fanns_ivfpq_1.pq_codes_0:HOST[0]" in cfg and "fanns_ivfpq_1.pq_codes_1:HOST[0]" in cfg
    banks = Project.open(folder).connectivity
    assert banks["pq_codes_1"] == Bank("host", 0)
    assert banks["pq_cache_1"] == Bank(
        design.memory[0].memory, [c for c in design.memory if c.use == "pq_codes"][1].channel
    )
    kernel = (folder / "src" / "kernel.cpp").read_text()
    assert "bundle=host_pq_codes_0" in kernel and "run_prefetch(cells" in kernel
    assert "xrt::bo::flags::host_only" in (folder / "src" / "host.cpp").read_text()


def test_hosts_compile_and_search(project, build_root):
    """host_csim (g++ -Werror) runs the test set from host memory and its cache (the plan's pinned
    lists and prefetches: tests/codegen/test_host_tier_programs.py) with 0 mismatches; the XRT host
    allocates the host-memory images host-only and passes g++'s checks against the XRT stand-in."""
    folder = project[0]
    exe = compile_program(
        [folder / "src" / "host_csim.cpp", folder / "src" / "kernel.cpp"],
        build_root / "host_csim",
        include_dirs=[folder / "src"],
    )
    run = subprocess.run([str(exe), str(folder), "5"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "reference model: 0" in run.stdout
    xrt = shared_dir("templates").parent / "tests" / "codegen" / "xrt_api"
    flags = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{xrt}", f"-I{folder / 'src'}"]
    check = subprocess.run([*flags, str(folder / "src" / "host.cpp")], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_the_model_backend_takes_the_designs_cache(project):
    folder, design, data, queries = project
    want = keys_to_results(DesignReference(design, data).search_keys(queries), design.format)
    with fanns.driver.open(folder, backend="model") as acc:
        assert acc.prefetch(queries[:2], budget_bytes=3000) > 0
        ids, dist = acc.search(queries)
        assert np.array_equal(ids, want[0]) and np.array_equal(dist, want[1])
        tier = acc.stats()["host_tier"]
        assert tier["cache_bytes"] == design.stages.pq_dist.host_tier.cache_bytes and tier["hbm_bytes"] > 0
        assert tier["pinned_lists"] == len(design.stages.pq_dist.host_tier.pinned) > 0 and tier["pinned_cells"] > 0


def test_csim_keys_with_cold_warm_and_evicting_caches(project, build_root):
    check_tier(project, build_root, threads=False)


@pytest.mark.slow
def test_threaded_csim_keys_with_cold_warm_and_evicting_caches(project, build_root):
    """Every dataflow process a thread, every FIFO of its declared depth (the location table's
    look-up among them): no deadlock, no data left behind, the same keys."""
    check_tier(project, build_root, threads=True)


def check_tier(project, build_root, threads: bool) -> None:
    folder, design, data, queries = project
    want = keys_to_results(DesignReference(design, data).search_keys(queries), design.format)
    with fanns.driver.open(folder, backend="c-sim", build_dir=build_root / "hls_csim", threads=threads) as acc:

        def check():
            ids, dist = acc.search(queries)
            assert np.array_equal(ids, want[0]) and np.array_equal(dist, want[1])

        check()  # cold: the pinned lists from the cache (placed at load), every other list from host memory
        cold = acc.stats()["host_tier"]
        plan = acc.mirror.plan
        pinned = design.stages.pq_dist.host_tier.pinned
        assert set(plan.table) == set(plan.pinned) == set(pinned) and cold["pinned_bytes"] > 0
        assert cold["host_bytes"] > 0 and cold["hbm_bytes"] > 0
        assert cold["cell_hit_rate"] == cold["pinned_hit_rate"] == cold["pinned_cells"] / cold["cells"] > 0
        ring = plan.ring.capacity * plan.bytes_per_beat  # the cache's bytes besides the pinned region
        sent = acc.prefetch(queries[:2], budget_bytes=ring)
        assert sent > 0 and plan.table
        check()
        warm = acc.stats()["host_tier"]
        assert warm["hbm_bytes"] > 0 and warm["cached_cells"] > 0
        ops = set()
        rng = np.random.default_rng(1)
        for step in range(6):  # later drafts: cached lists move, old ones are evicted
            acc.prefetch(queries[rng.choice(len(queries), 2)], budget_bytes=ring * (7 + step) // 10)
            ops |= {int(op) for op in plan.last[:, 1]}
            check()
        assert {EVICT, MOVE} <= ops and set(pinned) <= set(plan.table)  # the pinned lists stay
        # a pinned list's and a prefetched list's cache beats corrupted in device memory: the keys change
        probes = DesignReference(design, data)
        cells = probes.probe(probes.ref.rotate(probes.ref.quantize_queries(queries)), NPROBE)
        ring = [c for c in plan.ring.table if (cells == c).any()]
        for cell in (pinned[0], ring[0]):
            at = plan.table[cell]
            hit = [i for i, row in enumerate(cells) if cell in row]
            assert hit and data.list_sizes[cell] > 0
            cache = acc.backend.at("pq_cache_0")
            pb = design.stages.pq_dist.port_bits // 8
            saved = cache[at * pb : (at + plan.list_beats[cell]) * pb].copy()
            cache[at * pb : (at + plan.list_beats[cell]) * pb] ^= 0x5A
            ids, dist = acc.search(queries[hit])
            assert not (np.array_equal(ids, want[0][hit]) and np.array_equal(dist, want[1][hit]))
            cache[at * pb : (at + plan.list_beats[cell]) * pb] = saved
            check()
