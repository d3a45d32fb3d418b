"""Scale-out: the latency of a query answered by N accelerators, each holding one shard.

Why: a distributed query waits for its slowest shard, so the tail of one accelerator's latency
distribution, not its mean, sets the latency of many (FANNS 6.6.3.2). The model follows the
seed's method:

* search latency: the maximum over the N shards of one shard's latency. Two ways to shard:
  - `partition` (FANNS's setting: every accelerator holds its own partition of a larger
    collection with the same index parameters): shard latencies are independent draws from one
    accelerator's distribution F, so the q-quantile of the maximum is F^-1(q^(1/N)) — taken
    exactly from the empirical distribution instead of FANNS's random re-sampling (the seed
    samples N latencies from a 100K-query history and keeps the highest). Above the
    (1 - 1/samples) quantile the sample's maximum is all we know: quantiles there are the maximum.
  - `split` (one index split by vector: vectors go round-robin to the N shards, every shard has
    every list with ceil or floor of n_i / N codes): all shards probe the same cells, shard 0
    holds the ceiling of every list and latency grows with list size, so shard 0 is the slowest;
    its per-query latency comes from `fanns.model.ivfpq.latency` with list sizes ceil(n_i / N).
* communication: a binary-tree broadcast of the query and a binary-tree reduce of the partial
  top-K, modelled with LogGP using the InfiniBand/MPI values the seed cites ([90, 91] in FANNS
  6.6.3.2): L = 6.0 us maximum latency between endpoints, o = 4.7 us CPU overhead per message
  sent or received, G = 0.73 ns per injected byte, 1.0 us to merge the partial results of two
  nodes. With h = ceil(log2 N) tree levels: broadcast level = the parent's two sends
  2 (o + s G) + L + the child's receive o; reduce level = the child's send o + r G + L + the
  parent's two receives 2 o + one merge. N = 1 has no network (the accelerator's own host).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from fanns.design.ivfpq import Stages
from fanns.errors import FannsError
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import stages as stage_model


@dataclass(frozen=True)
class LogGP:
    """Network parameters in microseconds (FANNS 6.6.3.2, from InfiniBand/MPI measurements)."""

    latency_us: float = 6.0
    overhead_us: float = 4.7
    gap_per_byte_us: float = 0.73e-3
    merge_us: float = 1.0

    def levels(self, n: int) -> int:
        if n < 1:
            raise FannsError(f"{n} accelerators: need at least one")
        return math.ceil(math.log2(n)) if n > 1 else 0

    def broadcast_us(self, n: int, query_bytes: int) -> float:
        o, g = self.overhead_us, self.gap_per_byte_us
        return self.levels(n) * (2 * (o + query_bytes * g) + self.latency_us + o)

    def reduce_us(self, n: int, result_bytes: int) -> float:
        o, g = self.overhead_us, self.gap_per_byte_us
        return self.levels(n) * (o + result_bytes * g + self.latency_us + 2 * o + self.merge_us)

    def network_us(self, n: int, query_bytes: int, result_bytes: int) -> float:
        return self.broadcast_us(n, query_bytes) + self.reduce_us(n, result_bytes)


DEFAULT_COUNTS = tuple(2**i for i in range(11))
"""N = 1, 2, 4, ..., 1024 accelerators."""
QUANTILES = (0.5, 0.95, 0.99)


def max_quantile(samples_us: np.ndarray, q: float, n: int) -> float:
    """The q-quantile of the maximum of n independent draws from the empirical distribution."""
    x = np.sort(np.asarray(samples_us, dtype=np.float64))
    if x.size == 0:
        raise FannsError("no latency samples")
    return float(np.quantile(x, q ** (1.0 / n), method="inverted_cdf"))


def split_latencies(
    ctx: stage_model.Context, stages: Stages, list_sizes: np.ndarray, probes: np.ndarray, n: int
) -> np.ndarray:
    """[nq] microseconds of the slowest shard (shard 0) per query when the index is split by vector
    over n accelerators running the same design; `probes` [nq, nprobe] are the probed cell ids."""
    sizes = -(-np.asarray(list_sizes, dtype=np.int64) // n)
    times = latency_model.query_times(
        dataclasses.replace(ctx, n=int(sizes.sum())), stages, stage_model.Probes.of(sizes[probes])
    )
    return times.alone() / ctx.clock_mhz


@dataclass(frozen=True)
class ScaleOutCurve:
    """Quantiles of the distributed query latency (microseconds) per accelerator count."""

    label: str
    mode: str  # "partition" or "split"
    counts: tuple[int, ...]
    search_us: dict[float, list[float]]  # quantile -> per count
    network_us: list[float]

    def total_us(self, q: float) -> list[float]:
        return [s + n for s, n in zip(self.search_us[q], self.network_us)]

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "mode": self.mode,
            "counts": list(self.counts),
            "network_us": [round(v, 3) for v in self.network_us],
            **{f"p{round(100 * q)}_us": [round(v, 3) for v in self.total_us(q)] for q in sorted(self.search_us)},
            **{
                f"search_p{round(100 * q)}_us": [round(v, 3) for v in self.search_us[q]] for q in sorted(self.search_us)
            },
        }


def partition_curve(
    label: str, samples_us: np.ndarray, query_bytes: int, result_bytes: int, counts=DEFAULT_COUNTS, net: LogGP = LogGP()
) -> ScaleOutCurve:
    """FANNS's extrapolation for a per-accelerator latency sample (accelerator or CPU)."""
    search = {q: [max_quantile(samples_us, q, n) for n in counts] for q in QUANTILES}
    return ScaleOutCurve(
        label, "partition", tuple(counts), search, [net.network_us(n, query_bytes, result_bytes) for n in counts]
    )


def split_curve(
    label: str,
    ctx: stage_model.Context,
    stages: Stages,
    list_sizes: np.ndarray,
    probes: np.ndarray,
    query_bytes: int,
    result_bytes: int,
    counts=DEFAULT_COUNTS,
    net: LogGP = LogGP(),
) -> ScaleOutCurve:
    """One index split by vector over N copies of a design (see the module docstring)."""
    search: dict[float, list[float]] = {q: [] for q in QUANTILES}
    for n in counts:
        lat = split_latencies(ctx, stages, list_sizes, probes, n)
        for q in QUANTILES:
            search[q].append(float(np.quantile(lat, q, method="inverted_cdf")))
    return ScaleOutCurve(
        label, "split", tuple(counts), search, [net.network_us(n, query_bytes, result_bytes) for n in counts]
    )


def message_bytes(d: int, k: int) -> tuple[int, int]:
    """(query, partial result) message sizes: d float32 elements; K (id, distance) pairs of 4 + 4 bytes."""
    return 4 * d, 8 * k
