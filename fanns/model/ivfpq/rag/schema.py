"""The RAG description a user writes (RAG.yaml), read and validated once, where it enters.

In the spirit of RAGO's RAGSchema (its section 3.2 and Table 3): the generative LLM, the
sequence lengths, how often and with how many query vectors the pipeline retrieves, the optional
query rewriter, query/database encoder and reranker, the inference hardware, and the retrieval
hardware to compare. docs/rag.md lists every key; `examples/rag/*.yaml` are complete
descriptions. Every error names the file and the key (``RAG.yaml: llm.layers: must be ...``) and
says how to fix it. Numbers may be written as YAML numbers or as text a float parses (PyYAML
reads ``64e9`` without a decimal point as text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fanns.checks import check_name, check_number, check_text
from fanns.errors import FannsError
from fanns.model.ivfpq.rag.hardware import ACCELERATORS, CPU_SERVERS, Accelerator, CpuServer, named
from fanns.model.ivfpq.rag.inference import Transformer
from fanns.model.ivfpq.rag.retrieval import Database

STAGES = ("rewriter", "encoder", "retrieval", "reranker", "prefill", "decode")
"""The pipeline's stages in request order; all but retrieval run on the inference accelerators."""
INFERENCE_STAGES = tuple(s for s in STAGES if s != "retrieval")
BATCHED = (*STAGES, "iterative")
"""Stages with a batch size (`iterative`: the retrievals made while decoding, and their prefill)."""
DEFAULT_QUESTION = 32
"""Tokens of the user's question when `sequence.question` is not given (RAGO section 4)."""
DEFAULT_K = 10
"""Results per query when `retrieval.database.k` is not given (sets only the result message size)."""
DEFAULT_PER_HOST = 4
"""Accelerators per host server (RAGO section 5: four XPUs per host)."""
MAX_COUNT = 1 << 30


@dataclass(frozen=True)
class Sequence:
    question: int
    prompt: int
    generated: int


@dataclass(frozen=True)
class Encoder:
    """A query or database encoder: `tokens` encoded for each retrieval, in sequences of `chunk` tokens."""

    model: Transformer
    tokens: int
    chunk: int


@dataclass(frozen=True)
class Rewriter:
    model: Transformer
    generated: int


@dataclass(frozen=True)
class Reranker:
    model: Transformer
    candidates: int
    tokens_per_candidate: int


@dataclass(frozen=True)
class HardwareOption:
    """One retrieval hardware option: `kind` "cpu" (RAGO roofline), "fanns" (a design) or "faiss"
    (faiss-cpu measured on a design's index with a dataset's queries); `count` None: sized by the
    model (equal throughput)."""

    name: str
    kind: str
    count: int | None
    per_host: int
    server: CpuServer | None = None
    design: Path | None = None
    dataset: str | None = None
    shard_vectors: int | None = None


@dataclass(frozen=True)
class Retrieval:
    per_request: int
    queries: int
    retrieved_tokens: int
    database: Database
    hardware: tuple[HardwareOption, ...]


@dataclass(frozen=True)
class Inference:
    accelerator: Accelerator
    chips: int
    per_host: int
    allocation: dict[str, int] = field(default_factory=dict)
    tensor_parallel: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RagSpec:
    name: str
    llm: Transformer
    sequence: Sequence
    retrieval: Retrieval
    inference: Inference
    batch: dict[str, int | None]
    load: float
    encoder: Encoder | None = None
    rewriter: Rewriter | None = None
    reranker: Reranker | None = None

    def stages(self) -> tuple[str, ...]:
        """The stages this pipeline has, in request order."""
        extra = {"rewriter": self.rewriter, "encoder": self.encoder, "reranker": self.reranker}
        return tuple(s for s in STAGES if extra.get(s, True) is not None)


class Reader:
    """Validation helpers whose errors name the file and the key."""

    def __init__(self, source: str, base: Path):
        self.source, self.base = source, base

    def fail(self, where: str, message: str, hint: str | None = None):
        raise FannsError(f"{self.source}: {where}: {message}", hint=hint)

    def mapping(self, where: str, data: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
        if not isinstance(data, dict):
            self.fail(where, f"must be a mapping, got {type(data).__name__}")
        unknown = sorted(str(k) for k in set(data) - set(required) - set(optional))
        if unknown:
            self.fail(f"{where}.{unknown[0]}", "unknown key", hint=f"allowed keys: {', '.join(required + optional)}")
        missing = [k for k in required if k not in data]
        if missing:
            self.fail(f"{where}.{missing[0]}", "missing key", hint="docs/rag.md describes every key")
        return data

    def number(self, where: str, value: Any, *, integer: bool = False, **limits: Any) -> Any:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                self.fail(where, f"must be a number, got {value!r}")
        if integer and isinstance(value, float) and value.is_integer():
            value = int(value)
        try:
            return check_number(value, "the value", integer=integer, **limits)
        except FannsError as exc:
            self.fail(where, exc.message.removeprefix("the value "), hint=exc.hint)

    def count(self, where: str, value: Any, lo: int = 1) -> int:
        return self.number(where, value, integer=True, lo=lo, hi=MAX_COUNT)

    def positive(self, where: str, value: Any) -> float:
        return float(self.number(where, value, lo=0, lo_open=True))

    def name(self, where: str, value: Any) -> str:
        try:
            return check_name(value, "the value")
        except FannsError as exc:
            self.fail(where, exc.message.removeprefix("the value "), hint=exc.hint)

    def path(self, where: str, value: Any) -> Path:
        try:
            text = check_text(value, "the value")
        except FannsError as exc:
            self.fail(where, exc.message.removeprefix("the value "), hint=exc.hint)
        return self.base / text


MODEL_KEYS = ("parameters", "layers", "hidden", "bytes_per_weight")


def read_model(r: Reader, where: str, data: dict, kv: bool) -> Transformer:
    return Transformer(
        name=r.name(f"{where}.name", data["name"]) if "name" in data else where,
        parameters=r.positive(f"{where}.parameters", data["parameters"]),
        layers=r.count(f"{where}.layers", data["layers"]),
        hidden=r.count(f"{where}.hidden", data["hidden"]),
        bytes_per_weight=r.positive(f"{where}.bytes_per_weight", data["bytes_per_weight"]),
        kv_bytes_per_token=r.positive(f"{where}.kv_bytes_per_token", data["kv_bytes_per_token"]) if kv else 0.0,
    )


def read_accelerator(r: Reader, data: Any) -> Accelerator:
    where = "inference.accelerator"
    if isinstance(data, str):
        return named(ACCELERATORS, data, "accelerator", f"{r.source}: {where}")
    d = r.mapping(where, data, ("tflops", "memory_gb_s", "memory_gb"), ("name", "source"))
    return Accelerator(
        name=r.name(f"{where}.name", d["name"]) if "name" in d else "custom",
        flops=r.positive(f"{where}.tflops", d["tflops"]) * 1e12,
        bandwidth=r.positive(f"{where}.memory_gb_s", d["memory_gb_s"]) * 1e9,
        memory=r.positive(f"{where}.memory_gb", d["memory_gb"]) * 1e9,
        source=check_text(d.get("source", "given in the RAG description"), f"{where}.source"),
    )


def read_server(r: Reader, where: str, data: Any) -> CpuServer:
    if isinstance(data, str):
        return named(CPU_SERVERS, data, "CPU server", f"{r.source}: {where}")
    keys = ("cores", "core_scan_gb_s", "memory_gb_s", "memory_efficiency", "memory_gb")
    d = r.mapping(where, data, keys, ("name", "source"))
    return CpuServer(
        name=r.name(f"{where}.name", d["name"]) if "name" in d else "custom",
        cores=r.count(f"{where}.cores", d["cores"]),
        core_scan=r.positive(f"{where}.core_scan_gb_s", d["core_scan_gb_s"]) * 1e9,
        bandwidth=r.positive(f"{where}.memory_gb_s", d["memory_gb_s"]) * 1e9,
        efficiency=float(r.number(f"{where}.memory_efficiency", d["memory_efficiency"], lo=0, lo_open=True, hi=1)),
        memory=r.positive(f"{where}.memory_gb", d["memory_gb"]) * 1e9,
        source=check_text(d.get("source", "given in the RAG description"), f"{where}.source"),
    )


def read_option(r: Reader, i: int, data: Any) -> HardwareOption:
    where = f"retrieval.hardware[{i}]"
    kinds = ("cpu", "design", "faiss")
    d = r.mapping(where, data, ("name",), (*kinds, "count", "per_host", "shard_vectors"))
    given = [k for k in kinds if k in d]
    if len(given) != 1:
        r.fail(
            where,
            f"needs exactly one of {', '.join(kinds)}, got {', '.join(given) or 'none'}",
            hint="cpu: a CPU server (RAGO roofline); design: a fanns design.yaml; "
            "faiss: {design, dataset} to measure faiss-cpu on that design's index",
        )
    name = r.name(f"{where}.name", d["name"])
    count = None if d.get("count", "auto") == "auto" else r.count(f"{where}.count", d["count"])
    per_host = r.count(f"{where}.per_host", d.get("per_host", 1))
    if "shard_vectors" in d and "design" not in d:
        r.fail(f"{where}.shard_vectors", "applies to a design option only")
    if "cpu" in d:
        return HardwareOption(name, "cpu", count, per_host, server=read_server(r, f"{where}.cpu", d["cpu"]))
    if "design" in d:
        shard = r.count(f"{where}.shard_vectors", d["shard_vectors"]) if "shard_vectors" in d else None
        return HardwareOption(
            name, "fanns", count, per_host, design=r.path(f"{where}.design", d["design"]), shard_vectors=shard
        )
    f = r.mapping(f"{where}.faiss", d["faiss"], ("design", "dataset"), ("server",))
    return HardwareOption(
        name,
        "faiss",
        count,
        per_host,
        server=read_server(r, f"{where}.faiss.server", f.get("server", "epyc-milan")),
        design=r.path(f"{where}.faiss.design", f["design"]),
        dataset=check_text(f["dataset"], f"{where}.faiss.dataset"),
    )


def read_stage_counts(r: Reader, where: str, data: Any, stages: tuple[str, ...]) -> dict[str, int]:
    d = r.mapping(where, data or {}, (), INFERENCE_STAGES)
    out = {}
    for k, v in d.items():
        if k not in stages:
            r.fail(f"{where}.{k}", "this pipeline has no such stage", hint=f"its inference stages: {', '.join(stages)}")
        out[k] = r.count(f"{where}.{k}", v)
    return out


def parse(data: Any, source: str = "RAG.yaml", base: Path = Path(".")) -> RagSpec:
    """The RAG description from its YAML mapping (see the module docstring)."""
    r = Reader(source, base)
    top = r.mapping(
        "the file",
        data,
        ("llm", "sequence", "retrieval", "inference"),
        ("name", "encoder", "rewriter", "reranker", "batch", "load"),
    )
    llm = read_model(r, "llm", r.mapping("llm", top["llm"], (*MODEL_KEYS, "kv_bytes_per_token"), ("name",)), kv=True)
    s = r.mapping("sequence", top["sequence"], ("prompt", "generated"), ("question",))
    seq = Sequence(
        question=r.count("sequence.question", s.get("question", DEFAULT_QUESTION)),
        prompt=r.count("sequence.prompt", s["prompt"]),
        generated=r.count("sequence.generated", s["generated"]),
    )
    if seq.question > seq.prompt:
        r.fail(
            "sequence.question",
            f"{seq.question} tokens exceed the prompt's {seq.prompt}",
            hint="the prompt holds the question and the retrieved passages",
        )
    rt = r.mapping(
        "retrieval", top["retrieval"], ("database", "hardware"), ("per_request", "queries", "retrieved_tokens")
    )
    db = r.mapping(
        "retrieval.database", rt["database"], ("vectors", "bytes_per_vector", "scan_fraction", "dim"), ("k",)
    )
    database = Database(
        vectors=r.positive("retrieval.database.vectors", db["vectors"]),
        bytes_per_vector=r.positive("retrieval.database.bytes_per_vector", db["bytes_per_vector"]),
        scan_fraction=float(
            r.number("retrieval.database.scan_fraction", db["scan_fraction"], lo=0, lo_open=True, hi=1)
        ),
        dim=r.count("retrieval.database.dim", db["dim"]),
        k=r.count("retrieval.database.k", db.get("k", DEFAULT_K)),
    )
    hw = rt["hardware"]
    if not isinstance(hw, list) or not hw:
        r.fail(
            "retrieval.hardware",
            "must be a list of retrieval hardware options",
            hint="e.g. [{name: cpu, cpu: epyc-milan}, {name: u55c, design: dse/design.yaml}]",
        )
    options = tuple(read_option(r, i, o) for i, o in enumerate(hw))
    names = [o.name for o in options]
    if len(set(names)) != len(names):
        r.fail("retrieval.hardware", f"option names repeat: {', '.join(names)}", hint="give each option its own name")
    per_request = r.count("retrieval.per_request", rt.get("per_request", 1))
    if per_request - 1 >= seq.generated:
        r.fail(
            "retrieval.per_request",
            f"{per_request - 1} retrievals while decoding {seq.generated} tokens",
            hint="the retrievals after the first happen at distinct generated tokens",
        )
    retrieval = Retrieval(
        per_request=per_request,
        queries=r.count("retrieval.queries", rt.get("queries", 1)),
        retrieved_tokens=r.count(
            "retrieval.retrieved_tokens", rt.get("retrieved_tokens", max(1, seq.prompt - seq.question))
        ),
        database=database,
        hardware=options,
    )
    encoder = rewriter = reranker = None
    if "encoder" in top:
        e = r.mapping("encoder", top["encoder"], MODEL_KEYS, ("name", "tokens", "chunk"))
        default_tokens = seq.question * retrieval.queries
        encoder = Encoder(
            read_model(r, "encoder", e, kv=False),
            tokens=r.count("encoder.tokens", e.get("tokens", default_tokens)),
            chunk=r.count("encoder.chunk", e.get("chunk", seq.question)),
        )
    if "rewriter" in top:
        w = r.mapping("rewriter", top["rewriter"], (*MODEL_KEYS, "kv_bytes_per_token"), ("name", "generated"))
        rewriter = Rewriter(
            read_model(r, "rewriter", w, kv=True), r.count("rewriter.generated", w.get("generated", seq.question))
        )
    if "reranker" in top:
        k = r.mapping("reranker", top["reranker"], (*MODEL_KEYS, "candidates", "tokens_per_candidate"), ("name",))
        reranker = Reranker(
            read_model(r, "reranker", k, kv=False),
            candidates=r.count("reranker.candidates", k["candidates"]),
            tokens_per_candidate=r.count("reranker.tokens_per_candidate", k["tokens_per_candidate"]),
        )
    optional = {"rewriter": rewriter, "encoder": encoder, "reranker": reranker}
    spec_stages = tuple(s for s in INFERENCE_STAGES if optional.get(s, True) is not None)
    inf = r.mapping(
        "inference", top["inference"], ("accelerator", "chips"), ("per_host", "allocation", "tensor_parallel")
    )
    inference = Inference(
        accelerator=read_accelerator(r, inf["accelerator"]),
        chips=r.count("inference.chips", inf["chips"]),
        per_host=r.count("inference.per_host", inf.get("per_host", DEFAULT_PER_HOST)),
        allocation=read_stage_counts(r, "inference.allocation", inf.get("allocation"), spec_stages),
        tensor_parallel=read_stage_counts(r, "inference.tensor_parallel", inf.get("tensor_parallel"), spec_stages),
    )
    b = r.mapping("batch", top.get("batch") or {}, (), BATCHED)
    batch: dict[str, int | None] = {s: 1 for s in BATCHED}
    batch["decode"] = None  # the largest that fits (`fanns.model.ivfpq.rag.pipeline`)
    for k, v in b.items():
        batch[k] = None if (k == "decode" and v == "auto") else r.count(f"batch.{k}", v)
    load = float(r.number("load", top.get("load", 0.0), lo=0, hi=1, hi_open=True))
    return RagSpec(
        name=r.name("name", top["name"]) if "name" in top else default_name(source),
        llm=llm,
        sequence=seq,
        retrieval=retrieval,
        inference=inference,
        batch=batch,
        load=load,
        encoder=encoder,
        rewriter=rewriter,
        reranker=reranker,
    )


def default_name(source: str) -> str:
    """The description's file name without its extension, when it is a valid name; else "rag"."""
    stem = Path(source).stem
    try:
        return check_name(stem, "the name")
    except FannsError:
        return "rag"


def load(path: Path) -> RagSpec:
    """Read and validate RAG.yaml; paths inside it are relative to its folder."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise FannsError(f"{path}: cannot read the RAG description ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise FannsError(f"{path}: invalid YAML ({exc})") from None
    return parse(data, str(path), path.parent)
