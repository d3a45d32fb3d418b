"""The step-wise mode of the generated HLS kernel (docs/stepwise.md) in g++ C simulation: each
step scans host-given cells from seed keys, bit-exact with the reference model at every step,
for several step sizes and orders, queries resumed after others ran, padded and empty cell lists."""

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import generate_hls
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim
from fanns.sim.ivfpq.stepwise import run_schedules, schedules
from tests.codegen.test_hls_project import SMALL, small_case

STEP_QUERIES = 9


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
            plans = schedules(probed, design.nprobe, rng, own, data.nlist)
            check = run_schedules(
                sim.search_keys_cells_fx,
                dref.search_keys_cells_fx,
                q_host,
                plans,
                design,
                rng,
            )
            assert check.mismatched_queries == 0, check.first_mismatch
            assert check.calls >= 2
            if own:  # every probed cell scanned once: the normal search's result
                assert np.array_equal(check.keys, dref.search_keys_fx(q_host))


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
