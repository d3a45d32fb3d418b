"""Pinned graph designs: a `GraphDesign` from explicit hardware choices instead of the DSE.

Why: tests, examples and users who want one particular pipeline (a small Bloom filter for a
small graph, a given number of BFC units) need a valid design.yaml without running the search.
The memory plan comes from the same function the DSE uses (`fanns.model.graph.dse.memory_plan`),
so a pinned design is exactly what the DSE would write for the same choices.
"""

from __future__ import annotations

from fanns.boards import load_board
from fanns.design.graph import BloomSpec, GraphDesign, Limits, Queues, Runtime, graph_ref
from fanns.index.graph import GraphImage
from fanns.model.graph.dse import memory_plan


def pinned_graph_design(
    graph: GraphImage,
    *,
    board: str = "u250",
    mode: str = "intra",
    units: int = 1,
    pipelines: int = 1,
    l_max: int = 64,
    cand: int | None = None,
    k_max: int = 10,
    bloom: tuple[int, int] = (3, 3 * 2**16),
    limits: tuple[int, int] = (8, 4),
    runtime: tuple[int, int, int, int] | None = None,
    channels: int | None = None,
    outstanding: int = 64,
    clock_mhz: float | None = None,
    graph_path: str | None = None,
) -> GraphDesign:
    """A validated design; `runtime` = (l, k, mg, mc), by default (l_max, k_max, 1, 1);
    `channels` = graph channels of the board's first memory group (default: all, rounded down
    to a power of two)."""

    b = load_board(board)
    l, k, mg, mc = runtime or (l_max, k_max, 1, 1)
    design = GraphDesign(
        board=b.name,
        board_file=None if b.builtin else b.spec,
        clock_mhz=float(clock_mhz if clock_mhz is not None else b.clock_mhz),
        util=0.6,
        graph=graph_ref(graph, graph_path),
        mode=mode,
        pipelines=pipelines,
        bfc_units=units,
        queues=Queues(l_max=l_max, cand=cand or l_max, k_max=k_max),
        bloom=BloomSpec(h=bloom[0], b=bloom[1]),
        limits=Limits(*limits),
        runtime=Runtime(l=l, k=k, mg=mg, mc=mc),
        memory=memory_plan(b, channels, outstanding),
    )
    design.validate()
    return design
