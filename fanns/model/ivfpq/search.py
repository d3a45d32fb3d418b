"""The vectorised design search: every index x every combination of stage options, in numpy.

A design is one option of each group (`fanns.model.ivfpq.options`: opq, front, lut, back) for
one workload. Its throughput is clock / max of the groups' stage cycles (Eq. 6.3/6.4), its
resources the sum of the groups' plus the infrastructure (Eq. 6.2), and it is valid when that
sum — resources and memory channels of every board memory group — fits the budget.

How the search stays fast and exact:

1. Within a group, an option no better than another in every respect (cycles, every resource,
   every channel count) is dropped (`pareto_rows`): any design using it is matched by the same
   design with the dominating option, at no lower throughput and no higher cost.
2. opq x lut are combined and pruned the same way; those pairs x front form the `left` rows.
   Only options whose lanes are multiples of one another combine (`compatible`), so pruning
   keeps the best option of every lane count (`pareto_by_class`).
3. `left` x back is evaluated by broadcasting in chunks: max of cycles, per-resource sums and the
   budget test, one element per combination (`Search.evaluated` counts them). Once the pool is
   full, a left row is skipped when even its bound — its cycles and LUTs with the fastest and the
   smallest back option — could enter neither the pool nor the front found so far
   (`Search.bounded` counts the combinations skipped; on the Fig. 6.8 workloads over 90 %).
4. Of the valid combinations it keeps the best `pool` by (cycles, LUT, channels) — the order of
   the result: highest QPS first, ties broken by fewer LUTs, then fewer memory channels — and
   the Pareto front of (cycles, LUT) over all of them.
5. A larger pool over the same spaces (the DSE grows it while too few pooled designs place on
   the SLRs) refines the previous result (`Search.refine`): the front stands, and once the pool is
   full only left rows and back options no slower than its last entry are combined; the pool is
   the same as a fresh search's.

Designs that are dominated are therefore not in the top list or the Pareto set (they are never
better than a design that is).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fanns.model.ivfpq.options import GROUPS, OptionSet

CHUNK_ELEMENTS = 1 << 21
"""Combinations evaluated per numpy step (memory stays a few tens of MB)."""


def cost_matrix(opt: OptionSet) -> np.ndarray:
    """[n, 1 + 5 + G]: the group's bottleneck cycles, resources, channels (all to be minimised)."""
    return np.column_stack([opt.cycles.max(1), opt.res, opt.channels.astype(np.float64)])


def pareto_rows(cost: np.ndarray, block: int = 256) -> np.ndarray:
    """Indices (ascending) of the rows of `cost` no other row dominates (<= everywhere; of equal
    rows the first is kept)."""
    n = cost.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(cost.T[::-1])
    sorted_cost = cost[order]
    kept: list[np.ndarray] = []
    kept_rows = np.zeros((0, cost.shape[1]))
    for start in range(0, n, block):
        blk = sorted_cost[start : start + block]
        alive = np.ones(len(blk), dtype=bool)
        if len(kept_rows):
            alive &= ~(kept_rows[None, :, :] <= blk[:, None, :]).all(-1).any(-1)
        # Within the block, lexicographic order puts every dominator before what it dominates.
        le = (blk[None, :, :] <= blk[:, None, :]).all(-1)  # le[i, j]: row j <= row i
        le &= np.tri(len(blk), k=-1, dtype=bool)  # only earlier rows j < i
        alive &= ~le.any(1)
        if alive.any():
            kept.append(order[start : start + block][alive])
            kept_rows = np.concatenate([kept_rows, blk[alive]])
    return np.sort(np.concatenate(kept)) if kept else np.zeros(0, dtype=np.int64)


def compatible(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: lanes a and b are multiples of one another (0: no lanes, suits anything)."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    return np.maximum(a, b) % np.maximum(np.minimum(a, b), 1) == 0


def pareto_by_class(cost: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """`pareto_rows` within each class (rows with equal `classes` rows): an option may only be
    dropped for another with the same lanes, which suits the same options of the other groups."""
    if len(cost) == 0:
        return np.zeros(0, dtype=np.int64)
    classes = np.asarray(classes).reshape(len(cost), -1)
    keys, inverse = np.unique(classes, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    kept = [np.flatnonzero(inverse == c)[pareto_rows(cost[inverse == c])] for c in range(len(keys))]
    return np.sort(np.concatenate(kept))


def prune(opt: OptionSet) -> OptionSet:
    return opt.take(pareto_by_class(cost_matrix(opt), opt.lanes))


@dataclass
class LeftRows:
    """The opq x lut x front combinations of a space, as indices: a pair of `_pairs` and a front
    option per row, in pair-major order. A row's cost (`cost_matrix` columns plus the
    infrastructure) is computed when read: kept as costs, the rows of builtin:text-384's 96
    spaces took 4.7 GB (61.5 M rows); as two int32 indices they take 0.5 GB."""

    opq: np.ndarray  # [pairs] opq option of each pair
    lut: np.ndarray  # [pairs] lut option of each pair
    pair_cost: np.ndarray  # [pairs, 1 + 5 + G]
    front_cost: np.ndarray  # [fronts, 1 + 5 + G]
    infra: np.ndarray  # [5 + G]
    pair: np.ndarray  # [rows] int32
    front: np.ndarray  # [rows] int32

    def __len__(self) -> int:
        return len(self.pair)

    def cost(self, rows: np.ndarray | slice = slice(None), columns: int | None = None) -> np.ndarray:
        """[len(rows), columns]: the rows' bottleneck cycles, resources with the infrastructure,
        channels (the first `columns` of them: cycles and LUTs are enough for `Search._may_enter`)."""
        w = self.pair_cost.shape[1] if columns is None else columns
        p, f = self.pair[rows], self.front[rows]
        cost = self.pair_cost[p, :w] + self.front_cost[f, :w]
        cost[:, 0] = np.maximum(self.pair_cost[p, 0], self.front_cost[f, 0])
        cost[:, 1:] += self.infra[: w - 1]
        return cost

    def cycles(self) -> np.ndarray:
        return np.maximum(self.pair_cost[self.pair, 0], self.front_cost[self.front, 0])

    def chunks(self, step: int):
        """(row indices, their costs) in order, `step` rows at a time."""
        for start in range(0, len(self), step):
            idx = np.arange(start, min(start + step, len(self)))
            yield idx, self.cost(idx)


@dataclass
class Space:
    """One workload's option groups (already fitted to the budget and pruned) and its fixed
    infrastructure cost; `raw` is the size of the design space before any pruning."""

    key: int
    sets: dict[str, OptionSet]
    infra: np.ndarray  # [5 + G]
    raw: int
    left: LeftRows | None = None  # the combinations within the budget (`Search.add`)
    floors: dict = field(default_factory=dict)  # group -> least resources over all its configurations


def _pairs(a: OptionSet, b: OptionSet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ia, ib, cost) of all pairs of two groups with compatible lanes, cost as in `cost_matrix`,
    Pareto-pruned within each pair of lane counts."""
    ca, cb = cost_matrix(a), cost_matrix(b)
    ia, ib = np.meshgrid(np.arange(len(a)), np.arange(len(b)), indexing="ij")
    ia, ib = ia.ravel(), ib.ravel()
    ok = compatible(a.lanes[ia], b.lanes[ib])
    ia, ib = ia[ok], ib[ok]
    cost = ca[ia] + cb[ib]
    cost[:, 0] = np.maximum(ca[ia, 0], cb[ib, 0])
    keep = pareto_by_class(cost, np.column_stack([a.lanes[ia], b.lanes[ib]]))
    return ia[keep], ib[keep], cost[keep]


@dataclass
class Result:
    """The pool of best combinations and the (cycles, LUT) Pareto front, as rows
    [space, left row, back row, cycles, lut, channels]."""

    pool: np.ndarray
    front: np.ndarray
    evaluated: int
    raw: int
    seconds: float
    min_overflow: np.ndarray | None = None  # [5 + G] usage of the combination closest to fitting
    bounded: int = 0  # combinations skipped because their bound could not enter the pool or front


class Search:
    """Evaluates spaces against one budget vector (see the module docstring)."""

    def __init__(self, budget: np.ndarray, pool: int = 64, bound: bool = True):
        self.budget = np.asarray(budget, dtype=np.float64)
        self.pool_size = pool
        self.bound = bound
        self.pool = np.zeros((0, 6))
        self.front = np.zeros((0, 6))
        self.evaluated = 0
        self.bounded = 0
        self.raw = 0
        self.closest: tuple[float, np.ndarray] | None = None

    # -- left rows: opq x lut pairs x front ----------------------------------------------------
    def _left(self, space: Space) -> LeftRows | None:
        """Set the space's left rows within the budget; when none is, return every compatible
        row instead (for `_track_closest`). Pairs are taken a block at a time, so no array the
        size of all pairs x fronts is made."""
        s = space.sets
        io, il, pair_cost = _pairs(s["opq"], s["lut"])
        self.evaluated += len(s["opq"]) * len(s["lut"])
        cf = cost_matrix(s["front"])
        lanes = s["front"].lanes[None, :]
        # which fronts suit each pair's opq and lut lanes: a row per distinct lane count, gathered
        uo, by_opq = np.unique(s["opq"].lanes[io], return_inverse=True)
        ul, by_lut = np.unique(s["lut"].lanes[il], return_inverse=True)
        suits_opq, suits_lut = compatible(uo[:, None], lanes), compatible(ul[:, None], lanes)
        within, compat, found = [], [], False
        step = max(1, CHUNK_ELEMENTS // max(1, len(cf)))
        for start in range(0, len(io), step):
            blk = slice(start, min(start + step, len(io)))
            fits = suits_opq[by_opq[blk]] & suits_lut[by_lut[blk]]
            ok = fits.copy()
            for r in range(len(self.budget)):
                ok &= (pair_cost[blk, None, 1 + r] + cf[None, :, 1 + r]) + space.infra[r] <= self.budget[r]
            self.evaluated += int(fits.sum())
            p, f = np.nonzero(ok)
            within.append((p + start, f))
            found |= len(p) > 0
            if not found:  # none fits so far: the compatible rows, for `_track_closest`
                p, f = np.nonzero(fits)
                compat.append((p + start, f))

        def rows(hits: list) -> LeftRows:
            pair = np.concatenate([p for p, _ in hits]) if hits else np.zeros(0, dtype=np.int64)
            front = np.concatenate([f for _, f in hits]) if hits else np.zeros(0, dtype=np.int64)
            return LeftRows(io, il, pair_cost, cf, space.infra, pair.astype(np.int32), front.astype(np.int32))

        space.left = rows(within)
        return None if found else rows(compat)

    def add(self, space: Space) -> None:
        self.raw += space.raw
        every = self._left(space)
        left = space.left
        back = cost_matrix(space.sets["back"])
        if len(back) == 0:
            return
        if every is not None:  # nothing fits: remember how close the combinations came
            for _, cost in every.chunks(max(1, CHUNK_ELEMENTS // len(back))):
                self._track_closest(cost, back)
            return
        rows = max(1, CHUNK_ELEMENTS // len(back))
        floor = back[:, :2].min(0)  # the fewest cycles and the fewest LUTs of any back option
        start = 0
        while start < len(left):
            # a small first chunk seeds the pool and the front, so later chunks filter cheaply
            step = min(rows, 16) if len(self.pool) == 0 else rows
            idx = np.arange(start, min(start + step, len(left)))
            if self.bound:  # most rows fall behind the bound: their cycles and LUTs decide it
                idx_in = idx[self._may_enter(left.cost(idx, columns=2), floor)]
            else:
                idx_in = idx
            self.bounded += (len(idx) - len(idx_in)) * len(back)
            if len(idx_in):
                self._evaluate(space.key, idx_in, left.cost(idx_in), back)
            start += step

    def _may_enter(self, left: np.ndarray, floor: np.ndarray) -> np.ndarray:
        """Left rows some combination of which may still enter the pool or the front. A row's
        combinations take at least max(its cycles, the fewest back cycles) and its LUTs plus the
        fewest back LUTs; a row whose bound is behind the full pool's last entry and no better
        than the front at those cycles can add nothing (`_pool_from`, `_merge_front`)."""
        if len(self.pool) < self.pool_size:
            return np.ones(len(left), dtype=bool)
        cyc, lut = np.maximum(left[:, 0], floor[0]), left[:, 1] + floor[1]
        return self._may_pool(cyc, lut) | (lut < self._front_lut(cyc))

    def _may_pool(self, cycles: np.ndarray, lut: np.ndarray) -> np.ndarray:
        """Whether (cycles, LUT) may enter the full pool: not behind its last entry."""
        c_lim, l_lim = self.pool[-1, 3], self.pool[-1, 4]
        return (cycles < c_lim) | ((cycles == c_lim) & (lut <= l_lim))

    def _front_lut(self, cycles: np.ndarray) -> np.ndarray:
        """The fewest LUTs of a front design at no more than each of `cycles` (inf: none)."""
        if len(self.front) == 0:
            return np.full(len(cycles), np.inf)
        pos = np.searchsorted(self.front[:, 3], cycles, side="right") - 1
        return np.where(pos >= 0, self.front[np.maximum(pos, 0), 4], np.inf)

    def refine(self, space: Space) -> None:
        """The pool only, over a space `add` has already evaluated (its `left` rows stand): left
        rows by increasing cycles, and once the pool is full only the left rows and back options
        no slower than its last entry. A skipped combination runs at more cycles than that entry,
        which only moves to fewer cycles as the pool improves, so the pool is the one `add` would
        keep (`_merge_pool` ranks exactly)."""
        left = space.left
        back = cost_matrix(space.sets["back"])
        if len(back) == 0 or left is None or len(left) == 0:
            return
        cycles = left.cycles()
        order = np.argsort(cycles, kind="stable")
        start = 0
        while start < len(order):
            cols = np.arange(len(back))
            if len(self.pool) >= self.pool_size:
                c_lim = self.pool[-1, 3]
                if cycles[order[start]] > c_lim:
                    break
                cols = cols[back[:, 0] <= c_lim]
                if len(cols) == 0:
                    break
            step = max(1, CHUNK_ELEMENTS // len(cols))
            if len(self.pool) == 0:
                step = min(step, 16)
            rows = order[start : start + step]
            self._pool_candidates(space.key, rows, cols, left.cost(rows), back[cols])
            start += step

    def _pool_candidates(
        self, key: int, rows: np.ndarray, cols: np.ndarray, left: np.ndarray, back: np.ndarray
    ) -> None:
        """`_evaluate`'s pool step on left rows `rows` x back options `cols` (their indices)."""
        ok = np.ones((len(left), len(back)), dtype=bool)
        for r in range(len(self.budget)):
            ok &= (left[:, None, 1 + r] + back[None, :, 1 + r]) <= self.budget[r]
        if not ok.any():
            return
        cyc = np.where(left[:, None, 0] <= back[None, :, 0], back[None, :, 0], left[:, None, 0])
        lut = left[:, None, 1] + back[None, :, 1]
        self._pool_from(ok, cyc, lut, lambda li, bi: self._rows(key, left, back, li, bi, cyc, lut, rows, cols))

    def _pool_from(self, ok: np.ndarray, cyc: np.ndarray, lut: np.ndarray, rows_of) -> None:
        """Pool candidates of one chunk: no worse than the pool's last entry and than this chunk's
        n-th best cycles (`rows_of(li, bi)`: their pool rows)."""
        n = self.pool_size
        valid = cyc[ok]
        if len(valid) > n:
            ok &= cyc <= np.partition(valid, n - 1)[n - 1]
        if len(self.pool) >= n:
            ok &= self._may_pool(cyc, lut)
        li, bi = np.nonzero(ok)
        if len(li):
            self._merge_pool(rows_of(li, bi))

    def _evaluate(self, key: int, rows: np.ndarray, left: np.ndarray, back: np.ndarray) -> None:
        """Left rows `rows` (their cost rows: `left`) x every back option."""
        self.evaluated += len(left) * len(back)
        ok = np.ones((len(left), len(back)), dtype=bool)
        for r in range(len(self.budget)):
            ok &= (left[:, None, 1 + r] + back[None, :, 1 + r]) <= self.budget[r]
        if not ok.any():
            self._track_closest(left, back)
            return
        by_back = left[:, None, 0] <= back[None, :, 0]  # the combination runs at the back option's cycles
        cyc = np.where(by_back, back[None, :, 0], left[:, None, 0])
        lut = left[:, None, 1] + back[None, :, 1]
        # Front candidates: per distinct cycles value (a left row's or a back option's), the
        # valid combination with the fewest LUTs — no sort over all combinations needed.
        lut_ok = np.where(ok, lut, np.inf)
        col = np.where(by_back, lut_ok, np.inf)
        row = np.where(by_back, np.inf, lut_ok)
        ci, rj = col.argmin(0), row.argmin(1)
        li = np.concatenate([ci, np.arange(len(left))])
        bi = np.concatenate([np.arange(len(back)), rj])
        found = np.isfinite(lut_ok[li, bi])
        cols = np.arange(len(back))
        self._merge_front(self._rows(key, left, back, li[found], bi[found], cyc, lut, rows, cols))
        self._pool_from(ok, cyc, lut, lambda li, bi: self._rows(key, left, back, li, bi, cyc, lut, rows, cols))

    @staticmethod
    def _rows(key, left, back, li, bi, cyc, lut, rows, cols) -> np.ndarray:
        """Pool rows of chunk entries (li, bi); `rows` / `cols`: the space's left rows / back
        options of the chunk's rows / columns."""
        chans = left[li, 6:].sum(1) + back[bi, 6:].sum(1)
        return np.column_stack(
            [np.full(len(li), key, dtype=np.float64), rows[li], cols[bi], cyc[li, bi], lut[li, bi], chans]
        )

    def _track_closest(self, left: np.ndarray, back: np.ndarray) -> None:
        """Remember the combination whose worst resource ratio is smallest (for explanations)."""
        if self.pool.shape[0]:
            return
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.full((len(left), len(back)), 0.0)
            for r in range(len(self.budget)):
                use = left[:, None, 1 + r] + back[None, :, 1 + r]
                b = self.budget[r]
                ratio = np.maximum(ratio, np.where(b > 0, use / b, np.where(use > 0, np.inf, 0.0)))
        i, j = np.unravel_index(int(np.argmin(ratio)), ratio.shape)
        if self.closest is None or ratio[i, j] < self.closest[0]:
            self.closest = (float(ratio[i, j]), left[i, 1:] + back[j, 1:])

    def _merge_pool(self, rows: np.ndarray) -> None:
        n = self.pool_size
        if len(self.pool) >= n:
            rows = rows[self._may_pool(rows[:, 3], rows[:, 4])]
        if len(rows) > n:  # only the n best by cycles (then LUT) can enter: select before sorting
            kth = np.partition(rows[:, 3], n - 1)[n - 1]
            rows = rows[rows[:, 3] <= kth]
            tied = rows[:, 3] == kth
            need = n - int((~tied).sum())
            if tied.sum() > need:
                l_kth = np.partition(rows[tied, 4], need - 1)[need - 1]
                rows = rows[~tied | (rows[:, 4] <= l_kth)]
        if len(rows) == 0:
            return
        merged = np.concatenate([self.pool, rows])
        order = np.lexsort((merged[:, 2], merged[:, 1], merged[:, 0], merged[:, 5], merged[:, 4], merged[:, 3]))
        self.pool = merged[order[:n]]

    @staticmethod
    def _front_of(rows: np.ndarray) -> np.ndarray:
        rows = rows[np.lexsort((rows[:, 2], rows[:, 1], rows[:, 0], rows[:, 5], rows[:, 4], rows[:, 3]))]
        running = np.minimum.accumulate(rows[:, 4])
        keep = np.ones(len(rows), dtype=bool)
        keep[1:] = rows[1:, 4] < running[:-1]
        return rows[keep]

    def _merge_front(self, rows: np.ndarray) -> None:
        rows = rows[rows[:, 4] < self._front_lut(rows[:, 3])]
        if len(rows):
            self.front = self._front_of(np.concatenate([self.front, rows]))

    def result(self, seconds: float) -> Result:
        closest = None if self.closest is None else self.closest[1]
        return Result(self.pool, self.front, self.evaluated, self.raw, seconds, closest, self.bounded)


def search(
    spaces: list[Space],
    budget: np.ndarray,
    pool: int = 64,
    known: Result | None = None,
    bound: bool = True,
    on_space: Callable[[], None] | None = None,
) -> Result:
    """Evaluate every space; the pool holds the `pool` best valid combinations. `known`: the
    result of this search with a smaller pool (the same spaces and budget), whose front and counts
    stand: only the larger pool is searched (`Search.refine`). `bound=False` evaluates every
    combination (the same result, slower: a check of the bound). `on_space` is called after each
    space (progress)."""
    start = time.perf_counter()
    s = Search(budget, pool, bound)
    for space in spaces:
        if known is None:
            s.add(space)
        else:
            s.refine(space)
        if on_space is not None:
            on_space()
    if known is None:
        return s.result(time.perf_counter() - start)
    out = s.result(time.perf_counter() - start)
    return Result(out.pool, known.front, known.evaluated, known.raw, out.seconds, known.min_overflow, known.bounded)


def decode(space: Space, left_row: int, back_row: int) -> dict[str, int]:
    """Option index per group of one combination."""
    left = space.left
    pair = left.pair[left_row]
    return {
        "opq": int(left.opq[pair]),
        "front": int(left.front[left_row]),
        "lut": int(left.lut[pair]),
        "back": back_row,
    }


__all__ = ["GROUPS", "LeftRows", "Result", "Search", "Space", "cost_matrix", "decode", "pareto_rows", "prune", "search"]
