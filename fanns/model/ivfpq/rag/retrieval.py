"""The retrieval stage's hardware: how many units a database needs, their throughput, and the
time a batch of queries takes on them.

Two kinds of unit:

* `RooflineServers` — RAGO's CPU server model (its sections 3.3 and 4b): a query scans
  B = vectors x bytes_per_vector x scan_fraction bytes; S servers each hold 1/S of the database
  (at least ceil(database bytes / server memory) of them) and scan their share of every query.
  ScaNN gives each query one thread, so a batch of Q queries on one server takes
  max(Q (B / S) / (min(Q, cores) core_scan), Q (B / S) / (bandwidth x efficiency)): one query
  alone is bound by one core, a large batch by the cores or the memory. Used for databases too
  large to measure here (RAGO's 64 billion vectors).
* `ShardedUnits` — boards running a fanns design, or CPU servers running faiss, each holding one
  shard of `shard_vectors` vectors with the same index parameters (FANNS's scale-out setting,
  `fanns.model.ivfpq.scaleout`): ceil(vectors / shard_vectors) shards; `units` of them make
  units // shards replicas of the whole database. Every query visits every shard of one replica,
  so the replicas' throughput is replicas x the unit's QPS, and a query's latency is the expected
  maximum of `shards` draws from one unit's per-query latency distribution (`expected_max`).

Both pay the network of a query split over several units: FANNS 6.6.3.2's LogGP binary-tree
broadcast and reduce (`fanns.model.ivfpq.scaleout.LogGP`), nothing for one unit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fanns.errors import FannsError
from fanns.model.ivfpq.rag.hardware import CpuServer
from fanns.model.ivfpq.scaleout import LogGP, message_bytes


@dataclass(frozen=True)
class Database:
    """The vectors retrieval searches: how many, the bytes each occupies, the share a query scans
    (RAGO's P_scan / 100), the query dimension and the results per query (message sizes)."""

    vectors: float
    bytes_per_vector: float
    scan_fraction: float
    dim: int
    k: int

    @property
    def bytes(self) -> float:
        return self.vectors * self.bytes_per_vector

    @property
    def scan_bytes(self) -> float:
        """RAGO's B_retrieval: bytes one query scans."""
        return self.bytes * self.scan_fraction

    def network_seconds(self, shards: int) -> float:
        if shards <= 1:
            return 0.0
        return LogGP().network_us(shards, *message_bytes(self.dim, self.k)) * 1e-6


def expected_max(samples: np.ndarray, n: int) -> float:
    """E[max of n independent draws] from the empirical distribution of `samples`:
    sum over the sorted x_i of x_i ((i / m)^n - ((i - 1) / m)^n)."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    m = x.size
    if m == 0:
        raise FannsError("no latency samples")
    i = np.arange(1, m + 1, dtype=np.float64)
    return float(np.sum(x * ((i / m) ** n - ((i - 1) / m) ** n)))


class Units:
    """What the pipeline asks of a retrieval option (see the module docstring)."""

    name: str
    kind: str  # "cpu" or "fpga"
    per_host: int  # units one host server holds (the resource-normalised retrieval share)

    def min_units(self, db: Database) -> int:
        raise NotImplementedError

    def qps(self, units: int, db: Database) -> float:
        raise NotImplementedError

    def batch_seconds(self, units: int, db: Database, queries: int) -> float:
        raise NotImplementedError

    def unit_seconds(self, db: Database) -> float:
        """Unit-seconds one query costs at full throughput."""
        raise NotImplementedError

    def describe(self, db: Database) -> dict:
        raise NotImplementedError

    def units_for_qps(self, qps: float, db: Database) -> int:
        """The fewest units (at least `min_units`) sustaining `qps` queries per second."""
        raise NotImplementedError


@dataclass(frozen=True)
class RooflineServers(Units):
    """CPU servers by RAGO's bytes-scanned roofline (module docstring)."""

    name: str
    server: CpuServer
    kind: str = "cpu"
    per_host: int = 1

    def min_units(self, db: Database) -> int:
        return max(1, math.ceil(db.bytes / self.server.memory - 1e-9))

    def qps(self, units: int, db: Database) -> float:
        return units * self.server.scan_rate / db.scan_bytes

    def batch_seconds(self, units: int, db: Database, queries: int) -> float:
        share = queries * db.scan_bytes / units
        s = self.server
        compute = share / (min(queries, s.cores) * s.core_scan)
        return max(compute, share / (s.bandwidth * s.efficiency)) + db.network_seconds(units)

    def unit_seconds(self, db: Database) -> float:
        return db.scan_bytes / self.server.scan_rate

    def units_for_qps(self, qps: float, db: Database) -> int:
        return max(self.min_units(db), math.ceil(qps * self.unit_seconds(db) - 1e-9))

    def describe(self, db: Database) -> dict:
        s = self.server
        return {
            "model": "RAGO bytes-scanned roofline",
            "server": s.name,
            "cores": s.cores,
            "core_scan_gb_s": s.core_scan / 1e9,
            "memory_gb_s": s.bandwidth / 1e9,
            "memory_efficiency": s.efficiency,
            "memory_gb": s.memory / 1e9,
            "scan_bytes_per_query": db.scan_bytes,
            "source": s.source,
        }


@dataclass(frozen=True)
class ShardedUnits(Units):
    """Units each holding one shard of `shard_vectors` vectors (module docstring); `latency_s`
    are per-query latencies of one unit alone (seconds), `unit_qps` its sustained queries/s."""

    name: str
    kind: str
    shard_vectors: int
    unit_qps: float
    latency_s: np.ndarray = field(repr=False)
    source: str
    detail: dict = field(default_factory=dict)
    per_host: int = 1

    def shards(self, db: Database) -> int:
        return max(1, math.ceil(db.vectors / self.shard_vectors - 1e-9))

    def min_units(self, db: Database) -> int:
        return self.shards(db)

    def replicas(self, units: int, db: Database) -> int:
        return units // self.shards(db)

    def qps(self, units: int, db: Database) -> float:
        return self.replicas(units, db) * self.unit_qps

    def batch_seconds(self, units: int, db: Database, queries: int) -> float:
        shards, replicas = self.shards(db), self.replicas(units, db)
        if replicas < 1:
            raise FannsError(f"{self.name}: {units} unit(s) cannot hold the {shards} shards of the database")
        behind = math.ceil(queries / replicas) - 1  # queries ahead of the last one on its replica
        return expected_max(self.latency_s, shards) + behind / self.unit_qps + db.network_seconds(shards)

    def unit_seconds(self, db: Database) -> float:
        return self.shards(db) / self.unit_qps

    def units_for_qps(self, qps: float, db: Database) -> int:
        return self.shards(db) * max(1, math.ceil(qps / self.unit_qps - 1e-9))

    def describe(self, db: Database) -> dict:
        lat = np.asarray(self.latency_s) * 1e6
        return {
            "model": self.source,
            "shard_vectors": self.shard_vectors,
            "shards": self.shards(db),
            "unit_qps": round(self.unit_qps, 1),
            "latency_p50_us": round(float(np.percentile(lat, 50)), 3),
            "latency_p99_us": round(float(np.percentile(lat, 99)), 3),
            **self.detail,
        }
