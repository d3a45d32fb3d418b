"""Tiered PQ-code placement built and simulated (issue 10): a skewed synthetic index whose few
hot lists get most of the probes, the hot lists placed by `fanns.model.ivfpq.skew.place_lists` on a
fast tier (one channel paired with each PQ channel), the others on the slow tier.

Cheap checks: the design.yaml schema (round trip, errors naming the key), the packer (hot lists
only in the fast tier's images, the list->tier table, round trip to the index), the HLS
generator's refusal. Simulation (one Verilator build per design): the tiered design and the
untiered one with the same PEs and PQ channels, the slow tier's memory at `SLOW` (half a beat per
cycle, 200 cycles latency) and the fast tier's at `FAST` (a beat per cycle, the model's 100
cycles): result keys equal the reference model's bit for bit on both; the model predicts the
tiered design faster; the measured steady-state cycles per query agree with the model within
`CYCLE_TOLERANCE` (5 %, as the other RTL-vs-model checks) for both, and the measured speedup is
within `SPEEDUP_TOLERANCE` of the predicted one. Measured when written: untiered 1152.6 cycles
per query (model 1182.5), tiered 768.0 (model 768.0): speedup 1.50 measured, 1.54 predicted.
"""

import copy
import json
import re

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries, render_project
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.design.ivfpq import IvfPqDesign
from fanns.design.ivfpq_stages import Packing
from fanns.errors import FannsError
from fanns.images import ivfpq as ivfpq_images
from fanns.index.ivfpq_synthetic import random_format, skewed_index
from fanns.model.ivfpq import skew as skew_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.rtl import RamTiming, RtlProjectSim, Run, measured_interval, predicted_interval

CYCLE_TOLERANCE = 0.05
SPEEDUP_TOLERANCE = 0.10
"""Measured speedup vs the predicted one (relative): each side is within 5 %, so their ratio is
within about 10 %."""
SLOW, FAST = RamTiming(200, 0.5), RamTiming(100, 1.0)
NQ = 12
NPROBE, K_RESULTS = 3, 5
PES, CHANNELS = 3, 1
FAST_SHARE = 0.75
"""The fast tier's channel holds 75 % of the slow channel's bytes of lists (the capacity `place`
fills hottest first)."""


@pytest.fixture(scope="module")
def skewed():
    """The skewed index, the untiered design, the hot lists placed from a 200-query sample's
    accesses (not the test queries), and the tiered design."""
    data, queries = skewed_index()
    fmt = random_format(32, 8)
    base = pinned_design(
        data, fmt, nprobe=NPROBE, k=K_RESULTS, ivf=(2, 16, "bram"), lut=(3, 32, "bram"), pq=(PES, CHANNELS)
    )
    ref = DesignReference(base, data).ref
    acc = np.bincount(ref.probe(ref.prepare(queries(200, 1)), NPROBE).ravel(), minlength=data.nlist)
    st = base.stages.pq_dist
    size = Packing(fmt.m, st.port_bits).beats(data.list_sizes, PES) * (st.port_bits // 8) * max(st.pes_per_channel())
    hot = skew_model.place_lists(acc, size, int(FAST_SHARE * size.sum()))
    return {
        "data": data,
        "queries": queries,
        "base": base,
        "hot": hot,
        "acc": acc,
        "tiered": skew_model.with_tiers(base, hot, "hbm"),
    }


def test_the_workload_is_skewed_and_placement_takes_the_hot_lists(skewed):
    acc, hot, data = skewed["acc"], skewed["hot"], skewed["data"]
    top = np.argsort(-acc, kind="stable")[: int(np.ceil(0.2 * data.nlist))]
    assert acc[top].sum() > 0.7 * acc.sum()  # the hottest 20 % of lists take most probes
    assert hot[top].all() and not hot.all()
    st = skewed["tiered"].stages.pq_dist
    assert st.tiers.hot == tuple(int(i) for i in np.nonzero(hot)[0]) and st.tiers.channels == st.channels


def test_tiered_design_yaml_round_trip_and_errors(skewed, tmp_path):
    d = skewed["tiered"]
    path = tmp_path / "design.yaml"
    d.save(path)
    assert IvfPqDesign.load(path) == d
    assert "tiers" not in skewed["base"].to_dict()["stages"]["pq_dist"]  # untiered designs keep their schema
    uses = [ch.use for ch in d.memory]
    assert uses.count("pq_hot") == CHANNELS
    edits = [
        (lambda t: t["stages"]["pq_dist"]["tiers"].update(hot=[3, 1]), "tiers.hot: must be sorted"),
        (lambda t: t["stages"]["pq_dist"]["tiers"].update(hot=[0, 99]), "tiers.hot: list ids must lie in 0..15"),
        (lambda t: t["stages"]["pq_dist"]["tiers"].update(channels=2), "pairs one channel with each"),
        (lambda t: t["stages"]["pq_dist"]["tiers"].update(colour=1), "tiers.colour: unknown key"),
        (lambda t: t.update(memory=[ch for ch in t["memory"] if ch["use"] != "pq_hot"]), "0 channel(s) for pq_hot"),
    ]
    for edit, message in edits:
        data = copy.deepcopy(d.to_dict())
        edit(data)
        with pytest.raises(FannsError, match=re.escape(message)):
            IvfPqDesign.from_dict(data)


def test_packer_places_lists_by_tier(skewed):
    d, data, hot = skewed["tiered"], skewed["data"], skewed["hot"]
    images = ivfpq_images.pack(d, data)
    assert np.array_equal(images.get("list_tiers").array(), hot.astype(np.uint8))
    for use, holds in (("pq_codes", ~hot), ("pq_hot", hot)):
        (img,) = images.by_use(use)
        table = np.frombuffer(img.data[: data.nlist * 16], dtype="<u4").reshape(data.nlist, 4)
        stored = (table[:, 1] > 0) | (data.list_sizes == 0)
        assert np.array_equal(stored, holds | (data.list_sizes == 0)), use
        assert img.layout["tier"] == ("fast" if use == "pq_hot" else "slow")
    assert images.get("pq_hot_0").memory == "hbm" and images.get("pq_hot_0").channel != images.get("pq_codes_0").channel
    assert images.info["tiers"]["hot_lists"] == [int(i) for i in np.nonzero(hot)[0]]
    lists = ivfpq_images.unpack_lists(images, PES)
    for cell, (ids, codes) in enumerate(lists):
        assert np.array_equal(ids, data.list_ids(cell)) and np.array_equal(codes, data.list_codes(cell)), cell
    header = images.get("pq_codes_0").layout["header_beats"] * d.stages.pq_dist.port_bits // 8
    untiered = ivfpq_images.pack(skewed["base"], data).get("pq_codes_0").nbytes
    assert (
        images.get("pq_codes_0").nbytes + images.get("pq_hot_0").nbytes - 2 * header == untiered - header
    )  # each list once


def test_hls_generator_refuses_tiered_designs(skewed):
    test = TestQueries(np.zeros((2, 32), np.float32), np.zeros((2, 10), np.int64))
    with pytest.raises(FannsError, match="not supported by the HLS generator"):
        render_project(skewed["tiered"], skewed["data"], test)


@pytest.fixture(scope="module")
def projects(skewed, tmp_path_factory):
    """`projects(name)`: the untiered or tiered RTL project (generated once per module) with its
    NQ test queries and their reference keys."""
    test = TestQueries(skewed["queries"](NQ, 2), np.zeros((NQ, 10), np.int64))
    cache = {}

    def get(name: str) -> dict:
        if name not in cache:
            design = skewed["base" if name == "untiered" else "tiered"]
            project = generate_rtl(design, skewed["data"], test, tmp_path_factory.mktemp(name) / "project")
            cache[name] = {
                "design": design,
                "queries": test.queries,
                "project": project.path,
                "expected": DesignReference(design, skewed["data"]).search_keys(test.queries),
            }
        return cache[name]

    return get


@pytest.fixture(scope="module")
def built(projects, build_root):
    """`built(name)`: `projects(name)` with its Verilated model built (once per module)."""
    cache = {}

    def get(name: str) -> dict:
        if name not in cache:
            p = projects(name)
            sim = RtlProjectSim(p["project"], build_root / "rtl", harness="cocotb")  # memories of rate < 1
            sim.build()
            cache[name] = {**p, "sim": sim}
        return cache[name]

    return get


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_host_driver_places_and_reads_the_tier_images(projects):
    """The host driver puts each fast-tier image in the bank of its `m_axi_hot<c>` port and the
    list->tier table with the ROM images, programs their registers, and the model backend, which
    rebuilds the index from the device memory, returns the reference keys."""
    import fanns.driver

    p = projects("tiered")
    ports = json.loads((p["project"] / "rtl" / "ports.json").read_text())["ports"]
    acc = fanns.driver.open(p["project"], batch=NQ)
    planned = {buf.name: (buf.bank.memory, buf.bank.channel) for buf, _ in acc.plan()}
    assert (
        planned["pq_hot_0"] == (ports["m_axi_hot0"]["memory"], ports["m_axi_hot0"]["channel"]) != planned["pq_codes_0"]
    )
    assert planned["list_tiers"] == (ports["m_axi_io"]["memory"], ports["m_axi_io"]["channel"])
    acc.load()
    for name, reg in (("pq_hot_0", "hot0_addr"), ("list_tiers", "tiers_addr")):
        assert acc.iface.address_register(name) == reg and acc.backend.decode(reg) == acc.addresses[name]
    assert np.array_equal(acc.search_keys(p["queries"]), p["expected"])


@pytest.fixture(scope="module")
def simulated(built):
    """Both designs run on the same NQ test queries with the slow and fast memories."""
    out = {}
    for name in ("untiered", "tiered"):
        b = built(name)
        run = b["sim"].run([Run(nq=NQ, nprobe=NPROBE, k=K_RESULTS)], pq_memory=SLOW, hot_memory=FAST)["runs"][0]
        times = b["sim"].predicted_query_times(0, NQ, pq_memory=SLOW, hot_memory=FAST)
        out[name] = {
            **b,
            "run": run,
            "measured": measured_interval(run),
            "predicted": predicted_interval(times),
            "ports": json.loads((b["project"] / "rtl" / "ports.json").read_text())["ports"],
        }
    return out


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_both_designs_return_the_reference_keys(simulated):
    for name, r in simulated.items():
        assert r["run"]["mismatched_queries"] == 0, (name, r["run"].get("first_bad"))
        assert np.array_equal(r["run"]["keys"], r["expected"]), name
        assert r["run"]["status"] == 1, name
    assert "m_axi_hot0" in simulated["tiered"]["ports"] and "m_axi_hot0" not in simulated["untiered"]["ports"]


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_measured_cycles_and_speedup_agree_with_the_model(simulated):
    for name, r in simulated.items():
        assert abs(r["measured"] - r["predicted"]) <= CYCLE_TOLERANCE * r["predicted"], (
            name,
            r["measured"],
            r["predicted"],
        )
    predicted = simulated["untiered"]["predicted"] / simulated["tiered"]["predicted"]
    measured = simulated["untiered"]["measured"] / simulated["tiered"]["measured"]
    assert predicted > 1.3  # the model predicts the tiered design clearly faster
    assert measured > 1.3 and abs(measured - predicted) <= SPEEDUP_TOLERANCE * predicted, (measured, predicted)


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_tiered_design_under_stalls_and_runtime_parameters(built, skewed):
    """Random stalls on every AXI channel of both tiers, the index already on chip for a second
    run at smaller nprobe and k: still the reference keys."""
    r = built("tiered")
    sim, design = r["sim"], r["design"]
    expected = sim.sim.build_dir / "expected_tiers_small.bin"
    DesignReference(design, skewed["data"]).search_keys(r["queries"][1:7], nprobe=2, k=3).astype("<u8").tofile(expected)
    out = sim.run(
        [Run(nq=NQ, nprobe=NPROBE, k=K_RESULTS), Run(nq=6, nprobe=2, k=3, first=1, expected=expected)],
        latency=37,
        pause=0.3,
        pq_memory=RamTiming(61, 0.7),
        hot_memory=RamTiming(23, 1.0),
    )
    first, second = out["runs"]
    assert first["mismatched_queries"] == 0 and second["mismatched_queries"] == 0, (
        first.get("first_bad"),
        second.get("first_bad"),
    )
    assert np.array_equal(first["keys"], r["expected"]) and second["checked_keys"] == 6 * 3
    assert first["status"] == second["status"] == 1
