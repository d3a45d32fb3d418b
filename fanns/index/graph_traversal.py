"""Graph traversal reference models: BFS (Falcon Algorithm 1), MCS and DST (Algorithm 2).

Why this module exists: it is the specification of what the graph accelerator returns. It works on
the unified graph format with the hardware arithmetic (integer vectors, exact squared L2, selection
keys ``dist << 32 | id`` so ties break on the smaller id) and with the hardware's visited filter
(the Bloom PE's reference model, or an exact visited set).

DST semantics, defined so that the hardware can reproduce them exactly whatever its timing:

* A *group* is up to `mc` candidates taken from the candidate queue C in ascending key order,
  each no farther than the current threshold ``Max(R)`` (the l-th smallest key in the result queue
  R, or +infinity while R holds fewer than l keys). At most `mg` groups are in flight.
* Groups are evaluated in the order they are launched: the neighbour lists of a group's candidates
  (candidates in key order, neighbours in adjacency order) pass the visited filter in that order,
  and unvisited neighbours get their distance computed. Because every pipeline stage of the
  accelerator is first-in first-out, groups also *complete* in launch order.
* A group's new keys are committed to C (bounded to `cand_size`, dropping the largest) and R
  (bounded to l) atomically when it completes: the hardware's queue inserter holds the next
  group's distances until the controller has synchronised (sorted the queues and launched new
  groups) for the completed one. Keys above the threshold at commit time are dropped instead of
  inserted (they could never enter R nor qualify from C, since Max(R) never grows). After each
  completion the controller refills the pipeline to mg groups (Algorithm 2, lines 6-13); the
  search ends when no group is in flight.

So the result depends only on the launch order, never on cycle timing: the cycle-level model
(`fanns.model.graph.qpp`) turns the trace of a traversal into time, and the hardware must return
exactly these neighbours for the same (mg, mc). BFS is mg = mc = 1; MCS is mg = 1. With
``cand_size >= l`` the bounded C loses nothing: a candidate beyond the l-th in C has at least l
smaller keys inserted before it and can never satisfy ``key <= Max(R)`` again.

With a Bloom filter and several BFC units, each unit owns one filter (h, b) and checks the ids
``id % bfc_units == unit`` (the unit that also fetches the node's vector from channel id % C);
false positives are counted against an exact visited set kept alongside.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from fanns.errors import FannsError
from fanns.index.graph import GraphImage
from fanns.numerics import ID_BITS
from fanns.pe.bloom import Bloom

INF_KEY = np.uint64(2**64 - 1)


@dataclass(frozen=True)
class TraversalConfig:
    """Parameters of one traversal: queue sizes, DST (mg, mc), visited filter."""

    l: int = 64
    k: int = 10
    mg: int = 1
    mc: int = 1
    cand_size: int = 0  # 0: the same as l
    bloom: Bloom | None = None  # None: an exact visited set
    bfc_units: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.l:
            raise FannsError(
                f"k={self.k} must be between 1 and the result queue size l={self.l}", hint="raise l or lower k"
            )
        if self.mg < 1 or self.mc < 1:
            raise FannsError(f"mg={self.mg} and mc={self.mc} must be at least 1")
        if self.cand_size < 0 or self.bfc_units < 1:
            raise FannsError("cand_size must be >= 0 and bfc_units >= 1")

    @property
    def cand_capacity(self) -> int:
        return self.cand_size or self.l

    @property
    def mode(self) -> str:
        return "BFS" if self.mg == self.mc == 1 else "MCS" if self.mg == 1 else "DST"


@dataclass
class Trace:
    """What a traversal did, in launch order, for the cycle-level model.

    Group g launched after the completion of group `group_parent[g]` (-1: at the start). Its
    candidates are ``cand_node[group_cands[g]:group_cands[g+1]]``. Its visited-filter checks are
    ``check_node[group_checks[g]:group_checks[g+1]]``; `check_cand` is the candidate whose
    neighbour list produced a check (-1 for the entry node's own check at the head of group 0) and
    `check_new` tells whether the node was fetched and its distance computed; `new_kept` (one
    entry per new check) whether its key was inserted into the queues at the group's commit or
    dropped for being above the threshold Max(R) of that moment.
    """

    group_parent: np.ndarray
    group_cands: np.ndarray
    group_checks: np.ndarray
    cand_node: np.ndarray
    cand_degree: np.ndarray
    check_node: np.ndarray
    check_cand: np.ndarray
    check_new: np.ndarray
    new_kept: np.ndarray  # per new check, in order: its key was inserted (not above Max(R))
    mg: int = 1  # the DST parameters that produced the trace (the controller's refill rounds)
    mc: int = 1

    @property
    def groups(self) -> int:
        return len(self.group_parent)


@dataclass
class TraversalResult:
    ids: np.ndarray  # int64 [k], nearest first (-1 where fewer than k nodes were found)
    dists: np.ndarray  # int64 [k]
    hops: int  # candidates evaluated
    visited: int  # distances computed (vectors fetched), the entry included
    checks: int  # ids passed through the visited filter
    bloom_fp: int  # unvisited ids the Bloom filter reported as visited
    trace: Trace | None = field(default=None, repr=False)


class VisitedFilter:
    """The exact visited set, and optionally the per-unit Bloom filters the hardware uses."""

    def __init__(self, n: int, cfg: TraversalConfig):
        self.exact = np.zeros(n, dtype=bool)
        self.bloom = cfg.bloom
        self.units = cfg.bfc_units
        self.states = [cfg.bloom.new_state() for _ in range(cfg.bfc_units)] if cfg.bloom else []
        self.false_positives = 0

    def check(self, ids: np.ndarray) -> np.ndarray:
        """Test-and-set `ids` in order; return the mask of ids reported *not* visited."""
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        truly_new = ~self.exact[ids] & (first[inverse] == np.arange(len(ids)))
        self.exact[ids] = True
        if self.bloom is None:
            return truly_new
        reported = np.empty(len(ids), dtype=bool)
        for unit, state in enumerate(self.states):
            sel = (ids % self.units) == unit if self.units > 1 else slice(None)
            reported[sel] = self.bloom.test_and_set(state, ids[sel])
        self.false_positives += int(np.count_nonzero(reported & truly_new))
        return ~reported


def _keys(dists: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return (dists.astype(np.uint64) << np.uint64(ID_BITS)) | ids.astype(np.uint64)


def _result(keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    keys = keys[:k]
    ids = np.full(k, -1, dtype=np.int64)
    dists = np.full(k, -1, dtype=np.int64)
    ids[: len(keys)] = (keys & np.uint64((1 << ID_BITS) - 1)).astype(np.int64)
    dists[: len(keys)] = (keys >> np.uint64(ID_BITS)).astype(np.int64)
    return ids, dists


def dst(graph: GraphImage, query: np.ndarray, cfg: TraversalConfig, trace: bool = False) -> TraversalResult:
    """Delayed-Synchronization Traversal of one integer query (BFS: mg = mc = 1; MCS: mg = 1)."""
    q = np.asarray(query, dtype=np.int64)
    filt = VisitedFilter(graph.n, cfg)
    nbrs, degree = graph.neighbors, graph.degree
    rec = _TraceRecorder() if trace else None
    stats = {"hops": 0, "checks": 0, "visited": 0}

    def evaluate(cands: np.ndarray, parent: int, entry_check: bool) -> np.ndarray:
        lists = [nbrs[c, : degree[c]] for c in cands]
        ids = np.concatenate(([np.array([graph.entry])] if entry_check else []) + lists).astype(np.int64)
        new = filt.check(ids)
        fresh = ids[new]
        stats["hops"] += len(cands)
        stats["checks"] += len(ids)
        stats["visited"] += len(fresh)
        if rec is not None:
            rec.group(parent, cands, degree[cands], ids, new, entry_check)
        return _keys(graph.fmt.l2(q, graph.vectors[fresh]), fresh)

    # The entry node: visited, in R, and evaluated as the first group (Algorithm 2, lines 1-2).
    first = evaluate(np.array([graph.entry]), -1, True)
    R, C = first[:1], np.empty(0, dtype=np.uint64)
    pending = deque([first[1:]])
    completed = 0
    while pending:
        new = pending.popleft()
        threshold = R[-1] if len(R) == cfg.l else INF_KEY
        kept = new <= threshold  # farther keys can never enter R nor qualify from C: dropped
        if rec is not None:
            rec.kept.append(kept if completed else np.concatenate([[True], kept]))
        new = new[kept]
        C = np.sort(np.concatenate([C, new]))[: cfg.cand_capacity]
        R = np.sort(np.concatenate([R, new]))[: cfg.l]
        while len(pending) < cfg.mg:
            threshold = R[-1] if len(R) == cfg.l else INF_KEY
            take = int(np.count_nonzero(C[: cfg.mc] <= threshold))
            if take == 0:
                break
            group, C = C[:take], C[take:]
            pending.append(evaluate((group & np.uint64((1 << ID_BITS) - 1)).astype(np.int64), completed, False))
        completed += 1
    ids, dists = _result(R, cfg.k)
    return TraversalResult(
        ids=ids,
        dists=dists,
        hops=stats["hops"],
        visited=stats["visited"],
        checks=stats["checks"],
        bloom_fp=filt.false_positives,
        trace=rec.build(cfg.mg, cfg.mc) if rec else None,
    )


def bfs(graph: GraphImage, query: np.ndarray, l: int, k: int, bloom: Bloom | None = None) -> TraversalResult:
    """Best-first search written literally as Algorithm 1 (heaps, unbounded candidate queue)."""
    q = np.asarray(query, dtype=np.int64)
    filt = VisitedFilter(graph.n, TraversalConfig(l=l, k=k, bloom=bloom))
    p = graph.entry
    filt.check(np.array([p]))
    key_p = int(_keys(graph.fmt.l2(q, graph.vectors[[p]]), np.array([p]))[0])
    C = [key_p]  # min-heap of keys
    R = [-key_p]  # max-heap (negated keys)
    hops, checks, visited = 0, 1, 1
    mask = (1 << ID_BITS) - 1
    while C and C[0] <= -R[0]:
        c = heapq.heappop(C) & mask
        hops += 1
        ids = graph.neighbors[c, : graph.degree[c]].astype(np.int64)
        fresh = ids[filt.check(ids)]
        checks += len(ids)
        visited += len(fresh)
        for key in _keys(graph.fmt.l2(q, graph.vectors[fresh]), fresh).tolist():
            heapq.heappush(C, key)
            heapq.heappush(R, -key)
        while len(R) > l:
            heapq.heappop(R)
    ids, dists = _result(np.array(sorted(-r for r in R), dtype=np.uint64), k)
    return TraversalResult(
        ids=ids, dists=dists, hops=hops, visited=visited, checks=checks, bloom_fp=filt.false_positives
    )


class _TraceRecorder:
    def __init__(self):
        self.parent, self.ncand, self.nchecks = [], [], []
        self.cand_node, self.cand_degree = [], []
        self.check_node, self.check_cand, self.check_new, self.kept = [], [], [], []
        self.cands_so_far = 0

    def group(self, parent, cands, degrees, ids, new, entry_check) -> None:
        self.parent.append(parent)
        self.ncand.append(len(cands))
        self.nchecks.append(len(ids))
        self.cand_node.append(np.asarray(cands, dtype=np.int64))
        self.cand_degree.append(np.asarray(degrees, dtype=np.int64))
        owner = np.repeat(self.cands_so_far + np.arange(len(cands)), degrees)
        if entry_check:
            owner = np.concatenate([[-1], owner])
        self.check_node.append(ids)
        self.check_cand.append(owner)
        self.check_new.append(new)
        self.cands_so_far += len(cands)

    def build(self, mg: int, mc: int) -> Trace:
        def offsets(counts):
            return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

        return Trace(
            group_parent=np.array(self.parent, dtype=np.int64),
            group_cands=offsets(self.ncand),
            group_checks=offsets(self.nchecks),
            cand_node=np.concatenate(self.cand_node),
            cand_degree=np.concatenate(self.cand_degree),
            check_node=np.concatenate(self.check_node),
            check_cand=np.concatenate(self.check_cand).astype(np.int64),
            check_new=np.concatenate(self.check_new),
            new_kept=np.concatenate(self.kept).astype(bool),
            mg=mg,
            mc=mc,
        )
