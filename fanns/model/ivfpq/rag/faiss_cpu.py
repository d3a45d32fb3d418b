"""CPU servers running faiss as a retrieval unit of the RAG model, from measurement here.

Why measured: fanns's CPU baseline is faiss-cpu on the same index and nprobe as the accelerator
(`fanns.model.cpu_baseline`), so the comparison is like for like in recall. A server answers
one query per core (the baseline's docstring: how a CPU server scales out queries), so a server
of `cores` cores sustains cores x the one-thread QPS measured here (thread CPU clock, median of
windows), no more than its usable memory bandwidth allows for the bytes a query scans (the codes
and 8-byte ids of the probed lists, the same roofline RAGO applies: bandwidth x efficiency).
The per-query latency is the one-thread latency measured here on the thread CPU clock (what an
idle core would see). Scaling one core's measurement to a whole server is an assumption: the
cores share caches and memory, which the bandwidth cap alone stands for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fanns.datasets.loader import load_dataset
from fanns.design.ivfpq import IvfPqDesign
from fanns.errors import FannsError
from fanns.index.ivfpq import host_vectors
from fanns.index.ivfpq_lists import read_index
from fanns.model import cpu_baseline
from fanns.model.ivfpq.rag.fpga import design_file
from fanns.model.ivfpq.rag.hardware import CpuServer
from fanns.model.ivfpq.rag.retrieval import ShardedUnits
from fanns.progress import status

LATENCY_QUERIES = 200
"""Queries whose one-thread latency is measured (each searched alone), as the sweep's scale-out."""
ID_BYTES = 8
"""faiss stores a 64-bit id beside every PQ code."""


def measured_units(
    name: str,
    server: CpuServer,
    shard_vectors: int,
    qps_one_thread: float,
    latency_us: np.ndarray,
    scan_bytes: float,
    detail: dict,
    per_host: int = 1,
) -> ShardedUnits:
    """CPU servers of `server`'s cores and memory from a one-thread measurement (module docstring)."""
    cores_qps = server.cores * qps_one_thread
    memory_qps = server.bandwidth * server.efficiency / scan_bytes
    return ShardedUnits(
        name=name,
        kind="cpu",
        shard_vectors=shard_vectors,
        unit_qps=min(cores_qps, memory_qps),
        latency_s=np.asarray(latency_us, dtype=np.float64) * 1e-6,
        source=f"faiss-cpu measured here, 1 thread, scaled to {server.cores} cores ({server.name})",
        detail={
            **detail,
            "qps_one_thread": round(qps_one_thread, 1),
            "server_qps_cores": round(cores_qps, 1),
            "server_qps_memory": round(memory_qps, 1),
            "scan_bytes_per_query": round(scan_bytes, 1),
        },
        per_host=per_host,
    )


def faiss_units(design_path: Path, dataset: str, name: str, server: CpuServer, per_host: int = 1) -> ShardedUnits:
    """Measure faiss-cpu on the design's own index and nprobe with the dataset's queries."""
    path = design_file(design_path)
    design = IvfPqDesign.load(path)
    if design.index.path is None:
        raise FannsError(f"{path}: the design names no trained index", hint="use a design `fanns dse` wrote")
    index_path = path.parent / design.index.path
    if not index_path.is_file():
        raise FannsError(
            f"{path}: its trained index {index_path} is not there",
            hint="run `fanns dse` (or `fanns generate`) again so that the exploration's indexes exist",
        )
    ds = load_dataset(dataset)
    if ds.d != design.index.d:
        raise FannsError(f"{name}: dataset {ds.name} has d={ds.d}, the design's index d={design.index.d}")
    index = read_index(index_path)
    queries = host_vectors(ds.queries[:LATENCY_QUERIES], ds.metric)
    status(f"{name}: measuring faiss-cpu on {design.index.factory}, nprobe={design.nprobe} (1 thread)")
    lat = cpu_baseline.measure(index, queries, design.nprobe, design.k, threads=1, label=design.index.factory)
    qps = cpu_baseline.measure_qps(index, queries, design.nprobe, design.k, threads=1)
    scanned = design.index.n * design.nprobe / design.index.nlist * (design.index.m + ID_BYTES)
    detail = {
        "design": str(path),
        "index": design.index.factory,
        "nprobe": design.nprobe,
        "k": design.k,
        "queries": int(queries.shape[0]),
        "clock": "thread CPU time",
    }
    return measured_units(name, server, design.index.n, qps.median, lat.cpu_us, scanned, detail, per_host)
