"""Recall against nprobe for every explored index, as faiss computes it and as the hardware does.

Why a second pass over the exploration: the explorer measures faiss's float recall at every
nprobe but the hardware-faithful recall (the whole-accelerator reference model, the bits the
generated accelerator returns) only at each goal's nprobe. A report that compares indexes needs
the hardware curve too, so this module evaluates the reference model on a grid of nprobe values
up to where the float curve saturates, and records every sample query's probed cells up to the
grid's end — the work the performance model needs to predict QPS at those nprobe values (the
same cells the explorer records for its goals, `fanns.model.ivfpq.workload`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.datasets.dataset import Dataset
from fanns.index.goals import RecallGoal
from fanns.index.ivfpq import IvfPqIndexData, extract, host_vectors
from fanns.index.ivfpq_lists import read_index
from fanns.index.recall import measure_recall
from fanns.numerics import IvfPqFormat
from fanns.paths import inside
from fanns.reference.ivfpq import IvfPqReference

SATURATION_TOLERANCE = 0.005
"""An index's recall counts as saturated from the smallest nprobe within this of its best."""


def geometric_grid(p_max: int) -> list[int]:
    """1, 2, 3, 4, 6, 8, 12, 16, ... up to `p_max` (about two points per octave)."""
    out, p = [], 1
    while p <= p_max:
        out.append(p)
        p = p + 1 if p < 4 else (p * 3 // 2 if (p & (p - 1)) == 0 else p * 4 // 3)
    return out


def saturation_nprobe(curves: dict[str, list[float]]) -> int:
    """The smallest nprobe at which every measured curve is within SATURATION_TOLERANCE of its maximum."""
    p = 1
    for values in curves.values():
        v = np.asarray(values)
        p = max(p, int(np.flatnonzero(v >= v.max() - SATURATION_TOLERANCE)[0]) + 1)
    return p


@dataclass
class IndexCurves:
    """One explored index with its hardware-faithful recall on the grid and its probes."""

    record: dict  # the index's record in explore.json
    data: IvfPqIndexData
    fmt: IvfPqFormat
    index: object  # the faiss index (for CPU timing)
    grid: list[int]
    hw: dict[str, list[float]]  # measure name -> recall at each grid nprobe
    hw_queries: int
    probes: np.ndarray  # [queries used, max(grid)] cells, nearest first

    @property
    def name(self) -> str:
        return self.record["index"]

    @property
    def list_sizes(self) -> np.ndarray:
        return self.data.list_sizes.astype(np.int64)

    def float_curve(self, measure: str) -> list[float]:
        return self.record["curve"][measure]

    def to_dict(self) -> dict:
        float_end = min(self.record["nlist"], 2 * max(self.grid))
        return {
            "index": self.name,
            "nlist": self.record["nlist"],
            "m": self.record["m"],
            "opq": self.record["opq"],
            "float": {
                "nprobe": list(range(1, float_end + 1)),
                **{k: v[:float_end] for k, v in self.record["curve"].items() if k != "nprobe"},
            },
            "hw": {"nprobe": list(self.grid), **self.hw},
            "hw_queries": self.hw_queries,
            "goals": {
                g: (
                    {
                        "nprobe": r["nprobe"],
                        "recall": r["recall"],
                        "recall_interval": r["recall_interval"],
                        "selection_recall": r["selection_recall"],
                        "hw_recall": r["hw_recall"],
                    }
                    if r["reached"]
                    else {"nprobe": None, "best_recall": r["best_recall"]}
                )
                for g, r in sorted(self.record["goals"].items())
            },
        }


def index_curves(
    ds: Dataset,
    folder: Path,
    record: dict,
    goals: list[RecallGoal],
    queries_used: int,
    hw_queries: int,
    max_nprobe: int,
) -> IndexCurves:
    """Hardware-faithful recall of one index on the nprobe grid (see the module docstring).

    The grid runs to the float curve's saturation (at most `max_nprobe`) and always holds the
    goals' nprobe values; the hardware recall uses the first `hw_queries` queries.
    """

    index = read_index(inside(Path(folder), record.get("path"), f"{folder}/explore.json: path"))
    data = extract(index, ds.metric)
    fmt = IvfPqFormat.from_dict(dict(record["format"]))
    measures = {g.name: g.measure for g in goals}
    curves = {name: record["curve"][name] for name in measures}
    goal_nprobes = {r["nprobe"] for r in record["goals"].values() if r["reached"]}
    top = min(record["nlist"], max(min(saturation_nprobe(curves), max_nprobe), *goal_nprobes, 1))
    grid = sorted(set(geometric_grid(top)) | {top} | goal_nprobes)
    queries = host_vectors(ds.queries[:queries_used], ds.metric)
    kmax = max(g.k for g in goals)
    gt = ds.groundtruth(kmax)[:queries_used]
    ref = IvfPqReference(data, fmt)
    probes = ref.probe(ref.prepare(queries), grid[-1])
    hw_n = min(hw_queries, queries_used)
    hw: dict[str, list[float]] = {name: [] for name in measures}
    for p in grid:
        _, ids = ref.search(queries[:hw_n], p, kmax)
        for name, measure in measures.items():
            hw[name].append(round(measure_recall(ids, gt[:hw_n], measure), 6))
    return IndexCurves(record, data, fmt, index, grid, hw, hw_n, probes)
