"""The DSE's host-memory tier: an index whose lists do not fit the board keeps them in host memory
and caches the ones a draft query predicts in HBM (TeleRAG lookahead prefetch, docs/host_tier.md).

Why: the DSE refuses a design whose PQ channels cannot hold the lists
(`fanns.model.ivfpq.options`), so an index larger than the card had no design at all. Each index of
the DSE larger than the board's memory (`host_mode`: the board file gives a `host` link) is a
host-memory candidate: its stages are chosen as for an index that fits (the search runs on
`compute_board`: the board with memory groups large enough to hold the index on any channel,
every other figure the same), and each design then reads every list from host memory through its
host ports, with an HBM cache region on its PQ channels sized by
`fanns.model.ivfpq.prefetch_model.choose_cache` for the time the LLM leaves (`choice`). The cache is
split between a pinned region (the hottest lists by the workload's access profile, in HBM for good)
and the prefetched ring: per cache size the DSE compares `PINNED_SHARES` of it by the model's mean
latency (`PrefetchModel.split`) and keeps the best; a workload without probed cell ids pins nothing.
Indexes that fit are designed exactly as before, in the same exploration;
`fanns.model.ivfpq.host_mix` ranks the two kinds against each other.

The hit rates follow the per-rank profile measured on builtin:text-384's draft/final pairs
(`text_profile`, shipped in text_hit_profile.json with its source), as `PrefetchModel` applies it
to an index without pairs of its own.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from fanns.boards import BUFFER_PAGE, Board
from fanns.checks import check_llm_ms
from fanns.model.ivfpq.points import DesignPoint
from fanns.model.ivfpq.prefetch import budget_for
from fanns.model.ivfpq.prefetch_model import HitProfile, PrefetchModel
from fanns.model.ivfpq.workload import Workload
from fanns.numerics import ID_BITS

PROFILE_FILE = Path(__file__).parent / "text_hit_profile.json"
CACHE_RATIOS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0)
"""Cache sizes the DSE compares, in multiples of the bytes a query probes (hits saturate near 3x
on the text set's pairs: benchmarks/host_tier.py), those the PQ channels hold and the channels'
whole capacity."""
PINNED_SHARES = (0.0, 0.25, 0.5, 0.75)
"""Shares of the cache the DSE compares for the pinned region (the hottest lists by the workload's
access profile, kept in HBM for good; `PrefetchModel.split`), the ring the rest."""
BUDGET_RATIOS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
"""Prefetch budgets of the reported curve, in multiples of the bytes a query probes."""
GB = 1e9


def text_profile() -> HitProfile:
    """The per-rank hit profile measured on builtin:text-384's pairs (see the file's `source`)."""
    data = json.loads(PROFILE_FILE.read_text())
    return HitProfile(np.array(data["ratios"], dtype=np.float64), np.array(data["per_rank"], dtype=np.float64))


def index_bytes(w: Workload) -> int:
    """Bytes of the index's lists: an m-byte code and an id per vector."""
    return int(w.n * (w.m + ID_BITS // 8))


def board_bytes(board: Board) -> int:
    """Bytes of all the board's memory groups."""
    return sum(g.capacity_bytes * g.count for g in board.memory)


def fits(w: Workload, board: Board) -> bool:
    """Whether the index's lists fit the sum of the board's memory groups (the per-channel layout
    may still refuse it: `fanns.model.ivfpq.options`)."""
    return index_bytes(w) <= board_bytes(board)


def can_cache(board: Board) -> bool:
    """Whether a channel of the board can hold a cache region: room after the page the driver
    keeps unused at each bank's start (`fanns.boards.BUFFER_PAGE`)."""
    return any(g.capacity_bytes > BUFFER_PAGE for g in board.memory)


def host_mode(w: Workload, board: Board) -> bool:
    """Whether the DSE designs workload `w` with its lists in host memory: its index does not fit
    the board's memory, the board file has `host` link figures and its channels can hold a cache.
    Decided per index: in one exploration the indexes that fit get designs with their lists on the
    card, the others host-memory designs."""
    return board.host is not None and can_cache(board) and not fits(w, board)


def compute_board(board: Board, workloads: list[Workload]) -> Board:
    """`board` with every memory group's channel large enough for the largest of `workloads` (the
    host-memory ones; twice its bytes: the per-channel layout pads lists to whole beats), so their
    stage options are enumerated as for an index that fits; the lists will live in host memory, the
    channels hold the cache."""
    need_gb = 2 * max(index_bytes(w) for w in workloads) / (1 << 30)
    return dataclasses.replace(
        board, memory=tuple(dataclasses.replace(g, capacity_gb=max(g.capacity_gb, need_gb)) for g in board.memory)
    )


def _summary(row: dict) -> dict:
    return {k: row[k] for k in ("qps", "latency_mean_us", "latency_p99_us", "wait_mean_us", "link_bound")}


def choice(point, board: Board, llm_ms: float, profile: HitProfile | None = None) -> dict:
    """The cache of design `point` on `board` with every list in host memory, for an LLM leaving
    `llm_ms`: the curve per cache size (`PrefetchModel.cache_curve`), the chosen size, its budget
    (TeleRAG's B x t_LLM, at most the cache), expected cell hit rate, latency and QPS, beside no
    prefetch (every list over the link) and the index in HBM (what a larger card would give)."""
    return _choice(point, PrefetchModel(point, board, profile or text_profile()), board, llm_ms)


def annotate(point: DesignPoint, board: Board, llm_ms: float, load_qps: float | None = None) -> DesignPoint:
    """Make DSE design `point` a host-memory candidate: its cache (`choice`) as `point.host_tier`,
    and as `point.latency` the latency profiles of a query with that cache after its LLM ends,
    alone and at `load_qps` (`PrefetchModel.latency`): what an SLO is checked against and the
    records report, never the lists-in-HBM profile of `fanns.model.ivfpq.points.annotate_latency`."""
    model = PrefetchModel(point, board, text_profile())
    c = _choice(point, model, board, llm_ms)
    point.host_tier = c
    point.latency = model.latency(c["cache_bytes"], c["pinned_share"], c["llm_ms"] / 1e3, load_qps)
    return point


def _choice(point: DesignPoint, model: PrefetchModel, board: Board, llm_ms: float) -> dict:
    llm_ms = check_llm_ms(llm_ms, "the LLM time (ms)")
    whole = model.cache_max / model.probed * (1 - 1e-12)  # the PQ channels' whole capacity, as a ratio
    shares = PINNED_SHARES if model.profiled and model.w.queries > 1 else (0.0,)
    curve = model.cache_curve(llm_ms / 1e3, sorted({*(r for r in CACHE_RATIOS if r < whole), whole}), shares)
    chosen = next(r for r in curve["curve"] if r["cache_bytes"] == curve["chosen_bytes"])
    pinned = model.pinned_lists(chosen["pinned_share"] * chosen["cache_bytes"])
    st = point.stages.pq_dist
    return {
        "llm_ms": llm_ms,
        "index_gb": round(index_bytes(point.workload) / GB, 9),
        "board_memory_gb": round(board_bytes(board) / GB, 9),
        "link_gbps": round(model.link.bandwidth_bps / GB, 3),
        "link": "min(board file host bandwidth, PQ channels x PQ port bytes x clock) "
        "(fanns.model.ivfpq.skew.host_bandwidth)",
        "cache_memory": st.memory,
        "cache_max_gb": round(model.cache_max / GB, 3),
        "probed_mb": round(model.probed / 1e6, 3),
        "budget_rule": "b_p = min(B x t_LLM, cache) (TeleRAG Eq. 3)",
        "hit_profile": "builtin:text-384 draft/final pairs (fanns/model/ivfpq/text_hit_profile.json)",
        "cache_bytes": chosen["cache_bytes"],
        "pinned_rule": "the hottest lists by the sample's access counts (skew.place_lists) in "
        f"{', '.join(f'{s:g}' for s in shares)} of the cache, the split of the lowest mean latency "
        "(pinned hits out of sample: each half of the queries against the other half's lists)"
        if model.profiled
        else "none: the workload records no probed cells (no access profile)",
        "pinned_share": chosen["pinned_share"],
        "pinned": [int(i) for i in np.nonzero(pinned)[0]],
        "pinned_bytes": chosen["pinned_bytes"],
        "ring_bytes": chosen["ring_bytes"],
        "pinned_hit": chosen["pinned_hit"],
        "budget_bytes": int(budget_for(model.link, llm_ms / 1e3, chosen["ring_bytes"])),
        "cell_hit": chosen["cell_hit"],
        "with_prefetch": _summary(chosen),
        "without_prefetch": _summary(model.baseline(False)),
        "all_in_memory": _summary(model.baseline(True)),
        "curve": [{k: r[k] for k in CURVE_KEYS} for r in curve["curve"]],
        "splits": [{k: r[k] for k in CURVE_KEYS} for r in curve["splits"]],
        "budget_curve": budget_curve(model, chosen["pinned_share"] * chosen["cache_bytes"]),
    }


CURVE_KEYS = (
    "cache_bytes",
    "pinned_share",
    "pinned_lists",
    "pinned_bytes",
    "budget_bytes",
    "ratio",
    "cell_hit",
    "pinned_hit",
    "qps",
    "latency_mean_us",
)
"""The figures of each cache size (`curve`: its best split) and each split compared (`splits`)."""


def budget_curve(model: PrefetchModel, pinned_region: float = 0.0) -> list[dict]:
    """Hit rate, latency and QPS vs prefetch budget (`BUDGET_RATIOS` x a query's probed bytes, within
    what the PQ channels hold besides a pinned region of `pinned_region` bytes, whose lists stay
    cached: `PrefetchModel.split`), the LLM leaving exactly the time that hides each budget
    (t_LLM = b_p / B): the curve the sweep report draws."""
    room = model.cache_max - int(model.footprint[model.pinned_lists(pinned_region)].sum())
    pinned = model.pinned_probes(pinned_region)
    rows = []
    for r in BUDGET_RATIOS:
        budget = r * model.probed
        if budget > room:
            break
        t = budget / model.link.bandwidth_bps
        at = model.at(budget, t, pinned)
        rows.append(
            {
                "budget_bytes": at["budget_bytes"],
                "ratio": r,
                "t_llm_ms": round(t * 1e3, 4),
                **{k: at[k] for k in ("cell_hit", "qps", "latency_mean_us", "latency_p99_us")},
            }
        )
    return rows


def size_text(nbytes: float) -> str:
    """Bytes in the largest decimal unit that keeps a number of at least 1 (3 significant digits)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def split_text(c: dict) -> str:
    """How the cache is split between the pinned region and the prefetched ring."""
    if not c.get("pinned"):
        why = "no access profile" if c.get("pinned_rule", "").startswith("none") else "pinning did not pay"
        return f"all of it a prefetched ring (nothing pinned: {why})"
    return (
        f"{len(c['pinned'])} hottest lists pinned in {size_text(c['pinned_bytes'])} "
        f"({100 * c['pinned_hit']:.0f} % of the probes), a ring of {size_text(c['ring_bytes'])}"
    )


def choice_text(c: dict) -> str:
    """The choice in a few words: where the lists are and the cache."""
    return (
        f"{size_text(c['index_gb'] * GB)} of lists, {size_text(c['board_memory_gb'] * GB)} on the board: the lists "
        f"in host memory (host port {c['link_gbps']:g} GB/s), an HBM cache of {size_text(c['cache_bytes'])} "
        f"({split_text(c)}) for an LLM leaving {c['llm_ms']:g} ms (budget {size_text(c['budget_bytes'])}, "
        f"expected cell hit rate {100 * c['cell_hit']:.0f} %)"
    )


def summary_line(c: dict) -> str:
    """One line for the DSE's console output."""
    w, wo = c["with_prefetch"], c["without_prefetch"]
    return (
        f"{choice_text(c)}: {w['qps']:,.0f} QPS / {w['latency_mean_us']:,.1f} us mean latency with prefetch, "
        f"{wo['qps']:,.0f} QPS / {wo['latency_mean_us']:,.1f} us without"
    )
