"""What a generated graph design must return: the DST reference configured as the hardware is.

Why: the RTL bench, `fanns sim`, the project writer and the tests all compare a QPP with the
traversal reference (`fanns.index.graph_traversal.dst`) and its cycle model
(`fanns.model.graph.qpp.simulate`); the reference must see the design's Bloom filter (one per
BFC unit, node i checked by unit i % units), candidate queue capacity and run-time (l, k, mg, mc),
and its keys must be laid out as the hardware's result row. That configuration lives here once.

Why the hardware's order of events is reproducible: the controller launches groups in a fixed
order (pop order of C, a group's candidates in key order), every stage between the controller
and the inserter is first-in first-out, the dispatcher sends node i to unit i % units (so each
unit's Bloom filter sees its nodes in the reference's order), and the inserter commits group g
only after the sync of group g-1 with the threshold latched at that sync. Timing moves events
but never reorders them, so the reference replays the same event order (docs/graph_architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fanns.design.graph import GraphDesign, Runtime
from fanns.index.graph import GraphImage
from fanns.index.graph_traversal import Trace, TraversalConfig, dst
from fanns.model.graph.qpp import QppConfig, simulate

MISSING_KEY = np.uint64(2**64 - 1)
STATS = ("hops", "visited", "checks", "groups")


def traversal_config(design: GraphDesign, runtime: Runtime | None = None) -> TraversalConfig:
    rt = runtime or design.runtime
    return TraversalConfig(
        l=rt.l,
        k=rt.k,
        mg=rt.mg,
        mc=rt.mc,
        cand_size=design.queues.cand,
        bloom=design.bloom.pe(),
        bfc_units=design.bfc_units,
    )


@dataclass
class GraphReference:
    """Per query: the result row's keys [nq, k_max] (uint64, all ones past k), the statistics the
    QPP reports (hops, visited, checks, groups) and the traces for the cycle model."""

    keys: np.ndarray
    stats: dict[str, np.ndarray]
    traces: list[Trace]

    def predicted_cycles(self, design: GraphDesign, latency_cycles: int, runtime: Runtime | None = None) -> np.ndarray:
        """The cycle model's latency per query (the QPP's `cycles` statistic) at a memory latency."""
        cfg = QppConfig.of_design(design, latency_cycles, runtime)
        return np.array([simulate(t, cfg).latency for t in self.traces], dtype=np.int64)


def reference(
    design: GraphDesign, graph: GraphImage, queries_fx: np.ndarray, runtime: Runtime | None = None
) -> GraphReference:
    cfg = traversal_config(design, runtime)
    nq = len(queries_fx)
    keys = np.full((nq, design.queues.k_max), MISSING_KEY, dtype=np.uint64)
    stats = {name: np.zeros(nq, dtype=np.int64) for name in STATS}
    traces = []
    for i, q in enumerate(np.asarray(queries_fx)):
        r = dst(graph, q, cfg, trace=True)
        found = r.ids >= 0
        keys[i, : int(found.sum())] = (r.dists[found].astype(np.uint64) << np.uint64(32)) | r.ids[found].astype(
            np.uint64
        )
        for name, value in zip(STATS, (r.hops, r.visited, r.checks, r.trace.groups)):
            stats[name][i] = value
        traces.append(r.trace)
    return GraphReference(keys, stats, traces)
