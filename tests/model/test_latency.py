"""Per-query latency model and the SLO-constrained DSE (issue 10): the tandem recursion against a
plain event loop, the cell schedule against the pq_decode PE's own schedule, queueing behaviour,
determinism, SLO selection and its explanations, CLI options."""

import dataclasses
import json

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.cli import main
from fanns.errors import FannsError
from fanns.flow.dse_cli import parse_duration_us
from fanns.model.ivfpq import dse
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.pe.pq_decode import KSUB

QUERIES = 300


@pytest.fixture(scope="module")
def outcome():
    w = synthetic_workload(10**7, 128, 16, 1024, 12, 10, False, queries=QUERIES, imbalance=4.0, seed=3)
    return dse.run([w], load_board("u55c"), "synthetic", 200.0, top=4)


def event_loop(arrivals, service, latency):
    """The tandem, one query and one server at a time (the reference for the closed form)."""
    ready = list(arrivals)
    for s in range(service.shape[0]):
        free = -np.inf
        out = []
        for q, r in enumerate(ready):
            start = max(r, free)
            free = start + service[s, q]
            out.append(start + latency[s, q])
        ready = out
    return np.array(ready)


def test_tandem_closed_form_equals_the_event_loop():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n, servers = int(rng.integers(1, 300)), int(rng.integers(1, 5))
        arrivals = np.cumsum(rng.exponential(rng.uniform(1, 50), n))
        service = rng.integers(1, 60, (servers, n)).astype(float)
        latency = service + rng.integers(0, 100, (servers, n))
        assert np.allclose(latency_model.tandem(arrivals, service, latency), event_loop(arrivals, service, latency))


@pytest.mark.slow
@pytest.mark.long  # the latency model's run
def test_queries_alone_are_the_sum_of_server_latencies(outcome):
    p = outcome.best
    times = latency_model.query_times(p.ctx, p.stages, stage_model.Probes.of(p.workload.probed))
    far = np.arange(times.queries) * 1e9  # arrivals so sparse that no query waits
    done = latency_model.tandem(far, times.service, times.latency) + times.io_cycles
    assert np.allclose(done - far, times.alone())
    alone = p.latency["alone"]
    assert alone.get(50) <= alone.get(95) <= alone.get(99)
    assert alone.get(99) == pytest.approx(np.percentile(times.alone(), 99) / p.clock_mhz)


@pytest.mark.slow
@pytest.mark.long  # the latency model's run
def test_back_span_is_the_pq_decode_schedule_when_luts_arrive_in_time(outcome):
    """One BuildLUT PE per probe: every LUT is complete when the first one is, so the span is the
    PE's own `cycles_for_cells` (from its first LUT word), shifted by that LUT's completion. With
    fewer BuildLUT PEs the span can only grow."""
    p = outcome.best
    probes = stage_model.Probes.of(p.workload.probed[:60])
    lut = stage_model.lut_pe(p.ctx, p.stages.build_lut)
    pq = dataclasses.replace(p.stages.pq_dist, channels=p.stages.pq_dist.pes)  # one PE per channel: memory keeps up
    wide = dataclasses.replace(
        p.stages, pq_dist=pq, build_lut=dataclasses.replace(p.stages.build_lut, pes=p.workload.nprobe)
    )
    span = latency_model.back_span(p.ctx, wide, probes)
    pe = stage_model.pq_pe(p.ctx, p.stages.pq_dist)
    items = stage_model.Packing(p.ctx.m, p.stages.pq_dist.port_bits).items(probes.sizes, p.stages.pq_dist.pes)
    own = np.array([pe.cycles_for_cells(row) for row in items])
    assert np.array_equal(span, own + lut.latency() + 1 - KSUB)
    narrow = latency_model.back_span(p.ctx, dataclasses.replace(wide, build_lut=p.stages.build_lut), probes)
    assert (narrow >= span).all() and (narrow > span).any()
    shared = latency_model.back_span(p.ctx, p.stages, probes)  # the DSE's channel sharing: the busiest channel binds
    beats = stage_model.pq_shares(p.ctx.m, probes, p.stages.pq_dist.pes, p.stages.pq_dist.port_bits).beats
    rate = p.ctx.memory(p.stages.pq_dist.memory).beats_per_cycle
    assert (shared >= stage_model.MEM_LATENCY_CYCLES + max(p.stages.pq_dist.pes_per_channel()) * beats / rate).all()


@pytest.mark.slow
@pytest.mark.long  # the latency model's run
def test_latency_grows_with_load_and_is_deterministic(outcome):
    p = outcome.best
    times = latency_model.query_times(p.ctx, p.stages, stage_model.Probes.of(p.workload.probed))
    top = times.max_qps()
    p99 = [latency_model.poisson(times, f * top, seed=1).get(99) for f in (0.1, 0.5, 0.8, 0.95)]
    assert p99 == sorted(p99) and p99[0] >= latency_model.alone(times).get(50)
    assert latency_model.poisson(times, 0.7 * top, seed=4) == latency_model.poisson(times, 0.7 * top, seed=4)
    assert not latency_model.poisson(times, 1.01 * top).stable
    assert latency_model.poisson(times, 1.01 * top).get(99) == float("inf")
    with pytest.raises(FannsError):
        latency_model.poisson(times, 0.0)


@pytest.mark.slow
@pytest.mark.long  # the latency model's run
def test_slo_picks_the_fastest_design_that_meets_it(outcome):
    w, board = outcome.workloads[0], outcome.board
    lat = sorted(p.latency["alone"].get(99) for p in outcome.top)
    slo = dse.Slo(99, lat[0] * 0.999 if len(set(lat)) > 1 else lat[0], None)
    picked = dse.run([w], board, "synthetic", 200.0, top=3, slo=slo)
    assert picked.top and all(p.latency["alone"].get(99) <= slo.limit_us for p in picked.top)
    assert picked.best.qps <= outcome.best.qps
    # every faster fitting design (by the unconstrained search) misses the SLO
    for p in outcome.top:
        if p.qps > picked.best.qps + 1e-6:
            assert p.latency["alone"].get(99) > slo.limit_us


@pytest.mark.slow
@pytest.mark.long  # the latency model's run
def test_slo_at_a_load_and_explanations(outcome):
    w, board, best = outcome.workloads[0], outcome.board, outcome.best
    at = dse.run([w], board, "synthetic", 200.0, top=2, slo=dse.Slo(95, 1e6, 0.5 * best.qps))
    assert at.best is not None and at.best.latency["load"].stable
    assert at.best.latency["load"].get(95) >= at.best.latency["alone"].get(50)
    too_tight = dse.run([w], board, "synthetic", 200.0, top=2, slo=dse.Slo(99, 1.0, None))
    assert too_tight.best is None and "meets the SLO" in too_tight.explain[0] and "lowest P99" in too_tight.explain[1]
    overload = dse.run([w], board, "synthetic", 200.0, top=2, slo=dse.Slo(99, 1e6, 10 * best.qps))
    assert overload.best is None and "exceeds the throughput" in overload.explain[0]
    with pytest.raises(FannsError):
        dse.Slo(90, 10.0)


def test_durations_and_cli_errors(tmp_path, capsys):
    assert parse_duration_us("2ms", "--slo-p99") == 2000.0
    assert parse_duration_us(" 500 us", "--slo-p99") == 500.0
    assert parse_duration_us("0.5s", "--slo-p99") == 5e5
    for bad in ("2", "ms", "-1ms", "2 hours"):
        with pytest.raises(FannsError, match="duration"):
            parse_duration_us(bad, "--slo-p99")
    assert (
        main(
            [
                "dse",
                str(tmp_path),
                "--board",
                "u55c",
                "--recall",
                "R@10=0.5",
                "--slo-p99",
                "2",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        != 0
    )
    assert "not a positive duration" in capsys.readouterr().err
    assert (
        main(
            [
                "dse",
                str(tmp_path),
                "--board",
                "u55c",
                "--recall",
                "R@10=0.5",
                "--slo-p99",
                "2ms",
                "--slo-p95",
                "1ms",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        != 0
    )
    assert "both given" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.long  # the latency model's run
def test_dse_json_reports_percentiles_of_every_kept_design(outcome, tmp_path):
    from fanns.model.ivfpq import report

    report.write(outcome, tmp_path)
    data = json.loads((tmp_path / "dse.json").read_text())
    for rec in [data["best"], *data["top"], *data["pareto"]]:
        alone = rec["latency"]["alone"]
        assert alone["stable"] and alone["p50_us"] <= alone["p95_us"] <= alone["p99_us"]
    assert data["slo"] is None
