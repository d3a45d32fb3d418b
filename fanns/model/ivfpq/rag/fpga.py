"""A fanns IVF-PQ design as a retrieval unit of the RAG model: its QPS and per-query latency from
fanns's own models.

Why re-evaluate rather than read `prediction:` from design.yaml: the RAG model needs the latency
distribution (the expected maximum over shards), which design.yaml does not hold, and a shard
size other than the design's own. Throughput is the DSE's (`fanns.model.ivfpq.sequence.
steady_interval`: the long-run cycles per query with the finite buffers between stages);
latency is `fanns.model.ivfpq.latency.query_times(...).alone()` (each query alone, checked
against RTL simulation within 2 %).

The probes: when the design's exploration is where its index path says (the DSE writes the path
of the trained index inside the exploration, `explore/indexes/*.faissindex`) and answers the
design's goal at the design's nprobe, the measured probes of its sample queries — what the DSE
itself evaluated. Otherwise (the exploration was evicted, or `shard_vectors` asks for another
shard size) synthetic ones: log-normal list sizes of imbalance 1.2 and probes drawn in proportion
to list size (`fanns.model.ivfpq.workload`, FANNS 6.5.3). The result records which.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from fanns.design.ivfpq import IvfPqDesign, Stages
from fanns.errors import FannsError
from fanns.index.goals import RecallGoal
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import sequence as sequence_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.dse import DesignPoint
from fanns.model.ivfpq.rag.retrieval import ShardedUnits
from fanns.model.ivfpq.workload import (
    DEFAULT_IMBALANCE,
    size_biased_probes,
    synthetic_list_sizes,
    workloads_from_explore,
)

SAMPLE_QUERIES = 1000
"""Synthetic sample queries per design (as `fanns.model.ivfpq.published_eval`)."""


def design_file(path: Path) -> Path:
    """design.yaml itself, or the one in a folder (a `fanns dse --out` folder, a generated project)."""
    path = Path(path)
    if path.is_dir():
        path = path / "design.yaml"
    if not path.is_file():
        raise FannsError(
            f"{path}: no design file",
            hint="give a design.yaml, or the folder `fanns dse --out` or `fanns generate --out` wrote",
        )
    return path


def measured_probes(design: IvfPqDesign, path: Path) -> tuple[np.ndarray, np.ndarray, str] | None:
    """(list sizes, probed sizes [nq, nprobe], source) from the design's exploration, or None when
    its exploration is not there or does not hold the design's goal at its nprobe."""
    if design.index.path is None or not isinstance(design.goal, RecallGoal):
        return None
    explore_dir = (path.parent / design.index.path).parent.parent
    if not (explore_dir / "explore.json").is_file():
        return None
    found, _ = workloads_from_explore(explore_dir, design.goal, [design.index.factory])
    for w in found:
        if w.nprobe == design.nprobe and w.n == design.index.n:
            return w.list_sizes, w.probed, f"measured probes of {w.queries} queries ({explore_dir / 'explore.json'})"
    return None


def synthetic_probes(design: IvfPqDesign, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    rng = np.random.default_rng(seed)
    sizes = synthetic_list_sizes(n, design.index.nlist, DEFAULT_IMBALANCE, rng)
    cells = size_biased_probes(sizes, design.nprobe, SAMPLE_QUERIES, rng)
    source = (
        f"synthetic probes: {SAMPLE_QUERIES} queries, log-normal lists of imbalance {DEFAULT_IMBALANCE}, seed {seed}"
    )
    return sizes, sizes[cells], source


def check_fits(design: IvfPqDesign, ctx: stage_model.Context, sizes: np.ndarray, where: str) -> None:
    """The shard's PQ codes and ids fit the design's PQ channels (the busiest one)."""
    st = design.stages.pq_dist
    need = stage_model.index_bytes_per_channel(ctx.m, sizes, st.pes, max(st.pes_per_channel()), st.port_bits)
    have = ctx.memory(st.memory).capacity_bytes
    if need > have:
        raise FannsError(
            f"{where}: {int(sizes.sum()):,} vectors need {need / 2**30:.2f} GiB on the busiest PQ channel, "
            f"a {st.memory} channel holds {have / 2**30:.2f} GiB",
            hint="lower shard_vectors, or use a design with more PQ channels",
        )


def design_units(path: Path, name: str, shard_vectors: int | None = None, per_host: int = 1) -> ShardedUnits:
    """Boards running the design at `path` (see the module docstring)."""
    path = design_file(path)
    design = IvfPqDesign.load(path)
    board = design.target_board()
    ctx = stage_model.design_context(design, board)
    n = shard_vectors or design.index.n
    got = measured_probes(design, path) if n == design.index.n else None
    sizes, probed, source = got or synthetic_probes(design, n)
    if n != design.index.n:
        ctx = dataclasses.replace(ctx, n=n)
        check_fits(design, ctx, sizes, name)
    probes = stage_model.Probes.of(probed)
    timings = stage_model.stage_timings(ctx, design.stages, probes)
    cycles = sequence_model.steady_interval(ctx, design.stages, probes, timings)
    detail = {
        "design": str(path),
        "board": board.name,
        "index": design.index.factory,
        "probes": source,
    }
    if design.prediction.get("qps") and n == design.index.n:
        detail["design_yaml_qps"] = design.prediction["qps"]
    return _units(name, ctx, design.stages, probes, timings, cycles, detail, per_host)


def point_units(name: str, point: DesignPoint, per_host: int = 1) -> ShardedUnits:
    """Boards running a design the DSE chose (the sweep's best design of a board and goal)."""
    w = point.workload
    detail = {"board": name, "index": w.index, "probes": f"measured probes of {w.queries} queries"}
    return _units(
        name, point.ctx, point.stages, stage_model.Probes.of(w.probed), point.timings, point.cycles, detail, per_host
    )


def _units(
    name: str,
    ctx: stage_model.Context,
    stages: Stages,
    probes: stage_model.Probes,
    timings: dict,
    cycles: float,
    detail: dict,
    per_host: int,
) -> ShardedUnits:
    alone = latency_model.query_times(ctx, stages, probes, timings=timings).alone()
    return ShardedUnits(
        name=name,
        kind="fpga",
        shard_vectors=ctx.n,
        unit_qps=ctx.clock_mhz * 1e6 / cycles,
        latency_s=alone / (ctx.clock_mhz * 1e6),
        source="fanns performance and latency models (fanns.model.ivfpq)",
        detail={
            **detail,
            "clock_mhz": ctx.clock_mhz,
            "nprobe": ctx.nprobe,
            "k": ctx.k,
            "bottleneck": max(timings, key=lambda s: timings[s].interval),
            "scan_bytes_per_query": round(float(probes.sizes.sum(1).mean()) * ctx.m, 1),
        },
        per_host=per_host,
    )
