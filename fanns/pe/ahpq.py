"""Approximate hierarchical priority queue, AHPQ (ChamVS 4.4.2.2): HPQ with short level-1 queues.

Why: with many input streams, 2z exact level-1 queues of length K cost more than the device has
(32 PQ decoders and K = 100 need 64 queues of 100 keys). The K results of a query rarely crowd
into one level-1 queue, so each level-1 queue is cut to the length s1 that keeps the result exact
for a chosen fraction `target` of the queries (e.g. 0.99).

The bound. Model (as in the thesis): each of the K = s results lands in any of the q = 2z
level-1 queues independently with probability 1/q, so the per-queue counts are
Multinomial(K; 1/q, ..., 1/q). The output is exact iff no queue holds more than s1 of the K
results, and `exact_probability(K, q, s1)` computes P(max count <= s1) *exactly* for all q
queues jointly (a dynamic programme over the queues: the results not in queues 1..j-1 fall into
queue j with probability 1/(q-j+1)); no union bound. `ahpq_queue_length` picks the smallest s1
with P >= target. (The thesis' per-queue P(k) is the marginal; for q queues the joint probability
is lower, e.g. K = 100, q = 16, target 0.99: the marginal alone would allow s1 = 12, the joint
probability needs 15.) The model is conservative when the level-1 queues receive equal numbers
of items, as with equal stream lengths: the results are then drawn without replacement and the
counts are more concentrated; on random data the measured exact fraction is above the
prediction (tests/pe/test_ahpq.py; e.g. z = 8, K = 100: 0.9968 measured vs 0.9924 predicted).

Everything else is `fanns.pe.hpq` with s1 < s: the reference model truncates each level-1
queue exactly as the RTL does (which item goes to which queue is fixed by the item's position in
its stream), so RTL and HLS are bit-exact against it also when the truncation drops a result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

import numpy as np

from fanns.errors import FannsError
from fanns.pe.hpq import Hpq


def exact_probability(k: int, num_queues: int, length: int) -> float:
    """P(no queue holds more than `length` of `k` results), each result uniform over the queues."""
    if length >= k:
        return 1.0
    if length < 0:
        return 0.0
    m = np.arange(k + 1)
    # p[m]: probability that m results spread over the queues handled so far all fit.
    p = (m <= length).astype(np.float64)  # one queue
    i = np.arange(length + 1)
    rest = m[:, None] - i[None, :]
    valid = rest >= 0
    rest = np.clip(rest, 0, k)
    # log C(m, i) once; the Binomial(m, 1/j) pmf of every j is then two array operations
    # (the DSE evaluates this for hundreds of queue counts). log n! from the C library's lgamma, not
    # scipy's: a PE's simulation imports this module, and scipy.special costs seconds to import.
    log_factorial = np.array([math.lgamma(n + 1.0) for n in range(k + 1)])
    log_comb = np.where(valid, log_factorial[m][:, None] - log_factorial[i][None, :] - log_factorial[rest], -np.inf)
    for j in range(2, num_queues + 1):
        # Of m results spread over j queues, i land in the new queue: Binomial(m, 1/j).
        pmf = np.exp(log_comb + i[None, :] * math.log(1.0 / j) + rest * math.log1p(-1.0 / j))
        p = np.where(valid, pmf * p[rest], 0.0).sum(axis=1)
    return float(min(p[k], 1.0))


@cache
def ahpq_queue_length(k: int, num_queues: int, target: float) -> int:
    """The smallest level-1 length s1 with exact_probability(k, num_queues, s1) >= target."""
    if k < 1 or num_queues < 1:
        raise FannsError(f"AHPQ needs K >= 1 and at least one queue (got K={k}, queues={num_queues})")
    if not 0.0 < target <= 1.0:
        raise FannsError(f"AHPQ target {target} is not a fraction of queries", hint="use a value in (0, 1], e.g. 0.99")
    # P increases with the length and P(k) = 1; gallop up from the mean (short lengths are cheap).
    lo, step = -(-k // num_queues), 1
    hi = min(lo + step, k)
    while exact_probability(k, num_queues, hi) < target:
        lo, step = hi + 1, 2 * step
        hi = min(lo + step, k)
    while lo < hi:
        mid = (lo + hi) // 2
        if exact_probability(k, num_queues, mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


@dataclass(frozen=True)
class Ahpq(Hpq):
    target: float = 0.99

    name: ClassVar[str] = "ahpq"
    summary: ClassVar[str] = "approximate HPQ: level-1 queues cut to s1, exact for a `target` fraction of queries"
    timing_formula: ClassVar[str] = (
        "II = 1 (per stream); L = (s1-1) + 4*z*s1 + (s-1) + s, s1 = ahpq_queue_length(s, 2z, target)"
    )
    hls_header: ClassVar[str] = "hpq.h"
    hls_call: ClassVar[str] = Hpq.hls_call  # the HPQ kernel with level-1 queues of s1 < s keys
    testbench: ClassVar[str] = "tb_hpq"
    calibration_points: ClassVar[tuple] = (
        {"z": 4, "s": 10, "key_bits": 64, "target": 0.99},
        {"z": 8, "s": 10, "key_bits": 52, "target": 0.99},
        {"z": 8, "s": 32, "key_bits": 64, "target": 0.99},
        {"z": 16, "s": 10, "key_bits": 64, "target": 0.9},
        {"z": 4, "s": 50, "key_bits": 52, "target": 0.999},
        {"z": 12, "s": 20, "key_bits": 40, "target": 0.99},
    )

    def validate(self) -> None:
        super().validate()
        self.require(
            0.0 < self.target <= 1.0,
            f"target={self.target} is not a fraction of queries",
            "use a value in (0, 1], e.g. 0.99",
        )

    @property
    def s1(self) -> int:
        """Level-1 queue length chosen by the multinomial bound (module docstring)."""
        return ahpq_queue_length(self.s, self.num_l1, self.target)

    def exact_fraction(self) -> float:
        """Predicted fraction of queries whose output is exact (>= target)."""
        return exact_probability(self.s, self.num_l1, self.s1)
