"""Access skew and tiered list placement (issue 10): the profile against brute-force counting,
placement within capacity, the tiered model's consistency, and a skewed synthetic workload on
which the tiered design is predicted faster than the untiered one with the same PEs and channels,
and the tiered design.yaml `fanns dse --tiers` writes. (The generated tiered design against RTL
simulation: tests/codegen/test_tiers.py.)"""

import dataclasses

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.errors import FannsError
from fanns.model.ivfpq import dse
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import skew as skew_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.report import latency_figures as figures


@pytest.fixture(scope="module")
def setting():
    """A skewed workload (imbalance 3: ~90 % of the work in the hottest 20 % of lists) and the
    DSE's best U55C design with its PQ channels cut to a quarter, so the shared HBM channels bind."""
    w = synthetic_workload(10**6, 128, 16, 1024, 16, 10, False, queries=400, imbalance=3.0, seed=1)
    board = load_board("u55c")
    p = dse.run([w], board, "synthetic", 200.0, top=1).best
    pq = dataclasses.replace(p.stages.pq_dist, channels=max(1, p.stages.pq_dist.channels // 4))
    return w, board, p.ctx, dataclasses.replace(p.stages, pq_dist=pq)


def test_profile_counts_work_per_list(setting):
    w = setting[0]
    prof = skew_model.profile(w)
    acc = np.zeros(w.nlist, dtype=np.int64)
    for row in w.cells:
        for c in row:
            acc[c] += 1
    assert np.array_equal(skew_model.accesses(w), acc)
    work = np.sort(acc * w.list_sizes)[::-1]
    hot = int(np.ceil(0.2 * w.nlist))
    assert prof["hot20_work_share"] == pytest.approx(work[:hot].sum() / work.sum(), abs=1e-6)
    assert 0.59 <= prof["hot20_access_share"] <= prof["hot20_work_share"] <= 1.0
    assert prof["work_cdf"][-1] == pytest.approx(1.0) and prof["work_cdf"] == sorted(prof["work_cdf"])
    assert len(prof["list_fraction"]) <= 200
    flat = dataclasses.replace(w, list_sizes=np.full(w.nlist, 10), probed=np.full_like(w.probed, 10), cells=w.cells)
    assert skew_model.profile(flat)["hot20_work_share"] == pytest.approx(skew_model.profile(flat)["hot20_access_share"])


def test_placement_respects_capacity_and_prefers_hot_lists(setting):
    w, _, ctx, stages = setting
    st = stages.pq_dist
    fast = skew_model.uram_tier(8 * st.pes, st.pes)
    hot = skew_model.place(w, st, fast)
    assert (skew_model.list_bytes(w, st)[hot] * fast.pes_per_port).sum() <= fast.capacity_bytes
    acc = skew_model.accesses(w)
    assert hot.any() and acc[hot].mean() > acc[~hot].mean()
    assert 0 < skew_model.hit_rate(w, hot) <= 1
    assert not skew_model.place(w, st, dataclasses.replace(fast, capacity_bytes=0)).any()
    with pytest.raises(FannsError):
        skew_model.uram_tier(st.pes - 1, st.pes)


def test_tiered_model_reduces_to_untiered(setting):
    """Nothing hot, or both tiers the same memory: the untiered prediction exactly."""
    w, board, ctx, stages = setting
    st = stages.pq_dist
    probes = stage_model.Probes.of(w.probed)
    plain = latency_model.query_times(ctx, stages, probes)
    slow = skew_model.memory_tier(board, st.memory, ctx.clock_mhz, st.pes, st.channels, st.port_bits)
    none = skew_model.tiered_feed(
        ctx, stages, w, np.zeros(w.nlist, dtype=bool), skew_model.uram_tier(st.pes, st.pes), slow
    )
    same = skew_model.tiered_feed(ctx, stages, w, np.ones(w.nlist, dtype=bool), slow, slow)
    for feed in (none, same):
        t = latency_model.query_times(ctx, stages, probes, feed)
        assert np.allclose(t.service, plain.service) and np.allclose(t.latency, plain.latency)


def test_tiered_design_is_predicted_faster_on_a_skewed_workload(setting):
    w, board, ctx, stages = setting
    st = stages.pq_dist
    slow = skew_model.memory_tier(board, st.memory, ctx.clock_mhz, st.pes, st.channels, st.port_bits)
    cmp = skew_model.compare(w, ctx, stages, skew_model.uram_tier(8 * st.pes, st.pes), slow)
    untiered, tiered = cmp["designs"]
    assert cmp["hit_rate"] > 0.5
    assert tiered["qps"] > 1.2 * untiered["qps"]
    assert tiered["p99_us"] < untiered["p99_us"] and tiered["batch16_p99_us"] < untiered["batch16_p99_us"]
    fig = figures.tier_figure(cmp)
    assert len(fig.axes) == 2


def test_batch_time_is_set_by_the_slowest_query(setting):
    w, _, ctx, stages = setting
    times = latency_model.query_times(ctx, stages, stage_model.Probes.of(w.probed))
    one = skew_model.batch_cycles(times, 1, batches=50)
    assert one.min() >= times.alone().min() - 1e-9 and one.max() <= times.alone().max() + 1e-9
    many = skew_model.batch_cycles(times, 16, batches=50)
    assert np.median(many) > np.median(one) and np.array_equal(many, skew_model.batch_cycles(times, 16, batches=50))


def test_dse_reports_the_tier_choice(setting, tmp_path):
    import json

    from fanns.model.ivfpq import report

    w, board = setting[0], load_board("u280")
    outcome = dse.run([w], board, "synthetic", 200.0, top=1, tiers=True)
    choice = outcome.tiers[0]
    assert choice["slow"] == outcome.best.stages.pq_dist.memory
    names = {o["fast"] for o in choice["options"]}
    assert names and choice["slow"] not in names
    for o in choice["options"]:
        assert 0 <= o["hit_rate"] <= 1 and o["speedup"] == pytest.approx(o["qps"] / choice["untiered"]["qps"], rel=1e-3)
    assert choice["best"] is None or max(o["speedup"] for o in choice["options"]) > 1
    report.write(outcome, tmp_path)
    data = json.loads((tmp_path / "dse.json").read_text())
    assert data["tiers"]["designs"][0]["options"] == choice["options"]
    built = [o for o in choice["options"] if o["fast"] != "uram" and o["speedup"] > 1]
    path = tmp_path / "design_tiered.yaml"
    assert path.exists() == bool(built)
    if built:
        from fanns.design.ivfpq import IvfPqDesign

        best = max(built, key=lambda o: o["qps"])
        tiered = IvfPqDesign.load(path)
        base = IvfPqDesign.load(tmp_path / "design.yaml")
        assert (
            tiered.stages.pq_dist.tiers.memory == best["fast"] and list(tiered.stages.pq_dist.tiers.hot) == best["hot"]
        )
        assert len(best["hot"]) == best["hot_lists"] > 0
        assert (
            tiered.stages.pq_dist.pes == base.stages.pq_dist.pes
            and tiered.stages.pq_dist.channels == base.stages.pq_dist.channels
        )


@pytest.mark.slow
@pytest.mark.long  # a whole DSE of a billion-vector workload
def test_dse_writes_the_tiered_design(tmp_path):
    """1e9 vectors on the U280: the best design keeps the codes on DDR4; hot lists on HBM (one
    channel paired with each DDR4 channel) beat it, so `design_tiered.yaml` is written: the same
    stages with `pq_dist.tiers` from `place`, a channel plan with the paired HBM channels, and
    the tiered prediction."""
    from fanns.design.ivfpq import IvfPqDesign
    from fanns.model.ivfpq import report

    w = synthetic_workload(10**9, 128, 16, 4096, 16, 10, False, queries=100, imbalance=3.0, seed=1)
    outcome = dse.run([w], load_board("u280"), "synthetic", 200.0, top=1, tiers=True)
    report.write(outcome, tmp_path)
    base, tiered = IvfPqDesign.load(tmp_path / "design.yaml"), IvfPqDesign.load(tmp_path / "design_tiered.yaml")
    option = next(o for o in outcome.tiers[0]["options"] if o["fast"] == "hbm")
    st = tiered.stages.pq_dist
    assert base.stages.pq_dist.memory == "ddr4" and base.stages.pq_dist.tiers is None
    assert st.tiers.memory == "hbm" and list(st.tiers.hot) == option["hot"] and st.tiers.channels == st.channels
    assert dataclasses.replace(tiered.stages, pq_dist=dataclasses.replace(st, tiers=None)) == base.stages
    hot_channels = [ch for ch in tiered.memory if ch.use == "pq_hot"]
    assert [ch.pes for ch in hot_channels] == [ch.pes for ch in tiered.memory if ch.use == "pq_codes"]
    assert all(ch.memory == "hbm" for ch in hot_channels) and len(
        {ch.channel for ch in tiered.memory if ch.memory == "hbm"}
    ) == len([ch for ch in tiered.memory if ch.memory == "hbm"])
    assert (
        tiered.prediction["qps"] == option["qps"] > base.prediction["qps"] and tiered.prediction["tiers"]["speedup"] > 1
    )


def test_host_tier_from_the_board_file(setting):
    """Cold lists in host memory over PCIe (an index larger than the board's memory): hot lists
    on HBM make the design faster than everything over the link."""
    w, _, ctx, stages = setting
    board = load_board("u55c")
    st = stages.pq_dist
    host = skew_model.host_tier(board, ctx.clock_mhz, st.pes, st.channels, st.port_bits)
    ppc = -(-st.pes // st.channels)  # each PQ channel's PEs share the channel's own host port
    assert host.pes_per_port == ppc and host.latency_cycles == pytest.approx(board.host.latency_us * ctx.clock_mhz)
    ports = st.channels * st.port_bits / 8 * ctx.clock_mhz * 1e6  # every channel's port, or the link
    per_cycle = min(board.host.bandwidth_gbps * 1e9, ports) / (ctx.clock_mhz * 1e6) / st.channels
    # the channel reader's outstanding window at the link's latency
    reader = stage_model.channel_reader(st.port_bits).words_per_cycle(round(host.latency_cycles))
    assert host.rate == pytest.approx(min(per_cycle / (st.port_bits / 8), 1.0, reader))
    assert skew_model.host_tier(board, 100.0, 1, 1, 64).rate == 1.0  # the link carries 15 beats a cycle, the port one
    assert skew_model.host_tier(board, 300.0, 1, 1, 64).rate < 1.0  # 300 cycles of latency: the reader's window binds
    two = skew_model.host_tier(board, 100.0, 4, 2, 512)  # 2 x 6.4 GB/s of ports over a 12 GB/s link
    assert two.pes_per_port == 2 and two.rate == pytest.approx(12e9 / 2 / 100e6 / 64)
    assert skew_model.host_bandwidth(board, 100.0, 1, 512) == 6.4e9
    assert (
        skew_model.host_bandwidth(board, 140.0, 2, 256) == 8.96e9
        and skew_model.host_bandwidth(board, 140.0, 3, 256) == 12e9
    )
    with pytest.raises(FannsError, match="each channel needs at least one PE"):
        skew_model.host_tier(board, 140.0, 2, 3, 256)
    cmp = skew_model.compare(
        w, ctx, stages, skew_model.memory_tier(board, "hbm", ctx.clock_mhz, st.pes, st.channels, st.port_bits), host
    )
    untiered, tiered = cmp["designs"]
    assert tiered["qps"] > untiered["qps"] and tiered["p99_us"] < untiered["p99_us"]
    with pytest.raises(FannsError, match="no host link"):
        skew_model.host_tier(load_board("kv260"), 100.0, 4, 1, 128)


def _round_robin(need: np.ndarray, link: float) -> np.ndarray:
    """[ports, cells] cycle each port has moved its cumulative `need` [ports, cells] by, on a link
    earning `link` beats a cycle granted one beat a port a cycle, round robin among the ports that
    want one: `fanns.sim.axi_memory.meter_link` step by step (it keeps the fraction, holds at most
    a beat a port and a fraction)."""
    ports = need.shape[0]
    moved, out = np.zeros(ports), np.zeros(need.shape)
    tokens, start, t = 0.0, 0, 0
    while (moved < need[:, -1]).any():
        t += 1
        held, used = int(tokens), 0
        for k in [(start + i) % ports for i in range(ports)]:
            if moved[k] < need[k, -1] and used < held:
                used, moved[k], start = used + 1, moved[k] + 1, (k + 1) % ports
                out[k, (need[k] == moved[k]) & (out[k] == 0)] = t
        tokens = min(tokens + link - used, ports + 255 / 256)
    return out


@pytest.mark.parametrize(
    "port_pes, link", [((2, 2), 0.25), ((2, 1), 0.25), ((3, 2, 2, 1), 0.7), ((2, 1, 1), 2.5), ((1, 1, 1), 1.5)]
)
def test_a_shared_link_serves_its_ports_round_robin(port_pes, link):
    """`SharedLink.feed` against the link's round robin simulated beat by beat: each probed cell's
    arrival on the busiest port within a few cycles, alone; busy time the link's (or the busiest
    port's at a beat a cycle). Equal ports give the even split (`channel_feed`); a 2 + 1 design on a
    slow link waits 3 PE shares of the link's time, not the even split's 4."""
    beats = np.random.default_rng(len(port_pes)).integers(20, 60, (1, 5)).astype(float)
    shared = skew_model.SharedLink(link, 1.0, port_pes)
    feed = shared.feed(beats, 10.0)
    need = np.array(port_pes)[:, None] * np.cumsum(beats, 1)
    sim = _round_robin(need, link).max(0) + 10.0
    assert np.abs(feed.ready[0] - sim).max() <= 2 + 0.01 * sim.max(), (feed.ready, sim)
    total = beats.sum()
    assert feed.link[0] == pytest.approx(total * max(max(port_pes), sum(port_pes) / link)) and not feed.busy.any()
    if len(set(port_pes)) == 1:
        even = latency_model.channel_feed(beats, port_pes[0], min(1.0, link / len(port_pes)), 10.0)
        assert np.allclose(feed.ready, even.ready) and np.allclose(feed.link, even.busy)
    if port_pes == (2, 1):
        assert feed.ready[0, -1] == pytest.approx(10 + 3 * total / link)  # the even split: 4 * total / link


def test_the_host_tier_shares_its_link_by_the_channels_pes():
    board = load_board("u55c")
    tier = skew_model.host_tier(board, 140.0, 3, 2, 256)  # 2 x 4.48 GB/s ports, under the link
    assert tier.link.port_pes == (2, 1) and tier.pes_per_port == 2
    assert tier.link.beats == pytest.approx(2.0) and tier.rate == tier.link.port_rate
    slow = dataclasses.replace(board, host=dataclasses.replace(board.host, bandwidth_gbps=1.0))
    tier = skew_model.host_tier(slow, 140.0, 3, 2, 256)
    assert tier.link.beats == pytest.approx(1e9 / 140e6 / 32) and tier.rate == pytest.approx(tier.link.beats / 2)
