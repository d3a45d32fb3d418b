"""The RAG pipeline model (issue 48, part 1): the transformer roofline against hand-computed
values, RAGO's CPU roofline and the sharded retrieval units, the iterative-retrieval decode
simulation, RAG.yaml validation, the pipeline's assembly (allocation, equal throughput, TTFT with
queueing, the resource-normalised retrieval share, the same-TTFT search), a fanns design and
faiss-cpu as retrieval units, and `fanns rag`."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import faiss
import numpy as np
import pytest
import yaml

from fanns.cli import main
from fanns.errors import FannsError
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.rag import iterative, rago
from fanns.model.ivfpq.rag.faiss_cpu import faiss_units
from fanns.model.ivfpq.rag.fpga import design_units
from fanns.model.ivfpq.rag.hardware import ACCELERATORS, CPU_SERVERS
from fanns.model.ivfpq.rag.inference import Chips, Transformer, decode_step_seconds, max_decode_batch, prefill_seconds
from fanns.model.ivfpq.rag.pipeline import Pipeline
from fanns.model.ivfpq.rag.report import document
from fanns.model.ivfpq.rag.retrieval import Database, RooflineServers, ShardedUnits, expected_max
from fanns.model.ivfpq.rag.schema import load, parse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag" / "rago_case1.yaml"
XPU = ACCELERATORS["xpu-c"]
TOY = Transformer("toy", parameters=1e9, layers=4, hidden=1024, bytes_per_weight=2, kv_bytes_per_token=1000)


def base() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


# -- inference roofline ---------------------------------------------------------------------------
def test_prefill_and_decode_by_operator_class():
    chips = Chips(XPU, 2)
    flops, bw = 2 * 459e12, 2 * 2765e9
    weights = max(2e9 * 3 * 100 / flops, 2e9 / bw)
    attention = max(2 * 4 * 1024 * 3 * 100 * (2 * 50 + 100) / flops, 1000 * 3 * 150 / bw)
    assert prefill_seconds(TOY, chips, 3, 100, context=50) == pytest.approx(weights + attention)
    step = max(2e9 * 8 / flops, 2e9 / bw) + max(4 * 4 * 1024 * 700 * 8 / flops, 1000 * 700 * 8 / bw)
    assert decode_step_seconds(TOY, chips, 8, 700) == pytest.approx(step)


def test_decoding_costs_more_than_prefilling_as_many_tokens():
    """Per operator, not one max: at a large batch the weights are compute-bound in both, but
    decoding also reads every sequence's KV cache (RAGO 5.1: prefix is faster than decoding)."""
    llm = Transformer("8b", **{k: v for k, v in rago.LLAMA3["8b"].items()})
    chips = Chips(XPU, 1)
    prefill = prefill_seconds(llm, chips, 1, 256)
    decode = 256 * decode_step_seconds(llm, chips, 1024, 512 + 128) / 1024
    assert decode > prefill
    assert max_decode_batch(llm, chips, 768, 1 << 30) == int((96e9 - 8e9) // (65536 * 768))
    assert max_decode_batch(Transformer("big", 200e9, 1, 1, 1, 1), chips, 10, 64) == 0


# -- retrieval units ------------------------------------------------------------------------------
DB = Database(vectors=64e9, bytes_per_vector=96, scan_fraction=0.001, dim=768, k=10)


def test_rago_cpu_roofline():
    cpu = RooflineServers("cpu", CPU_SERVERS["epyc-milan"])
    assert cpu.min_units(DB) == 16  # RAGO: "a minimum of 16 servers" for 5.6 TiB in 384 GB each
    share = DB.scan_bytes / 32
    assert cpu.batch_seconds(32, DB, 1) == pytest.approx(share / 18e9 + DB.network_seconds(32))
    assert cpu.batch_seconds(32, DB, 1000) == pytest.approx(1000 * share / (460e9 * 0.8) + DB.network_seconds(32))
    assert cpu.qps(32, DB) == pytest.approx(32 * 368e9 / DB.scan_bytes)
    need = cpu.units_for_qps(1000.0, DB)
    assert cpu.qps(need, DB) >= 1000.0 > cpu.qps(need - 1, DB)


def test_expected_maximum_equals_sampling_it():
    rng = np.random.default_rng(1)
    samples = rng.lognormal(2.0, 0.4, 500)
    for n in (1, 3, 50):
        draws = rng.choice(samples, (200_000, n)).max(1)
        assert expected_max(samples, n) == pytest.approx(draws.mean(), rel=0.01)
    assert expected_max(samples, 1) == pytest.approx(samples.mean())


def sharded(qps: float = 1000.0, n: int = 10**6) -> ShardedUnits:
    return ShardedUnits("b", "fpga", n, qps, np.array([1e-4, 2e-4, 3e-4]), "test")


def test_sharded_units_hold_replicas_of_the_database():
    u, db = sharded(), Database(3.5e6, 16, 0.01, 128, 10)
    assert u.shards(db) == 4 and u.min_units(db) == 4
    assert u.replicas(11, db) == 2 and u.qps(11, db) == 2000.0
    assert u.units_for_qps(2500.0, db) == 12
    behind = (math.ceil(10 / 2) - 1) / 1000.0
    assert u.batch_seconds(8, db, 10) == pytest.approx(expected_max(u.latency_s, 4) + behind + db.network_seconds(4))
    with pytest.raises(FannsError, match="cannot hold"):
        u.batch_seconds(3, db, 1)


# -- iterative retrievals -------------------------------------------------------------------------
def test_iterative_slowdown():
    assert iterative.slowdown(64, 16, 0, 256) == 1.0
    fast = iterative.slowdown(64, 4, 3, 256, 0.0, 500)
    slow = iterative.slowdown(64, 4, 3, 256, 20.0, 500)
    assert 1.0 < fast < slow
    assert iterative.slowdown(64, 4, 3, 256, 0.0, 500) == fast  # deterministic for a seed
    with pytest.raises(FannsError, match="between 1 and the decode batch"):
        iterative.slowdown(8, 16, 3, 256)


# -- RAG.yaml ------------------------------------------------------------------------------------
def test_example_descriptions_parse():
    spec = load(EXAMPLE)
    assert spec.name == "rago-case1-llama3-8b" and spec.llm.kv_bytes_per_token == 65536
    assert spec.stages() == ("retrieval", "prefill", "decode")
    assert spec.retrieval.retrieved_tokens == 512 - 32
    for path in sorted((ROOT / "examples" / "rag").glob("*.yaml")):
        load(path)


@pytest.mark.parametrize(
    "edit,match",
    [
        (lambda d: d["llm"].update(layers=0), r"llm\.layers: must be at least 1"),
        (lambda d: d["llm"].pop("hidden"), r"llm\.hidden: missing key"),
        (lambda d: d["llm"].update(heads=8), r"llm\.heads: unknown key"),
        (lambda d: d["retrieval"]["database"].update(scan_fraction=2), r"scan_fraction: must be at most 1"),
        (lambda d: d["retrieval"]["database"].update(vectors="lots"), r"vectors: must be a number"),
        (lambda d: d["retrieval"]["hardware"].append({"name": "cpu", "cpu": "epyc-milan"}), "names repeat"),
        (lambda d: d["retrieval"]["hardware"][0].update(design="x.yaml"), "needs exactly one of"),
        (lambda d: d["retrieval"]["hardware"][0].update(cpu="xeon"), "unknown CPU server 'xeon'"),
        (lambda d: d["inference"].update(accelerator="tpu"), "unknown accelerator 'tpu'"),
        (lambda d: d["inference"].update(allocation={"encoder": 2}), "no such stage"),
        (lambda d: d["sequence"].update(question=600), "exceed the prompt"),
        (lambda d: d["retrieval"].update(per_request=300), "while decoding 256 tokens"),
        (lambda d: d.update(load=1.0), r"load: must be below 1"),
    ],
)
def test_bad_descriptions_name_the_key(edit, match):
    d = base()
    edit(d)
    with pytest.raises(FannsError, match=match) as exc:
        parse(d, "RAG.yaml")
    assert str(exc.value).startswith("RAG.yaml: ")


def test_numbers_written_as_text_are_read():
    d = base()
    d["retrieval"]["database"]["vectors"] = "64e9"  # PyYAML reads 64e9 (no dot) as text
    assert parse(d).retrieval.database.vectors == 64e9


# -- the pipeline ---------------------------------------------------------------------------------
CPU = RooflineServers("cpu", CPU_SERVERS["epyc-milan"])


def test_allocation_and_equal_throughput():
    pipe = Pipeline(parse(base()))
    assert sum(pipe.chips.values()) <= 64 and all(c >= pipe.work[s].group for s, c in pipe.chips.items())
    o = pipe.outcome(CPU)
    assert o.units == pipe.retrieval_demand(CPU) == CPU.units_for_qps(pipe.capacity, DB)
    assert o.rps == pytest.approx(pipe.capacity) and o.bottleneck != "retrieval"
    starved = pipe.outcome(CPU, 16)
    assert starved.bottleneck == "retrieval" and starved.rps < o.rps
    with pytest.raises(FannsError, match="cannot hold the database"):
        pipe.outcome(CPU, 15)
    d = base()
    d["inference"]["chips"] = 1
    with pytest.raises(FannsError, match="need at least 2"):
        Pipeline(parse(d))


def test_ttft_tpot_and_share():
    pipe = Pipeline(parse(base()))
    o = pipe.outcome(CPU, 32)
    first = [s for s in o.stages if s.first_token]
    assert [s.name for s in first] == ["retrieval", "prefill"]
    assert o.ttft == pytest.approx(sum(s.seconds for s in first))
    assert o.stage("retrieval").seconds == pytest.approx(CPU.batch_seconds(32, DB, 1))
    r = CPU.unit_seconds(DB)
    i = (o.stage("prefill").cost + o.stage("decode").cost) / 4
    assert o.retrieval_share == pytest.approx(r / (r + i))
    assert o.balanced_rps_per_chip == pytest.approx(1 / (4 * max(r, i)))
    d = pipe.work["decode"]
    assert o.tpot == pytest.approx(decode_step_seconds(pipe.spec.llm, Chips(XPU, d.group), d.batch, 768))


def test_load_adds_batching_and_queueing_waits():
    d = base()
    d["batch"] = {"prefill": 4}
    idle = Pipeline(parse(d)).outcome(CPU, 64)
    d["load"] = 0.9
    busy_pipe = Pipeline(parse(d))
    busy = busy_pipe.outcome(CPU, 64)
    pre = busy.stage("prefill")
    lam = busy_pipe.load_rps
    rho = lam / pre.throughput
    assert pre.wait == pytest.approx(3 / (2 * lam) + rho / (2 * (1 - rho)) * pre.seconds)
    assert busy.ttft > idle.ttft
    assert math.isinf(busy_pipe.outcome(CPU, 16).ttft)  # 16 servers cannot take 90 % of the inference rate


def test_same_ttft_search():
    pipe = Pipeline(parse(base()))
    target = pipe.outcome(CPU, 200).ttft
    n = pipe.units_for_ttft(CPU, target, pipe.retrieval_demand(CPU))
    assert pipe.outcome(CPU, n).ttft <= target < pipe.outcome(CPU, n - 1).ttft
    assert pipe.units_for_ttft(sharded(1e5), 1e-9, 64_000) is None  # below the latency floor


def test_iterative_retrievals_slow_decoding():
    d = base()
    d["retrieval"]["per_request"] = 4
    d["batch"] = {"decode": 64, "iterative": 16}
    o = Pipeline(parse(d)).outcome(CPU)
    assert o.decode_slowdown > iterative.slowdown(64, 16, 3, 256)  # retrieval and prefill take time too
    assert o.stage("retrieval").cost == pytest.approx(4 * CPU.unit_seconds(DB))


# -- fanns designs and faiss-cpu as retrieval units -------------------------------------------------
@pytest.fixture(scope="module")
def design_path(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("rag-design")
    data = random_index(d=32, m=8, n=2000, nlist=16)
    design = pinned_design(data, random_format(32, 8), nprobe=4, k=10, pq=(4, 2))
    design.save(folder / "design.yaml")
    return folder


def test_a_design_as_retrieval_units(design_path):
    u = design_units(design_path, "u55c")
    assert u.shard_vectors == 2000 and u.kind == "fpga" and u.unit_qps > 0
    assert "synthetic probes" in u.detail["probes"]
    bigger = design_units(design_path / "design.yaml", "u55c", shard_vectors=200_000)
    assert bigger.unit_qps < u.unit_qps and bigger.detail["scan_bytes_per_query"] > u.detail["scan_bytes_per_query"]
    with pytest.raises(FannsError, match="busiest PQ channel"):
        design_units(design_path, "u55c", shard_vectors=10**10)
    with pytest.raises(FannsError, match="no design file"):
        design_units(design_path / "missing", "u55c")
    db = Database(1e6, 16, 0.25, 32, 10)
    outcome = Pipeline(parse(base())).outcome(u)
    assert outcome.units == u.units_for_qps(Pipeline(parse(base())).capacity, DB)
    assert u.shards(db) == 500


def test_faiss_measured_on_the_design_index(tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "data").mkdir()
    base_vectors = rng.standard_normal((3000, 32)).astype(np.float32)
    np.save(tmp_path / "data" / "base.npy", base_vectors)
    np.save(tmp_path / "data" / "query.npy", rng.standard_normal((40, 32)).astype(np.float32))
    index = faiss.index_factory(32, "IVF16,PQ8x4")  # 4-bit codes train in a second (8-bit: ~20 s here)
    index.train(base_vectors)
    index.add(base_vectors)
    faiss.write_index(index, str(tmp_path / "index.faissindex"))
    design = pinned_design(
        random_index(d=32, m=8, n=3000, nlist=16),
        random_format(32, 8),
        nprobe=4,
        k=10,
        pq=(4, 2),
        index_path="index.faissindex",
    )
    design.save(tmp_path / "design.yaml")
    server = CPU_SERVERS["epyc-milan"]
    u = faiss_units(tmp_path, str(tmp_path / "data"), "faiss", server)
    one = u.detail["qps_one_thread"]
    assert u.kind == "cpu" and u.shard_vectors == 3000 and len(u.latency_s) == 40
    assert u.unit_qps == pytest.approx(min(96 * one, u.detail["server_qps_memory"]), rel=1e-3)


# -- fanns rag ------------------------------------------------------------------------------------
def test_rag_command(tmp_path, design_path, capsys):
    d = base()
    d["retrieval"]["database"].update(vectors=4000, bytes_per_vector=8, scan_fraction=0.25, dim=32)
    d["retrieval"]["hardware"].append({"name": "u55c", "design": str(design_path)})
    path = tmp_path / "rag.yaml"
    path.write_text(yaml.safe_dump(d))
    assert main(["rag", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [o["option"] for o in doc["options"]] == ["cpu", "u55c"]
    (c,) = doc["comparison"]
    assert c["option"] == "u55c" and c["reference"] == "cpu" and c["units"] == 2  # two shards of 2000
    assert main(["rag", str(path)]) == 0
    text = capsys.readouterr().out
    assert "the pipeline with each retrieval option" in text and "at equal throughput" in text
    bad = copy.deepcopy(d)
    bad["llm"]["layers"] = -1
    path.write_text(yaml.safe_dump(bad))
    assert main(["rag", str(path)]) == 2
    assert "llm.layers: must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "rag").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_runs(path, capsys):
    """Each shipped description runs through `fanns rag`, tables and JSON, every option finite."""
    assert main(["rag", str(path)]) == 0
    assert "the pipeline with each retrieval option" in capsys.readouterr().out
    assert main(["rag", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    given = yaml.safe_load(path.read_text())["retrieval"]["hardware"]
    assert [o["option"] for o in doc["options"]] == [h["name"] for h in given]
    assert all(o["ttft_seconds"] and o["rps"] > 0 for o in doc["options"])
    options = {o["option"]: o for o in doc["options"]}
    for c in doc["comparison"]:  # only options of different units are compared
        assert options[c["option"]]["retrieval"] != options[c["reference"]]["retrieval"]


def test_a_second_option_of_the_reference_unit_is_not_compared():
    """Two options of the same CPU server (given counts differ): at equal throughput they are one
    option, so no 'N replace N' sentence."""
    d = base()
    d["retrieval"]["hardware"].append({"name": "cpu-32", "cpu": "epyc-milan", "count": 32})
    doc = document(parse(d), {"cpu": CPU, "cpu-32": RooflineServers("cpu-32", CPU_SERVERS["epyc-milan"])})
    assert [o["option"] for o in doc["options"]] == ["cpu", "cpu-32"] and doc["comparison"] == []


def test_document_is_deterministic_json():
    spec = parse(base())
    one = json.dumps(document(spec, {"cpu": CPU}), sort_keys=True)
    assert one == json.dumps(document(spec, {"cpu": CPU}), sort_keys=True)
    assert "Infinity" not in one and "NaN" not in one
