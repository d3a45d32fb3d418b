"""The step-wise mode of the generated HLS kernel (docs/stepwise.md) in g++ C simulation: each
step scans host-given cells from seed keys, bit-exact with the reference model at every step,
for several step sizes and orders, queries resumed after others ran, padded and empty cell lists."""

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import generate_hls
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim
from tests.codegen.test_hls_project import SMALL, small_case

STEP_QUERIES = 9


def schedules(cells: np.ndarray, nprobe: int, rng: np.random.Generator, own: bool, nlist: int) -> list[list]:
    """Per query, its steps: its probed cells (own) or random distinct cells, in a random order,
    cut into steps of 0..nprobe cells."""
    plans = []
    for row in cells:
        chosen = rng.permutation(row if own else rng.choice(nlist, size=rng.integers(1, 2 * nprobe), replace=False))
        steps, at = [], 0
        while at < len(chosen):
            size = int(rng.integers(0, nprobe + 1))
            steps.append(chosen[at : at + size])
            at += size
        plans.append(steps)
    return plans


def run_steps(
    sim: HlsCsim, dref: DesignReference, q_host: np.ndarray, plans: list[list], rng
) -> tuple[int, np.ndarray]:
    """Runs the plans in calls of a random subset of the queries with a step left (the others
    wait and resume later), checking every call's keys against the reference: (calls, final keys)."""
    nq, k, nprobe = q_host.shape[0], dref.design.k, dref.design.nprobe
    kept = [None] * nq
    calls = 0
    while any(plans):
        due = [i for i in range(nq) if plans[i]]
        now = sorted(rng.choice(due, size=int(rng.integers(1, len(due) + 1)), replace=False))
        steps = [plans[i].pop(0) for i in now]
        cells = np.full((len(now), int(rng.integers(max(len(s) for s in steps), nprobe + 1))), -1, dtype=np.int64)
        for row, step in zip(cells, steps):
            row[rng.choice(cells.shape[1], size=len(step), replace=False)] = step  # -1 anywhere
        sentinel = np.uint64((1 << dref.design.format.pq_key_bits) - 1)
        seeds = np.stack([np.full(k, sentinel, dtype=np.uint64) if kept[i] is None else kept[i] for i in now])
        first = all(kept[i] is None for i in now) and rng.random() < 0.5
        got = sim.search_keys_cells_fx(q_host[now], cells, None if first else seeds)
        expected = dref.search_keys_cells_fx(q_host[now], cells, seeds)
        assert np.array_equal(got, expected), (calls, now, cells.tolist())
        for i, row in zip(now, got):
            kept[i] = row
        calls += 1
    return calls, np.stack(kept)


def check_case(name: str, folder, build_dir, threads: bool, seeds=(0, 1, 2)) -> None:
    design, data, test = small_case(name)
    generate_hls(design, data, test, folder)
    dref = DesignReference(design, data)
    q_host = dref.ref.quantize_queries(test.queries[:STEP_QUERIES])
    probed = dref.probe(dref.ref.rotate(q_host), design.nprobe)
    with HlsCsim(folder, build_dir, threads=threads) as sim:
        assert np.array_equal(sim.search_keys_fx(q_host), dref.search_keys_fx(q_host))  # mode 0 unchanged
        for seed in seeds:
            rng = np.random.default_rng(seed)
            own = seed != 2
            calls, final = run_steps(sim, dref, q_host, schedules(probed, design.nprobe, rng, own, data.nlist), rng)
            assert calls >= 2
            if own:  # every probed cell scanned once: the normal search's result
                assert np.array_equal(final, dref.search_keys_fx(q_host))


def test_stepwise_csim_equals_reference(tmp_path, build_root):
    """OPQ on chip, K 7, nprobe 4: three schedules (two over the probed cells, one over random
    cells), sequential C simulation."""
    check_case("onchip-opq", tmp_path / "p", build_root / "hls_csim", threads=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMALL))
def test_stepwise_csim_of_corner_cases_equals_reference(name, tmp_path, build_root):
    """Every corner-case design (streamed centroids and BuildLUT centroids from memory, wide codes,
    512-bit ports, a cut-short AHPQ SelK), sequential and threaded C simulation."""
    for threads in (False, True):
        check_case(name, tmp_path / f"p{threads}", build_root / "hls_csim", threads=threads, seeds=(3, 4))
