"""The DST parameter sweep: speedup over BFS, recall and hops per (mg, mc), in the form of Falcon
Fig. 7.9, and the best (mg, mc) per parallel mode — Falcon 7.4.3.4's "empirical parameter search
before deployment", done automatically on sample queries.

Two modes, as in Falcon 7.5.4.2: *intra-query* (one QPP with several BFC units serving one query;
its metric is query latency) and *across-query* (several QPPs with one BFC unit each sharing the
memory; its metric is throughput, QPS = pipelines x clock / per-query occupancy, at most the
channels' beats per second over a query's beats; the fetch engines share the channels as
`fanns.model.graph.across` models). Recall is R@k
against the exact float ground truth. The best configuration of a mode is the fastest one whose
recall is not below BFS's. When that best point lies on the grid's far edge (the largest mg or
mc swept) the optimum may lie beyond it, so the sweep grows the grid there one step at a time up
to `SweepSetup.grow_to` (Falcon's Fig. 7.9 optimum sits inside its grid; ours sat on its edge).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from fanns.errors import FannsError
from fanns.index.graph import GraphImage
from fanns.index.graph_traversal import TraversalConfig
from fanns.index.recall import recall_at_k
from fanns.model.graph.across import shared_search_batch
from fanns.model.graph.fast import search_batch
from fanns.model.graph.qpp import MemorySystem, QppConfig
from fanns.pe.bloom import Bloom

MG_RANGE = tuple(range(1, 9))
MC_RANGE = tuple(range(1, 5))
MODES = ("intra", "across")


@dataclass(frozen=True)
class SweepSetup:
    """What is swept and on which hardware."""

    k: int = 10
    l: int = 64
    cand_size: int = 64
    bloom: Bloom | None = Bloom(h=3, b=3 * 2**16, w=64)
    bfc_units: int = 4  # intra-query: BFC units of the one QPP
    pipelines: int = 4  # across-query: QPPs with one BFC unit each
    memory: MemorySystem = MemorySystem()
    mg: tuple[int, ...] = MG_RANGE
    mc: tuple[int, ...] = MC_RANGE
    threads: int = 2
    grow_to: int = 0  # grow mg / mc past the grid while a best point is on its far edge, up to this (0: never)

    def __post_init__(self) -> None:
        if 1 not in self.mg or 1 not in self.mc:
            raise FannsError(
                "the sweep needs mg = 1 and mc = 1 (BFS is the baseline)", hint="include 1 in --mg and --mc"
            )
        if min(self.mg) < 1 or min(self.mc) < 1:
            raise FannsError("mg and mc values must be at least 1")

    def qpp(self, graph: GraphImage, mode: str) -> QppConfig:
        """One QPP of `mode` (its memory: all channels; `pipes` of them share it in across-query mode)."""
        return QppConfig(
            d=graph.fmt.d,
            elem_bytes=graph.elem_bytes,
            l=self.l,
            k=self.k,
            cand_size=self.cand_size,
            bfc_units=self.bfc_units if mode == "intra" else 1,
            bloom=self.bloom or Bloom(),
            memory=self.memory,
            max_degree=graph.max_degree,
        )

    def pipes(self, mode: str) -> int:
        return self.pipelines if mode == "across" else 1

    @property
    def capacity(self) -> float:
        """Beats per cycle of one memory channel."""
        return self.memory.bytes_per_cycle() / self.memory.channels / self.memory.port_bytes

    def traversal(self, mg: int, mc: int, mode: str) -> TraversalConfig:
        return TraversalConfig(
            l=self.l,
            k=self.k,
            mg=mg,
            mc=mc,
            cand_size=self.cand_size,
            bloom=self.bloom,
            bfc_units=self.bfc_units if mode == "intra" else 1,
        )


@dataclass
class Cell:
    """Means over the queries of one (mode, mg, mc)."""

    recall: float
    hops: float
    visited: float
    bloom_fp: float
    latency: float  # cycles
    occupancy: float  # cycles
    qps: float
    latency_us: float


@dataclass
class GraphSweep:
    setup: SweepSetup
    cells: dict[tuple[str, int, int], Cell] = field(default_factory=dict)
    exact_bfs_recall: dict[str, float] = field(default_factory=dict)  # BFS with an exact visited set

    def speedup(self, mode: str, mg: int, mc: int) -> float:
        """Intra-query: BFS latency / latency; across-query: QPS / BFS QPS."""
        base, cell = self.cells[mode, 1, 1], self.cells[mode, mg, mc]
        return base.latency / cell.latency if mode == "intra" else cell.qps / base.qps

    def best(self, mode: str) -> tuple[int, int]:
        """The fastest (mg, mc) whose recall is at least BFS's (ties: fewer hops, then smaller)."""
        floor = self.cells[mode, 1, 1].recall
        options = [(mg, mc) for (m, mg, mc), c in self.cells.items() if m == mode and c.recall >= floor]
        return max(options, key=lambda p: (self.speedup(mode, *p), -self.cells[(mode, *p)].hops, -p[0], -p[1]))

    def table(self, mode: str, metric: str) -> np.ndarray:
        """[len(mc), len(mg)] array of `metric` (speedup, recall, hops: normalised to BFS)."""
        out = np.zeros((len(self.setup.mc), len(self.setup.mg)))
        for i, mc in enumerate(self.setup.mc):
            for j, mg in enumerate(self.setup.mg):
                cell = self.cells[mode, mg, mc]
                if metric == "speedup":
                    out[i, j] = self.speedup(mode, mg, mc)
                elif metric == "recall":
                    out[i, j] = cell.recall
                elif metric == "hops":
                    out[i, j] = cell.hops / self.cells[mode, 1, 1].hops
                else:
                    raise ValueError(metric)
        return out

    def to_dict(self) -> dict:
        cells = [
            {"mode": mode, "mg": mg, "mc": mc, "speedup": self.speedup(mode, mg, mc), **vars(c)}
            for (mode, mg, mc), c in sorted(self.cells.items())
        ]
        return {
            "grid": {"mg": list(self.setup.mg), "mc": list(self.setup.mc)},
            "cells": cells,
            "best": {mode: dict(zip(("mg", "mc"), self.best(mode))) for mode in MODES},
            "exact_bfs_recall": dict(sorted(self.exact_bfs_recall.items())),
        }


def sweep(graph: GraphImage, queries_fx: np.ndarray, gt: np.ndarray, setup: SweepSetup, progress=None) -> GraphSweep:
    """Run every (mg, mc) in both modes, growing the grid while a best point is on its far edge
    (module docstring); `progress(done, total)` is called after each run."""
    gt = np.asarray(gt)
    if gt.shape[0] != len(queries_fx) or gt.shape[1] < setup.k:
        raise FannsError(f"ground truth {gt.shape} does not cover {len(queries_fx)} queries at k={setup.k}")
    result = GraphSweep(setup)
    shared = setup.bloom is None or setup.bfc_units == 1  # one traversal serves both modes
    per_run = 1 if shared else 2
    done = 0
    while True:
        runs = [(mg, mc) for mg in result.setup.mg for mc in result.setup.mc if ("intra", mg, mc) not in result.cells]
        total = done + len(runs) * per_run + 1
        for mg, mc in runs:
            for modes in [MODES] if shared else [("intra",), ("across",)]:
                _run_cell(result, graph, queries_fx, gt, mg, mc, modes)
                done += 1
                if progress:
                    progress(done, total)
        grown = _grown(result)
        if grown == result.setup:
            break
        result.setup = grown
    exact = replace(setup, bloom=None)
    res = search_batch(graph, queries_fx, exact.traversal(1, 1, "intra"), [], threads=setup.threads)
    result.exact_bfs_recall = {mode: recall_at_k(res.ids, gt, setup.k) for mode in MODES}
    if progress:
        progress(total, total)
    return result


def _run_cell(
    result: GraphSweep, graph: GraphImage, queries_fx: np.ndarray, gt: np.ndarray, mg: int, mc: int, modes
) -> None:
    """Traverse every query at (mg, mc) once and record the cell of each of `modes`."""
    setup = result.setup
    freq = setup.memory.freq_mhz * 1e6
    qpps = [setup.qpp(graph, m) for m in modes]
    pipes = [setup.pipes(m) for m in modes]
    res, beats = shared_search_batch(
        graph, queries_fx, setup.traversal(mg, mc, modes[0]), qpps, pipes, setup.capacity, setup.threads
    )
    rec = recall_at_k(res.ids, gt, setup.k)
    for j, mode in enumerate(modes):
        occ = float(res.occupancy[:, j].mean())
        lat = float(res.latency[:, j].mean())
        roof = setup.memory.channels * setup.capacity * freq / beats[j]
        result.cells[mode, mg, mc] = Cell(
            recall=rec,
            hops=float(res.hops.mean()),
            visited=float(res.visited.mean()),
            bloom_fp=float(res.bloom_fp.mean()),
            latency=lat,
            occupancy=occ,
            qps=min(pipes[j] * freq / occ, roof),
            latency_us=lat / setup.memory.freq_mhz,
        )


def _grown(result: GraphSweep) -> SweepSetup:
    """The setup with mg and/or mc one step larger where a mode's best point is on the far edge
    (and the step stays within `grow_to`); the same setup when nothing grows."""
    s = result.setup
    mg, mc = s.mg, s.mc
    for mode in MODES:
        best_mg, best_mc = result.best(mode)
        if best_mg == max(s.mg) and best_mg < s.grow_to and mg == s.mg:
            mg = (*s.mg, best_mg + 1)
        if best_mc == max(s.mc) and best_mc < s.grow_to and mc == s.mc:
            mc = (*s.mc, best_mc + 1)
    return replace(s, mg=mg, mc=mc)


def format_tables(sweep_result: GraphSweep, title: str, modes: Sequence[str] = MODES) -> str:
    """Plain-text heatmaps in the layout of Falcon Fig. 7.9 (rows mc, columns mg)."""
    s = sweep_result.setup
    lines = []
    specs = [
        ("speedup", "speedup over BFS ({})", "{:6.2f}"),
        ("recall", f"R@{s.k} ({{}})", "{:6.4f}"),
        ("hops", "hops / BFS hops ({})", "{:6.2f}"),
    ]
    for mode in modes:
        label = "intra-query: latency" if mode == "intra" else "across-query: QPS"
        for metric, name, fmt in specs:
            table = sweep_result.table(mode, metric)
            lines.append(f"{title} — {name.format(label if metric == 'speedup' else mode)}")
            lines.append("  mc\\mg " + " ".join(f"{mg:>6d}" for mg in s.mg))
            for i, mc in enumerate(s.mc):
                lines.append(f"  {mc:>5d} " + " ".join(fmt.format(v) for v in table[i]))
        mg, mc = sweep_result.best(mode)
        cell = sweep_result.cells[mode, mg, mc]
        base = sweep_result.cells[mode, 1, 1]
        lines.append(
            f"{title} — best {mode}-query (mg={mg}, mc={mc}): speedup {sweep_result.speedup(mode, mg, mc):.2f}x, "
            f"R@{s.k} {cell.recall:.4f} (BFS {base.recall:.4f}), latency {cell.latency_us:.1f} us "
            f"(BFS {base.latency_us:.1f} us), {cell.qps:,.0f} QPS"
        )
        lines.append("")
    return "\n".join(lines)
