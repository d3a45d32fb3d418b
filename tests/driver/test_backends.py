"""The same searches on every available backend of the host driver give identical ids and
distances: the model and the C simulation (HLS project), the model and the RTL simulation with
the driver in the loop (RTL project) — one design, one index, the same memory images — and all
equal the design's reference model bit for bit. The pynq backend needs a board: skipped, with
the reason, where pynq is not installed."""

import importlib.util

import numpy as np
import pytest

import fanns.driver
from fanns.driver.ivfpq.accelerator import keys_to_results
from fanns.numerics import split_keys

RTL_BATCH = 8
RTL_QUERIES = 10
"""Queries through the RTL simulation (runs of 8 and 2 queries), plus 4 at run-time nprobe/k."""
CYCLE_TOLERANCE = 0.05
"""Steady-state cycles per query of the 8-query run vs the performance model (as tests/codegen/test_rtl.py)."""


@pytest.fixture(scope="module")
def runs(projects, build_root):
    """Result keys of every backend: {(project kind, backend): keys of the queries it ran}."""
    q = projects.queries
    out = {}
    for kind, backend, opts, n in (
        ("hls", "model", {}, len(q)),
        ("rtl", "model", {}, len(q)),
        ("hls", "c-sim", {"build_dir": build_root / "hls_csim"}, len(q)),
    ):
        with fanns.driver.open(getattr(projects, kind), backend=backend, batch=64, **opts) as acc:
            out[(kind, backend)] = acc.search_keys(q[:n])
            out[(kind, backend, "stats")] = acc.stats()
    acc = fanns.driver.open(projects.rtl, backend="rtl-sim", batch=RTL_BATCH, build_dir=build_root / "rtl")
    with acc:
        first = acc.search_keys(q[:RTL_BATCH])
        out[("rtl", "rtl-sim", "first run")] = acc.stats()["cycles"]
        out[("rtl", "rtl-sim")] = np.concatenate([first, acc.search_keys(q[RTL_BATCH:RTL_QUERIES])])
        acc.set_params(nprobe=2, k=3)
        out[("rtl", "rtl-sim", "small")] = acc.search_keys(q[RTL_QUERIES : RTL_QUERIES + 4])
        out[("rtl", "rtl-sim", "stats")] = acc.stats()
    out[("rtl", "rtl-sim", "bench")] = acc.backend.report
    return out


@pytest.mark.slow
def test_every_backend_returns_the_reference_keys(projects, runs):
    expected = projects.reference.search_keys(projects.queries)
    for key in (("hls", "model"), ("rtl", "model"), ("hls", "c-sim")):
        assert runs[key].shape == (len(projects.queries), projects.design.k)
        assert np.array_equal(runs[key], expected), key
    assert np.array_equal(runs[("rtl", "rtl-sim")], expected[:RTL_QUERIES])
    small = projects.reference.search_keys(projects.queries[RTL_QUERIES : RTL_QUERIES + 4], nprobe=2, k=3)
    assert np.array_equal(runs[("rtl", "rtl-sim", "small")], small)
    # the rtl-sim session really went through the bench: the driver's allocations, writes and runs
    ops = runs[("rtl", "rtl-sim", "bench")]["ops"]
    assert ops["alloc"] == 4 + 4  # 4 images; the query, result, cell-list and seed buffers (step-wise mode)
    assert ops["write"] == 4 + 3  # the images, then the query buffer of each of 3 batches
    assert ops["wait"] == 4  # index load and three searches of one run each


@pytest.mark.slow
def test_ids_and_distances_are_identical_across_backends(projects, runs):
    results = {
        key: keys_to_results(runs[key][:RTL_QUERIES], projects.design.format)
        for key in (("hls", "model"), ("rtl", "model"), ("hls", "c-sim"), ("rtl", "rtl-sim"))
    }
    ids0, dist0 = results[("hls", "model")]
    assert ids0.dtype == np.int64 and dist0.dtype == np.float32
    for ids, dist in results.values():
        assert np.array_equal(ids, ids0) and np.array_equal(dist, dist0)


@pytest.mark.slow
def test_distance_conversion_and_padding(projects, runs):
    """Distances are dist * 2**lut_shift / scale**2 in float32; unfilled slots are id -1, +inf."""
    keys = runs[("hls", "model")]
    ids, dist = keys_to_results(keys, projects.design.format)
    fx, raw_ids = split_keys(keys)
    pad = raw_ids == 0xFFFFFFFF
    assert pad.any() and (~pad).any()  # K = 100 over 3 small cells: some slots stay empty
    assert (ids[pad] == -1).all() and np.isinf(dist[pad]).all()
    fmt = projects.design.format
    assert np.array_equal(
        dist[~pad], (fx[~pad].astype(np.float64) * 2**fmt.lut_shift / fmt.scale**2).astype(np.float32)
    )
    assert np.array_equal(ids[~pad], raw_ids[~pad].astype(np.int64))
    assert (dist[:, 1:] >= dist[:, :-1]).all()  # nearest first, empty slots last
    acc = fanns.driver.open(projects.hls)
    ids1, dist1 = acc.search(projects.queries[:5], k=4)
    assert ids1.shape == (5, 4) and np.array_equal(ids1, ids[:5, :4]) and np.array_equal(dist1, dist[:5, :4])


@pytest.mark.slow
def test_stats_count_runs_queries_and_cycles(runs):
    model = runs[("hls", "model", "stats")]
    assert model["runs"] == 1 + 7 and model["queries"] == 400 and model["calls"] == 1  # load + ceil(400 / 64)
    assert model["qps"] > 0 and model["cycles"] is None  # the model has no clock
    assert set(model["latency_ms"]) == {"p50", "p95", "p99"}
    rtl = runs[("rtl", "rtl-sim", "stats")]
    assert rtl["runs"] == 4 and rtl["queries"] == RTL_QUERIES + 4 and rtl["calls"] == 3
    cyc = rtl["cycles"]
    assert cyc["load_cycles"] > 0 and cyc["total"] > cyc["run_cycles"] >= cyc["last_cycles"] >= cyc["first_cycles"] > 0
    # the bench's own clock saw at least the cycles the core counted in its runs
    assert runs[("rtl", "rtl-sim", "bench")]["waited_cycles"] >= cyc["total"]


@pytest.mark.slow
def test_batches_of_any_size_give_the_same_results(projects, runs):
    q = projects.queries[:50]
    for batch in (1, 7, 50):
        with fanns.driver.open(projects.hls, batch=batch) as acc:
            assert np.array_equal(acc.search_keys(q), runs[("hls", "model")][:50])
            assert acc.stats()["runs"] == 1 + -(-50 // batch)


def test_model_on_the_rtl_project_honours_runtime_parameters(projects):
    with fanns.driver.open(projects.rtl) as acc:
        acc.set_params(nprobe=1, k=5)
        keys = acc.search_keys(projects.queries[:30])
        assert np.array_equal(keys, projects.reference.search_keys(projects.queries[:30], nprobe=1, k=5))
        assert acc.search_keys(projects.queries[:30], k=2).shape == (30, 2)  # search(k=) overrides once
        assert acc.search_keys(projects.queries[:1]).shape == (1, 5)


def test_angular_and_integer_queries_are_quantised_as_the_reference_does(projects):
    """Integer vectors (e.g. SIFT's uint8) are accepted; the host quantisation is the reference's.
    (Inside the number format's range, as integer data of an integer base would be: values the
    format clips are refused, tests/hostile/test_entry_checks.py.)"""
    q = np.clip(np.rint(projects.queries[:20]), -30, 30).astype(np.int8)
    with fanns.driver.open(projects.hls) as acc:
        assert np.array_equal(acc.search_keys(q), projects.reference.search_keys(q.astype(np.float32)))


@pytest.mark.skipif(
    importlib.util.find_spec("pynq") is None,
    reason="pynq is not installed (pip install fanns[pynq]) and the pynq backend needs a board",
)
def test_pynq_backend_on_a_board(projects):  # pragma: no cover - needs hardware
    import os

    bitstream = os.environ.get("FANNS_PYNQ_XCLBIN")
    if not bitstream:
        pytest.skip("set FANNS_PYNQ_XCLBIN to the xclbin built from the test project to run on a board")
    with fanns.driver.open(projects.hls, backend="pynq", bitstream=bitstream) as acc:
        assert np.array_equal(acc.search_keys(projects.queries), projects.reference.search_keys(projects.queries))


@pytest.mark.slow
def test_rtl_sim_cycles_agree_with_the_performance_model(projects, runs, build_root):
    """The core's cycle registers, read by the driver after its 8-query run: steady-state cycles
    per query against the model's prediction for exactly those queries."""
    from fanns.sim.ivfpq.rtl import RtlProjectSim, measured_interval

    cyc = runs[("rtl", "rtl-sim", "first run")]
    measured = measured_interval({"nq": RTL_BATCH, **cyc})
    predicted = (
        RtlProjectSim(projects.rtl, build_root / "rtl").predicted_run(0, RTL_BATCH).interval
    )  # the project's test queries = ours
    assert abs(measured - predicted) <= CYCLE_TOLERANCE * predicted, (measured, predicted)
