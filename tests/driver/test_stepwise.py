"""The driver's step-wise search (docs/stepwise.md) on the HLS project: `search_steps` yields the
design reference's top-K over the cells scanned so far after every step (steps wider than the
kernel's nprobe slots become several runs), on the model and the C simulation backends, with
early stop, and on the RTL project's rtl-sim backend (the generated core in RTL simulation); bad
cell lists get clear errors."""

import numpy as np
import pytest

import fanns.driver
from fanns.driver.ivfpq.accelerator import keys_to_results
from fanns.errors import FannsError
from tests.driver.conftest import NPROBE

QUERIES = 20


def plan(projects, seed: int) -> list[np.ndarray]:
    """Each query's probed cells plus as many others, in a random order, cut into steps of 0 to
    NPROBE + 2 cells (wider than the kernel's slots), padded with -1."""
    ref, nlist = projects.reference, projects.data.nlist
    rng = np.random.default_rng(seed)
    q_fx = ref.ref.prepare(projects.queries[:QUERIES])
    probed = ref.probe(q_fx, NPROBE)
    rows = []
    for row in probed:
        extra = rng.choice(np.setdiff1d(np.arange(nlist), row), size=NPROBE, replace=False)
        rows.append(rng.permutation(np.concatenate([row, extra])))
    cuts = [0]
    while cuts[-1] < 2 * NPROBE:
        cuts.append(cuts[-1] + int(rng.integers(0, NPROBE + 3)))
    steps = []
    for a, b in zip(cuts, cuts[1:]):
        step = np.full((QUERIES, max(b - a, 1)), -1, dtype=np.int64)
        for i, row in enumerate(rows):
            part = row[a:b]
            step[i, rng.choice(step.shape[1], size=len(part), replace=False)] = part
        steps.append(step)
    return steps


def expected(projects, steps) -> list[np.ndarray]:
    return expected_of(projects, steps, QUERIES)


def expected_of(projects, steps, nq: int) -> list[np.ndarray]:
    ref = projects.reference
    q_host = ref.ref.quantize_queries(projects.queries[:nq])
    keys, out = None, []
    for cells in steps:
        keys = ref.search_keys_cells_fx(q_host, cells, keys)
        out.append(keys)
    return out


def test_model_backend_steps_equal_the_reference(projects):
    steps = plan(projects, 0)
    want = expected(projects, steps)
    with fanns.driver.open(projects.hls, backend="model", batch=8) as acc:
        got = list(acc.search_steps(projects.queries[:QUERIES], steps))
        assert len(got) == len(steps)
        for (ids, dist), keys in zip(got, want):
            want_ids, want_dist = keys_to_results(keys, projects.design.format)
            assert np.array_equal(ids, want_ids) and np.array_equal(dist, want_dist)
        # early stop: the generator runs a step only when asked for its result
        runs = acc.stats()["runs"]
        partial = acc.search_steps(projects.queries[:QUERIES], steps, k=5)
        ids, _ = next(partial)
        partial.close()
        assert ids.shape == (QUERIES, 5) and np.array_equal(
            ids, keys_to_results(want[0][:, :5], projects.design.format)[0]
        )
        assert acc.stats()["runs"] - runs == -(-QUERIES // 8) * max(1, -(-steps[0].shape[1] // NPROBE))


def test_search_step_keys_resumes_a_query_after_others_ran(projects):
    """Query 0 scans its probed cells in two calls with other queries' steps in between: the end
    result is the normal search's."""
    q = projects.queries[:4]
    probed = projects.reference.probe(projects.reference.ref.prepare(q), NPROBE)
    with fanns.driver.open(projects.hls, backend="model") as acc:
        first = acc.search_step_keys(q[:1], probed[:1, :1])
        acc.search_step_keys(q[1:], probed[1:])
        last = acc.search_step_keys(q[:1], [list(probed[0, 1:])], first)
        assert np.array_equal(last, acc.search_keys(q[:1]))


def test_bad_steps_are_refused(projects):
    q = projects.queries[:2]
    with fanns.driver.open(projects.hls, backend="model") as acc:
        for cells, what in (
            ([[0, 0], [1]], "twice"),
            ([[0], [12]], "cells 0..11"),
            (np.zeros((3, 1), dtype=np.int64), "expected integers"),
            (np.zeros((2, 1)), "expected integers"),
        ):
            with pytest.raises(FannsError, match=what):
                acc.search_step_keys(q, cells)
        with pytest.raises(FannsError, match="twice"):  # across the steps of one search
            list(acc.search_steps(q, [[[0], [1]], [[0], [2]]]))
        with pytest.raises(FannsError, match="ascending"):
            acc.search_step_keys(q, [[0], [1]], np.arange(2 * acc.K, dtype=np.uint64)[::-1].reshape(2, -1).copy())
    with fanns.driver.open(projects.rtl, backend="model") as acc:  # the RTL core has the mode
        assert acc.iface.stepwise
        assert acc.iface.address_register("cells") == "cells_addr"


@pytest.mark.slow
def test_csim_backend_steps_equal_the_reference(projects, build_root):
    steps = plan(projects, 1)
    want = expected(projects, steps)
    with fanns.driver.open(projects.hls, backend="c-sim", batch=8, build_dir=build_root / "hls_csim") as acc:
        for (ids, dist), keys in zip(acc.search_steps(projects.queries[:QUERIES], steps), want, strict=True):
            want_ids, want_dist = keys_to_results(keys, projects.design.format)
            assert np.array_equal(ids, want_ids) and np.array_equal(dist, want_dist)


@pytest.mark.slow
def test_rtl_sim_backend_steps_equal_the_reference(projects, build_root):
    """The driver programs the RTL core's step-wise registers and buffers from its register map:
    the generated Verilog in RTL simulation yields the reference's top-K after every step."""
    steps = [step[:6] for step in plan(projects, 2)]
    want = expected_of(projects, steps, 6)
    with fanns.driver.open(projects.rtl, backend="rtl-sim", batch=4, build_dir=build_root / "rtl") as acc:
        for (ids, dist), keys in zip(acc.search_steps(projects.queries[:6], steps), want, strict=True):
            want_ids, want_dist = keys_to_results(keys, projects.design.format)
            assert np.array_equal(ids, want_ids) and np.array_equal(dist, want_dist)
