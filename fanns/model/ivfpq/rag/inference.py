"""The time of a transformer's work on accelerator chips, by roofline per operator class.

Why per operator: RAGO's inference model (its section 4a) takes each operator's time as the
larger of its compute time and its memory time, T = max(F / P, D / B), and sums the operators.
Summing per operator, not taking one max over the whole model, is what makes decoding slower
than prefilling the same tokens: at a large batch the weight matmuls are compute-bound while
attention, which reads every sequence's KV cache, stays memory-bound.

Two operator classes per transformer (L layers, hidden size H, P parameters of `bytes_per_weight`
bytes, `kv_bytes_per_token` bytes of KV cache per token over all layers):

* weights (every matmul with a weight matrix): 2 P FLOPs per token; reads the P x bytes_per_weight
  weight bytes once per forward pass of the whole batch.
* attention (QK^T and AV): a token at position t attends to t + 1 tokens, 4 H (t + 1) FLOPs per
  layer; it reads the KV cache of those tokens (decode) or writes its own (prefill).

Prefill of `tokens` new tokens per sequence after `context` cached ones, batch b:
  weights:   F = 2 P b tokens,                           D = P bytes_per_weight
  attention: F = 2 L H b tokens (2 context + tokens),    D = kv b (context + tokens)
One decode step (one token for each of b sequences holding `context` tokens):
  weights:   F = 2 P b,                                  D = P bytes_per_weight
  attention: F = 4 L H b context,                        D = kv b context
A group of g chips runs one model replica with ideal tensor parallelism (g x FLOP/s, g x
bandwidth, g x memory); communication between the chips is not modelled (docs/rag.md, limits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fanns.errors import FannsError
from fanns.model.ivfpq.rag.hardware import Accelerator


@dataclass(frozen=True)
class Transformer:
    """A model's size as the roofline needs it (an encoder or reranker keeps no KV cache: 0)."""

    name: str
    parameters: float
    layers: int
    hidden: int
    bytes_per_weight: float
    kv_bytes_per_token: float = 0.0

    @property
    def weight_bytes(self) -> float:
        return self.parameters * self.bytes_per_weight


@dataclass(frozen=True)
class Chips:
    """`count` chips of one accelerator running one model replica (tensor parallel)."""

    accelerator: Accelerator
    count: int

    @property
    def flops(self) -> float:
        return self.accelerator.flops * self.count

    @property
    def bandwidth(self) -> float:
        return self.accelerator.bandwidth * self.count

    @property
    def memory(self) -> float:
        return self.accelerator.memory * self.count


def op_seconds(flops: float, nbytes: float, chips: Chips) -> float:
    """One operator class: the larger of its compute time and its memory time."""
    return max(flops / chips.flops, nbytes / chips.bandwidth)


def prefill_seconds(model: Transformer, chips: Chips, batch: float, tokens: float, context: float = 0.0) -> float:
    """Prefill `tokens` new tokens of `batch` sequences that already hold `context` tokens."""
    weights = op_seconds(2 * model.parameters * batch * tokens, model.weight_bytes, chips)
    attention = op_seconds(
        2 * model.layers * model.hidden * batch * tokens * (2 * context + tokens),
        model.kv_bytes_per_token * batch * (context + tokens),
        chips,
    )
    return weights + attention


def decode_step_seconds(model: Transformer, chips: Chips, batch: float, context: float) -> float:
    """One decode step of `batch` sequences of `context` tokens each."""
    weights = op_seconds(2 * model.parameters * batch, model.weight_bytes, chips)
    attention = op_seconds(
        4 * model.layers * model.hidden * batch * context, model.kv_bytes_per_token * batch * context, chips
    )
    return weights + attention


def generate_seconds(model: Transformer, chips: Chips, batch: float, prompt: float, generated: float) -> float:
    """Prefill `prompt` tokens and generate `generated` tokens, `batch` sequences together (a
    query rewriter): the decode steps at their mean context."""
    steps = generated * decode_step_seconds(model, chips, batch, prompt + generated / 2)
    return prefill_seconds(model, chips, batch, prompt) + steps


def kv_bytes(model: Transformer, sequences: float, tokens: float) -> float:
    return model.kv_bytes_per_token * sequences * tokens


def min_chips(model: Transformer, accelerator: Accelerator, kv_needed: float, what: str) -> int:
    """The fewest chips whose memory holds the model's weights and `kv_needed` bytes of KV cache."""
    need = model.weight_bytes + kv_needed
    count = max(1, math.ceil(need / accelerator.memory))
    if count > 1 << 20:
        raise FannsError(
            f"{what}: {need / 1e9:,.0f} GB of weights and KV cache need more than a million {accelerator.name} chips",
            hint="check parameters, bytes_per_weight and kv_bytes_per_token",
        )
    return count


def max_decode_batch(model: Transformer, chips: Chips, tokens: float, cap: int) -> int:
    """The largest decode batch (at most `cap`) whose KV cache of `tokens` per sequence fits beside
    the weights in the chips' memory; 0 when not even one sequence fits."""
    free = chips.memory - model.weight_bytes
    if free <= 0:
        return 0
    per = model.kv_bytes_per_token * tokens
    return cap if per <= 0 else int(min(cap, free // per))
