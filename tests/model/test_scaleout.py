"""Scale-out model (issue 10): the maximum over shards against random sampling, the LogGP tree
against hand-computed values from the seed's parameters, split-by-vector shards, the CPU baseline
measured with faiss."""

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.errors import FannsError
from fanns.index.ivfpq import train_index
from fanns.model import cpu_baseline
from fanns.model.ivfpq import dse, scaleout
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.workload import synthetic_workload


@pytest.fixture(scope="module")
def point():
    w = synthetic_workload(10**7, 128, 16, 1024, 12, 10, False, queries=300, imbalance=4.0, seed=3)
    return dse.run([w], load_board("u55c"), "synthetic", 200.0, top=1).best


def test_max_quantile_equals_sampling_the_maximum():
    """FANNS samples N latencies from the history and keeps the highest; the exact order statistic
    agrees with 40,000 such draws within the sampling error."""
    rng = np.random.default_rng(0)
    samples = rng.lognormal(4.0, 0.3, 2000)
    for n in (1, 4, 64):
        draws = rng.choice(samples, (40_000, n)).max(1)
        for q in (0.5, 0.95):
            exact = scaleout.max_quantile(samples, q, n)
            lo, hi = np.quantile(draws, [q - 0.005, q + 0.005])
            assert lo <= exact <= hi, (n, q, exact, lo, hi)
    assert scaleout.max_quantile(samples, 0.99, 1 << 20) == samples.max()


def test_loggp_tree_from_the_seed_parameters():
    net = scaleout.LogGP()
    assert (net.latency_us, net.overhead_us, net.gap_per_byte_us, net.merge_us) == (6.0, 4.7, 0.73e-3, 1.0)
    assert net.network_us(1, 512, 80) == 0.0
    assert [net.levels(n) for n in (1, 2, 3, 4, 5, 1024)] == [0, 1, 2, 2, 3, 10]
    bcast = 2 * (4.7 + 512 * 0.73e-3) + 6.0 + 4.7
    reduce = 4.7 + 80 * 0.73e-3 + 6.0 + 2 * 4.7 + 1.0
    assert net.network_us(16, 512, 80) == pytest.approx(4 * (bcast + reduce))
    with pytest.raises(FannsError):
        net.levels(0)


@pytest.mark.slow
@pytest.mark.long  # a model trend
def test_partition_curve_grows_with_the_tail(point):
    times = latency_model.query_times(point.ctx, point.stages, stage_model.Probes.of(point.workload.probed))
    us = times.alone() / point.clock_mhz
    qb, rb = scaleout.message_bytes(128, 10)
    curve = scaleout.partition_curve("fpga", us, qb, rb)
    p99 = curve.total_us(0.99)
    assert curve.counts == scaleout.DEFAULT_COUNTS and p99[0] == pytest.approx(
        np.quantile(us, 0.99, method="inverted_cdf")
    )
    assert all(a < b for a, b in zip(p99, p99[1:]))
    assert all(s <= us.max() for s in curve.search_us[0.99])
    # a wider distribution (same median) has a larger P99 at scale
    wide = np.median(us) + 3 * (us - np.median(us))
    assert scaleout.partition_curve("wide", wide, qb, rb).total_us(0.99)[-1] > p99[-1]
    rec = curve.as_dict()
    assert len(rec["p99_us"]) == len(rec["counts"]) == 11


@pytest.mark.slow
@pytest.mark.long  # a model trend
def test_split_by_vector_shrinks_the_search(point):
    w = point.workload
    qb, rb = scaleout.message_bytes(128, 10)
    one = scaleout.split_latencies(point.ctx, point.stages, w.list_sizes, w.cells, 1)
    times = latency_model.query_times(point.ctx, point.stages, stage_model.Probes.of(w.probed))
    assert np.allclose(one, times.alone() / point.clock_mhz)
    curve = scaleout.split_curve("split", point.ctx, point.stages, w.list_sizes, w.cells, qb, rb, counts=(1, 2, 8, 64))
    search = curve.search_us[0.99]
    assert all(a >= b for a, b in zip(search, search[1:])) and search[-1] < search[0]


def test_cpu_baseline_is_measured_per_query():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((3000, 32)).astype(np.float32)
    index = train_index(base, "l2", 16, 8, False, base, 0)
    got = cpu_baseline.measure(index, base[:50], nprobe=4, k=10, repeat=2, label="IVF16,PQ8")
    assert got.latencies_us.shape == (100,) and (got.latencies_us > 0).all()
    pct = got.percentiles()
    assert pct["p50_us"] <= pct["p95_us"] <= pct["p99_us"]
    # the thread's CPU clock: positive, and never more than the wall clock of the same query
    # (beyond the two clocks' resolutions)
    assert got.cpu_us.shape == (100,) and (got.cpu_us > 0).all() and (got.cpu_us <= got.latencies_us + 50).all()
    cpu = got.percentiles("cpu")
    assert cpu["p50_us"] <= cpu["p99_us"]
    two = cpu_baseline.measure(index, base[:5], nprobe=4, k=10, threads=2)
    assert two.cpu_us is None
    with pytest.raises(FannsError, match="no 'cpu' clock"):
        two.percentiles("cpu")
    with pytest.raises(FannsError):
        cpu_baseline.measure(index, base[:5], nprobe=0, k=10)
