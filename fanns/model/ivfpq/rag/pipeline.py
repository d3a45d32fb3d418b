"""The RAG pipeline: every stage's time and cost, assembled into TTFT, TPOT, throughput, the
bottleneck and the share of time spent retrieving, for each retrieval hardware option.

Stages, in request order (docs/rag.md has the equations): the optional query rewriter (prefill
the question, generate its rewrite), the optional encoder (`tokens` for each retrieval, in
sequences of `chunk`: a query encoder, or a database encoder of an uploaded context), the
retrieval (`queries` query vectors, `per_request` times a request: the first before the prefill,
the others while decoding), the optional reranker (its `candidates` passages after
each retrieval), the prefill of the prompt (and of the `retrieved_tokens` each later retrieval
adds) and the decode. Each inference stage runs on replicas of `group` chips (the fewest that
hold its weights and KV cache, unless `inference.tensor_parallel` says otherwise) at its batch
size; the retrieval stage on the option's units.

* Cost of a stage: resource-seconds per request (chip-seconds, or retrieval unit-seconds).
* Throughput of a stage: requests/s its resources sustain; the pipeline's is the lowest (RAGO
  section 3.3: the slowest stage), which is the bottleneck.
* Allocation: unless `inference.allocation` fixes it, every inference stage starts with one
  group and the stage of lowest throughput takes another group while chips remain.
* Retrieval units: unless the option gives `count`, the fewest that sustain the inference
  stages' throughput (and hold the database): the count "at equal throughput".
* TTFT: the sum, over the stages before the first token, of one batch's time, plus, at an
  offered load lambda = load x the inference stages' throughput, the wait to fill a batch,
  (b - 1) / (2 lambda), and the M/D/1 queueing wait rho / (2 (1 - rho)) x the batch's time,
  rho = lambda / the stage's throughput.
* TPOT: the decode step with every sequence at its longest context (RAGO reports the worst case
  under continuous batching), times the slowdown of iterative retrievals
  (`fanns.model.ivfpq.rag.iterative`: sequences pause for a batched retrieval, its rerank and the
  prefill of what it returned).
* Retrieval share, as RAGO's time breakdowns (its section 5): each stage's time normalised by
  the resources it holds, with a host server holding `inference.per_host` chips and `per_host`
  retrieval units (its CPU: 1): R / (R + I), R = retrieval unit-seconds per request / units per
  host, I = chip-seconds per request of all inference stages / chips per host. Above 50 %,
  a host's retrieval is slower than its chips' inference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from fanns.errors import FannsError
from fanns.model.ivfpq.rag import iterative
from fanns.model.ivfpq.rag.inference import (
    Chips,
    Transformer,
    decode_step_seconds,
    generate_seconds,
    kv_bytes,
    max_decode_batch,
    min_chips,
    prefill_seconds,
)
from fanns.model.ivfpq.rag.retrieval import Units
from fanns.model.ivfpq.rag.schema import RagSpec

MAX_DECODE_BATCH = 1024
"""Largest decode batch the model picks by itself (RAGO sweeps decode batches 1 to 1024)."""
SEARCH_LIMIT = 1 << 40
"""Retrieval unit counts searched up to this many for "the same TTFT"."""


@dataclass(frozen=True)
class StageTime:
    """One stage with its resources: `seconds` is one batch on one replica (decode: one step at
    the mean context); `cost` resource-seconds per request; `throughput` requests/s."""

    name: str
    hardware: str
    units: int
    group: int
    batch: int
    seconds: float
    cost: float
    throughput: float
    first_token: bool
    wait: float = 0.0  # batching + queueing wait at the offered load (TTFT stages)

    def as_dict(self) -> dict:
        return {
            "stage": self.name,
            "hardware": self.hardware,
            "units": self.units,
            "group": self.group,
            "batch": self.batch,
            "batch_seconds": self.seconds,
            "cost_seconds_per_request": self.cost,
            "throughput_rps": self.throughput,
            "first_token": self.first_token,
            "wait_seconds": self.wait,
        }


@dataclass(frozen=True)
class Outcome:
    """The pipeline with one retrieval option."""

    option: str
    kind: str
    units: int
    stages: tuple[StageTime, ...]
    rps: float
    bottleneck: str
    ttft: float
    tpot: float
    request_seconds: float
    retrieval_share: float
    ttft_retrieval_share: float
    rps_per_chip: float
    balanced_rps_per_chip: float
    load_rps: float
    retrieval: dict = field(default_factory=dict)
    decode_slowdown: float = 1.0

    def stage(self, name: str) -> StageTime:
        return next(s for s in self.stages if s.name == name)

    def as_dict(self) -> dict:
        return {
            "option": self.option,
            "kind": self.kind,
            "units": self.units,
            "rps": self.rps,
            "bottleneck": self.bottleneck,
            "ttft_seconds": self.ttft,
            "tpot_seconds": self.tpot,
            "request_seconds": self.request_seconds,
            "retrieval_share": self.retrieval_share,
            "ttft_retrieval_share": self.ttft_retrieval_share,
            "rps_per_chip": self.rps_per_chip,
            "balanced_rps_per_chip": self.balanced_rps_per_chip,
            "load_rps": self.load_rps,
            "decode_slowdown": self.decode_slowdown,
            "retrieval": self.retrieval,
            "stages": [s.as_dict() for s in self.stages],
        }


@dataclass(frozen=True)
class Work:
    """An inference stage before allocation: its group, batch, one batch's seconds and its cost."""

    name: str
    group: int
    batch: int
    seconds: float
    cost: float


class Pipeline:
    """The inference side of a RAG description, evaluated once; `outcome(option)` adds a
    retrieval option."""

    def __init__(self, spec: RagSpec):
        self.spec = spec
        self.acc = spec.inference.accelerator
        self.work = {w.name: w for w in self._inference_work(delay_steps=0.0)}
        self.chips = self._allocate()
        self.capacity = min(self._rps(self.work[s]) for s in self.work)
        self.load_rps = spec.load * self.capacity

    # -- inference ---------------------------------------------------------------------------
    def _group(self, stage: str, model: Transformer, kv_needed: float) -> int:
        need = min_chips(model, self.acc, kv_needed, f"{self.spec.name}: {stage}")
        given = self.spec.inference.tensor_parallel.get(stage)
        if given is None:
            return need
        if given < need:
            raise FannsError(
                f"inference.tensor_parallel.{stage}: {given} {self.acc.name} chip(s) cannot hold the {stage} stage's "
                f"weights and KV cache ({(model.weight_bytes + kv_needed) / 1e9:,.1f} GB)",
                hint=f"at least {need}, or a smaller batch",
            )
        return given

    def _decode_batch(self, group: int) -> int:
        s, llm = self.spec, self.spec.llm
        tokens = s.sequence.prompt + s.sequence.generated
        fits = max_decode_batch(llm, Chips(self.acc, group), tokens, 1 << 62)
        want = s.batch["decode"]
        if want is None:
            return max(1, min(MAX_DECODE_BATCH, fits))
        if want > fits:
            raise FannsError(
                f"batch.decode: {want} sequences of {tokens} tokens need "
                f"{kv_bytes(llm, want, tokens) / 1e9:,.1f} GB of KV cache; {group} {self.acc.name} chip(s) hold "
                f"{fits} beside the weights",
                hint=f"at most {fits}, or more chips per replica (inference.tensor_parallel.decode)",
            )
        return want

    def _inference_work(self, delay_steps: float) -> list[Work]:
        s = self.spec
        seq, ret, b = s.sequence, s.retrieval, s.batch
        out = []
        if s.rewriter is not None:
            m, bt = s.rewriter.model, b["rewriter"]
            g = self._group("rewriter", m, kv_bytes(m, bt, seq.question + s.rewriter.generated))
            sec = generate_seconds(m, Chips(self.acc, g), bt, seq.question, s.rewriter.generated)
            out.append(Work("rewriter", g, bt, sec, g * sec / bt))
        if s.encoder is not None:
            m, bt = s.encoder.model, b["encoder"]
            g = self._group("encoder", m, 0.0)
            chunks = math.ceil(s.encoder.tokens / s.encoder.chunk)
            sec = prefill_seconds(m, Chips(self.acc, g), bt * chunks, s.encoder.chunk)
            out.append(Work("encoder", g, bt, sec, g * sec * s.retrieval.per_request / bt))
        if s.reranker is not None:
            out.append(self._rerank_work(b["reranker"]))
        bt, bi = b["prefill"], b["iterative"]
        g = self._group("prefill", s.llm, kv_bytes(s.llm, max(bt, bi), seq.prompt + seq.generated))
        chips = Chips(self.acc, g)
        sec = prefill_seconds(s.llm, chips, bt, seq.prompt)
        later = prefill_seconds(s.llm, chips, bi, ret.retrieved_tokens, seq.prompt + seq.generated / 2)
        out.append(Work("prefill", g, bt, sec, g * (sec / bt + (ret.per_request - 1) * later / bi)))
        g = self._group("decode", s.llm, kv_bytes(s.llm, 1, seq.prompt + seq.generated))
        batch = self._decode_batch(g)
        step = decode_step_seconds(s.llm, Chips(self.acc, g), batch, seq.prompt + seq.generated / 2)
        slow = iterative.slowdown(batch, bi, ret.per_request - 1, seq.generated, delay_steps)
        out.append(Work("decode", g, batch, step, g * seq.generated * step * slow / batch))
        order = s.stages()
        return sorted(out, key=lambda w: order.index(w.name))

    def _rerank_work(self, batch: int) -> Work:
        rr = self.spec.reranker
        g = self._group("reranker", rr.model, 0.0)
        sec = prefill_seconds(rr.model, Chips(self.acc, g), batch * rr.candidates, rr.tokens_per_candidate)
        return Work("reranker", g, batch, sec, g * sec * self.spec.retrieval.per_request / batch)

    def _rps(self, w: Work, chips: int | None = None) -> float:
        c = self.chips[w.name] if chips is None else chips
        return (c // w.group) * w.group / w.cost

    def _allocate(self) -> dict[str, int]:
        """Chips per inference stage (see the module docstring)."""
        inf = self.spec.inference
        given = dict(inf.allocation)
        for name, c in given.items():
            need = self.work[name].group
            if c < need:
                raise FannsError(
                    f"inference.allocation.{name}: {c} chip(s), but one replica of the stage needs {need}",
                    hint=f"give it at least {need}",
                )
        chips = {name: given.get(name, w.group) for name, w in self.work.items()}
        if sum(chips.values()) > inf.chips:
            raise FannsError(
                f"inference.chips: {inf.chips} {self.acc.name} chip(s), the stages need at least {sum(chips.values())} "
                f"({', '.join(f'{k} {v}' for k, v in chips.items())})",
                hint=f"raise inference.chips to {sum(chips.values())} or more",
            )
        free = inf.chips - sum(chips.values())
        auto = [n for n in self.work if n not in given]
        total_cost = sum(self.work[n].cost for n in auto) or 1.0
        for n in auto:  # a proportional start, then one group at a time to the slowest stage
            w = self.work[n]
            extra = int(free * w.cost / total_cost) // w.group * w.group
            chips[n] += extra
        free = inf.chips - sum(chips.values())
        while auto:
            n = min(auto, key=lambda n: (self._rps(self.work[n], chips[n]), n))
            if self.work[n].group > free:
                break
            chips[n] += self.work[n].group
            free -= self.work[n].group
        return chips

    # -- with a retrieval option ----------------------------------------------------------------
    def retrieval_demand(self, option: Units) -> int:
        """Retrieval units sustaining the inference stages' throughput ("equal throughput")."""
        ret = self.spec.retrieval
        return option.units_for_qps(self.capacity * ret.queries * ret.per_request, ret.database)

    def _retrieval_stage(self, option: Units, units: int) -> StageTime:
        ret, b = self.spec.retrieval, self.spec.batch["retrieval"]
        db = ret.database
        sec = option.batch_seconds(units, db, b * ret.queries)
        rps = option.qps(units, db) / (ret.queries * ret.per_request)
        cost = option.unit_seconds(db) * ret.queries * ret.per_request
        return StageTime("retrieval", option.name, units, 1, b, sec, cost, rps, True)

    def _wait(self, seconds: float, batch: int, rps: float) -> float:
        lam = self.load_rps
        if lam <= 0:
            return 0.0
        rho = lam / rps
        if rho >= 1:
            return math.inf
        return (batch - 1) / (2 * lam) + rho / (2 * (1 - rho)) * seconds

    def ttft(self, stages: tuple[StageTime, ...]) -> float:
        return sum(s.seconds + s.wait for s in stages if s.first_token)

    def outcome(self, option: Units, units: int | None = None) -> Outcome:
        """The pipeline with `units` of the option (None: the count at equal throughput)."""
        s = self.spec
        ret, seq, db = s.retrieval, s.sequence, s.retrieval.database
        units = self.retrieval_demand(option) if units is None else units
        if units < option.min_units(db):
            raise FannsError(
                f"{option.name}: {units} unit(s) cannot hold the database ({db.vectors:,.0f} vectors)",
                hint=f"count at least {option.min_units(db)}, or leave count out (auto)",
            )
        retrieval = self._retrieval_stage(option, units)
        work = dict(self.work)
        if ret.per_request > 1:  # the decode slots wait for batched retrievals, reranks and prefills
            bi = s.batch["iterative"]
            delay = option.batch_seconds(units, db, bi * ret.queries)
            if s.reranker is not None:
                delay += self._rerank_work(bi).seconds
            g = work["prefill"].group
            delay += prefill_seconds(
                s.llm, Chips(self.acc, g), bi, ret.retrieved_tokens, seq.prompt + seq.generated / 2
            )
            d = work["decode"]
            slow = iterative.slowdown(d.batch, bi, ret.per_request - 1, seq.generated, delay / d.seconds)
            work["decode"] = replace(d, cost=d.group * seq.generated * d.seconds * slow / d.batch)
        else:
            slow = 1.0
        stages = []
        for name in s.stages():
            if name == "retrieval":
                st = retrieval
            else:
                w = work[name]
                st = StageTime(
                    name,
                    self.acc.name,
                    self.chips[name],
                    w.group,
                    w.batch,
                    w.seconds,
                    w.cost,
                    self._rps(w),
                    name != "decode",
                )
            stages.append(replace(st, wait=self._wait(st.seconds, st.batch, st.throughput) if st.first_token else 0.0))
        stages_t = tuple(stages)
        rps = min(st.throughput for st in stages_t)
        bottleneck = min(stages_t, key=lambda st: st.throughput).name
        ttft = self.ttft(stages_t)
        d = work["decode"]
        tpot = decode_step_seconds(s.llm, Chips(self.acc, d.group), d.batch, seq.prompt + seq.generated) * slow
        mean_tpot = d.seconds * slow
        inference_cost = sum(st.cost for st in stages_t if st.name != "retrieval")
        r = retrieval.cost / option.per_host
        i = inference_cost / s.inference.per_host
        first = retrieval.seconds + retrieval.wait
        return Outcome(
            option=option.name,
            kind=option.kind,
            units=units,
            stages=stages_t,
            rps=rps,
            bottleneck=bottleneck,
            ttft=ttft,
            tpot=tpot,
            request_seconds=ttft + seq.generated * mean_tpot,
            retrieval_share=r / (r + i),
            ttft_retrieval_share=first / ttft if math.isfinite(ttft) and ttft > 0 else math.nan,
            rps_per_chip=rps / s.inference.chips,
            balanced_rps_per_chip=1.0 / (s.inference.per_host * max(r, i)),
            load_rps=self.load_rps,
            retrieval=option.describe(db),
            decode_slowdown=slow,
        )

    # -- comparisons ------------------------------------------------------------------------------
    def units_for_ttft(self, option: Units, target: float, start: int) -> int | None:
        """The fewest units (from `start`) whose TTFT is at most `target`; None if no count up to
        `SEARCH_LIMIT` reaches it (the retrieval latency's floor lies above)."""

        def ttft(n: int) -> float:
            st = self._retrieval_stage(option, n)
            st = replace(st, wait=self._wait(st.seconds, st.batch, st.throughput))
            rest = sum(x.seconds + x.wait for x in self._first_token_inference())
            return rest + st.seconds + st.wait

        lo = start
        if ttft(lo) <= target:
            return lo
        hi, prev = 2 * lo, ttft(lo)
        while ttft(hi) > target:
            now = ttft(hi)
            if hi >= SEARCH_LIMIT or now >= prev * (1 - 1e-9):
                return None
            lo, hi, prev = hi, 2 * hi, now
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ttft(mid) <= target else (mid, hi)
        return hi

    def _first_token_inference(self) -> list[StageTime]:
        out = []
        for name, w in self.work.items():
            if name == "decode":
                continue
            st = StageTime(
                name, self.acc.name, self.chips[name], w.group, w.batch, w.seconds, w.cost, self._rps(w), True
            )
            out.append(replace(st, wait=self._wait(st.seconds, st.batch, st.throughput)))
        return out


def comparison(pipe: Pipeline, outcomes: dict[str, Outcome], options: dict[str, Units]) -> list[dict]:
    """ "N units of each option replace M of the reference (the first CPU option) at equal
    throughput, and at the same TTFT" (see the module docstring); [] without a CPU option or
    with nothing to compare it with. An option of the reference's own unit (the same server
    given another count) is left out: at equal throughput it is the reference."""
    refs = [n for n, o in outcomes.items() if o.kind == "cpu"]
    if not refs:
        return []
    ref = refs[0]
    ref_units = pipe.retrieval_demand(options[ref])
    db = pipe.spec.retrieval.database
    out = []
    for name in outcomes:
        if name == ref or options[name].describe(db) == options[ref].describe(db):
            continue
        equal = pipe.retrieval_demand(options[name])
        ref_o = pipe.outcome(options[ref], ref_units)
        own = pipe.outcome(options[name], equal)
        if own.ttft <= ref_o.ttft:
            faster, slower, target = name, ref, own.ttft
            need = pipe.units_for_ttft(options[ref], target, ref_units)
        else:
            faster, slower, target = ref, name, ref_o.ttft
            need = pipe.units_for_ttft(options[name], target, equal)
        out.append(
            {
                "option": name,
                "reference": ref,
                "rps": pipe.capacity,
                "units": equal,
                "reference_units": ref_units,
                "ttft_seconds": own.ttft,
                "reference_ttft_seconds": ref_o.ttft,
                "same_ttft": {"faster": faster, "slower": slower, "target_seconds": target, "slower_units": need},
            }
        )
    return out
