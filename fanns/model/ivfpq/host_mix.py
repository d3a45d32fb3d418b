"""Both kinds of candidate in one exploration: indexes that fit the board's memory keep their lists
on the card, larger ones (on a board file with a `host` link) keep them in host memory with a
prefetched HBM cache (docs/host_tier.md, "The DSE").

Why: a user whose best-recall index is too big for the card, beside smaller indexes that fit, must
see both and the one that serves better, compared like with like. The rule (`RANK_RULE`,
`DesignPoint.rank_key`): a candidate with its lists on the card is ranked by its QPS; a host-memory
candidate by its QPS with prefetch for the LLM time its cache is sized for
(`fanns.model.ivfpq.host_cache.choice`), never by its in-HBM figures, which it cannot reach. This
module splits the workloads into the two kinds, says why an index larger than the board gets no
design, and puts the choice into words and records.
"""

from __future__ import annotations

from fanns.boards import BUFFER_PAGE, Board
from fanns.model.ivfpq import host_cache
from fanns.model.ivfpq.points import DesignPoint, Outcome
from fanns.model.ivfpq.workload import Workload

KINDS = ("card", "host")
"""The kinds of candidate: the lists in the board's memory, or in host memory."""
RANK_RULE = (
    "candidates are ranked by QPS: one with its lists on the card by its QPS, one with its lists in host memory by "
    "its QPS with prefetch for the LLM time its cache is sized for (--llm-ms), never by its in-HBM figures"
)


def split(workloads: list[Workload], board: Board) -> tuple[list[Workload], list[Workload]]:
    """(the workloads designed with their lists on the card, those designed with them in host
    memory: `host_cache.host_mode`). Without a `host` link every workload is of the first kind, and
    the stage options refuse an index larger than the board's memory (`refusals` says why)."""
    host = [w for w in workloads if host_cache.host_mode(w, board)]
    return [w for w in workloads if not host_cache.host_mode(w, board)], host


def refusals(card: list[Workload], board: Board) -> list[str]:
    """Why an index larger than the board's memory gets no design: the board file has no `host`
    link to keep its lists in host memory, or no channel with room for a cache region (an empty list
    when the board can hold a host-memory design)."""
    big = [w for w in card if not host_cache.fits(w, board)]
    if not big or (board.host is not None and host_cache.can_cache(board)):
        return []
    spec = f"boards/{board.name}.yaml (shipped)" if board.builtin else str(board.path)  # no install path in records
    if board.host is None:
        lacks = (
            "has no `host` link to keep them in host memory: add `host: {capacity_gb, bandwidth_gbps, "
            "latency_us}` (docs/host_tier.md)"
        )
    else:
        lacks = (
            f"gives channels of at most {host_cache.size_text(max(g.capacity_bytes for g in board.memory))}, no "
            f"room for a cache region beside the {BUFFER_PAGE:,}-byte page the driver keeps at each bank's start"
        )
    return [
        f"{w.label()}: its lists ({host_cache.size_text(host_cache.index_bytes(w))}) exceed the memory of board "
        f"{board.name} ({host_cache.size_text(host_cache.board_bytes(board))}), and its board file {spec} {lacks}; "
        "or use a board with more memory"
        for w in big
    ]


def kind(p: DesignPoint) -> str:
    return "host" if p.host_tier else "card"


def where(p: DesignPoint) -> str:
    """Where the candidate's lists are, in words."""
    return "in host memory" if p.host_tier else f"in {p.stages.pq_dist.memory.upper()}"


def candidate_text(p: DesignPoint) -> str:
    """One candidate and the figure it is ranked by."""
    head = f"{p.workload.label()} {where(p)}"
    if not p.host_tier:
        return f"{head} at {p.qps:,.0f} QPS"
    c = p.host_tier
    return (
        f"{head} at {p.rank_qps:,.0f} QPS with prefetch (an LLM leaving {c['llm_ms']:g} ms, a host link of "
        f"{c['link_gbps']:g} GB/s; {p.qps:,.0f} QPS were its lists in HBM)"
    )


def why_text(outcome: Outcome) -> str | None:
    """Which kind was chosen and why, in one sentence; None when no index was larger than the board
    (nothing to choose between) or nothing was found."""
    best = outcome.best
    card, host = split(outcome.workloads, outcome.board)
    if best is None or not host:
        return None
    others = [p for k, p in outcome.kind_best.items() if k != kind(best)]
    if others:
        return f"chosen: {candidate_text(best)}, which beats {candidate_text(others[0])} ({RANK_RULE})"
    if card and kind(best) == "host":
        return (
            f"chosen: {candidate_text(best)}; {_labels(card)} fit the board's memory, but no design of "
            f"{'it' if len(card) == 1 else 'them'} with the lists on the card fits the board"
        )
    if kind(best) == "card":
        return (
            f"chosen: {candidate_text(best)}; no design of {_labels(host)} with the lists in host memory fits the board"
        )
    missed = [u["index"] for u in outcome.unreachable]
    short = f"; {_labels(missed)} {'does' if len(missed) == 1 else 'do'} not reach {outcome.goal}" if missed else ""
    return (
        f"chosen: {candidate_text(best)}: no index that reaches {outcome.goal} fits the board's memory "
        f"({host_cache.size_text(host_cache.board_bytes(outcome.board))}){short}"
    )


def lines(outcome: Outcome) -> list[str]:
    """What `fanns dse` and `fanns generate` print about the kinds: the choice and why, and the
    indexes larger than the board that got no design."""
    text = why_text(outcome)
    return ([text] if text else []) + [f"not designed: {r}" for r in outcome.refused if outcome.best is not None]


def _labels(items: list) -> str:
    """Index labels joined by "and" (the labels hold commas)."""
    return " and ".join(w if isinstance(w, str) else w.label() for w in items)


def summary(p: DesignPoint) -> dict:
    """A candidate in a record: its index, where its lists are, and the figures it is ranked by."""
    out = {
        "index": p.workload.index,
        "nprobe": p.workload.nprobe,
        "lists": "host memory" if p.host_tier else p.stages.pq_dist.memory,
        "rank_qps": round(p.rank_qps, 1),
        "ranked_by": "its QPS with prefetch" if p.host_tier else "its QPS",
        "qps_lists_on_card": round(p.qps, 1),
    }
    # a host-memory candidate's profile is the one with prefetch, once the LLM ends (`host_cache.annotate`)
    out["latency_mean_us"] = round(p.latency["alone"].mean_us, 3) if "alone" in p.latency else None
    if p.host_tier:
        out["llm_ms"] = p.host_tier["llm_ms"]
    return out


def record(outcome: Outcome) -> dict | None:
    """The kinds of dse.json and of the sweep report: the rule, each kind's best candidate, the
    choice and why; None when no index was larger than the board's memory."""
    text = why_text(outcome)
    if text is None and not outcome.refused:
        return None
    return {
        "rule": RANK_RULE,
        "chosen": kind(outcome.best) if outcome.best else None,
        "why": text,
        "candidates": {k: summary(p) for k, p in sorted(outcome.kind_best.items())},
        "refused": outcome.refused,
    }
