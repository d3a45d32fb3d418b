"""AHPQ: the multinomial bound and the length it picks, the measured exact fraction on random
data, and bit-exactness of RTL and HLS against the truncating reference model."""

import itertools

import numpy as np
import pytest
from scipy.stats import binom
from test_hpq import csim_matches_reference

from fanns.errors import FannsError
from fanns.numerics import make_keys, smallest_keys
from fanns.pe.ahpq import Ahpq, ahpq_queue_length, exact_probability
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params


@pytest.mark.parametrize("k,q", [(6, 3), (5, 4), (7, 2), (4, 5), (8, 1)])
def test_probability_matches_enumeration(k, q):
    for length in range(k + 1):
        fits = sum(max(a.count(i) for i in range(q)) <= length for a in itertools.product(range(q), repeat=k))
        assert exact_probability(k, q, length) == pytest.approx(fits / q**k, abs=1e-12)


@pytest.mark.parametrize("k", [1, 10, 37, 100])
@pytest.mark.parametrize("q", [1, 2, 8, 50])
@pytest.mark.parametrize("target", [0.5, 0.99, 1.0])
def test_queue_length_is_smallest_meeting_target(k, q, target):
    length = ahpq_queue_length(k, q, target)
    assert exact_probability(k, q, length) >= target
    assert length == -(-k // q) or exact_probability(k, q, length - 1) < target


def test_joint_bound_over_all_queues_is_stricter_than_one_queue():
    # K = 100 over 16 queues (ChamVS Fig. 4.4): one queue alone reaches 0.99 at 12; all 16 need 15.
    assert binom.cdf(12, 100, 1 / 16) >= 0.99 > binom.cdf(11, 100, 1 / 16)
    assert ahpq_queue_length(100, 16, 0.99) == 15


def test_lengths_shrink_with_more_queues():
    lengths = [ahpq_queue_length(100, q, 0.99) for q in (2, 4, 8, 16, 32, 64)]
    assert lengths == sorted(lengths, reverse=True) and lengths[-1] * 10 <= 100


def test_bad_target_raises_fanns_error():
    with pytest.raises(FannsError):
        Ahpq(z=2, s=10, target=1.5)
    with pytest.raises(FannsError):
        ahpq_queue_length(10, 4, 0.0)


@pytest.mark.parametrize("z,s,target", [(8, 10, 0.99), (4, 10, 0.99), (2, 10, 0.99), (16, 10, 0.9), (8, 100, 0.99)])
def test_measured_exact_fraction_on_random_data(z, s, target):
    """Random distances with unique ids, equal stream lengths: the fraction of queries whose AHPQ
    output equals the exact s smallest meets the target and is not below the multinomial
    prediction (minus 4 sigma); the model is conservative, see fanns.pe.ahpq."""
    pe = Ahpq(z=z, s=s, key_bits=64, target=target)
    assert pe.s1 < s
    rng = np.random.default_rng(100 + z)
    queries, n = 5000, max(2 * s, 40)
    exact = 0
    for _ in range(queries):
        keys = make_keys(rng.integers(0, 1 << 20, z * n), rng.permutation(z * n))
        exact += np.array_equal(pe.select(keys.reshape(z, n)), smallest_keys(keys, s))
    measured, p = exact / queries, pe.exact_fraction()
    assert measured >= target, f"measured {measured} < target {target} (predicted {p})"
    assert measured >= p - 4 * np.sqrt(p * (1 - p) / queries), f"measured {measured}, predicted {p}"


RTL_CONFIGS = [Ahpq(z=4, s=6, key_bits=52, target=0.99), Ahpq(z=3, s=8, key_bits=64, target=0.99)]


# the slow tier adds 52-bit keys over z=4 queues
@pytest.fixture(
    scope="module", params=slow_params(RTL_CONFIGS, fast={"z3s8s1_5"}, ids=lambda pe: f"z{pe.z}s{pe.s}s1_{pe.s1}")
)
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(pe.component(), "ahpq", build_root / f"ahpq_{pe.z}_{pe.s}_{pe.s1}_{pe.key_bits}")
    return pe, sim


def tb_params(pe, **kw):
    return {"pe_name": pe.name, "pe": pe.params(), "bubble": 0.0, "backpressure": 0.0, "seed": 1} | kw


def test_rtl_matches_truncating_reference(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench, tb_params(pe, queries=25, max_items=3 * pe.s + 40, bubble=0.3, backpressure=0.4, seed=6, skew=0.5)
    )
    assert out["mismatches"] == 0
    assert out["inputs"] >= 1000
    assert out["inexact"] > 0, "no query exercised the truncation"


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    sizes = [1, 4, 2 * pe.s + 1]
    out = sim.run(pe.testbench, tb_params(pe, queries=len(sizes), sizes=sizes, max_items=0))
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"


@pytest.mark.parametrize(
    "pe", [Ahpq(z=8, s=10, key_bits=64, target=0.99), Ahpq(z=2, s=10, key_bits=52, target=0.9)], ids=["z8s10", "z2s10"]
)
def test_hls_csim_matches_truncating_reference(pe, build_root):
    assert pe.s1 < pe.s
    csim_matches_reference(pe, build_root, skew=True)
