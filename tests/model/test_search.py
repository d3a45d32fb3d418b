"""The vectorised search against brute force: dominance pruning, best design, Pareto front."""

import itertools

import numpy as np
import pytest

from fanns.model.ivfpq import search as search_module
from fanns.model.ivfpq.options import GROUPS, OptionSet
from fanns.model.ivfpq.search import Space, cost_matrix, decode, pareto_rows, prune, search


def brute_pareto(cost: np.ndarray) -> list[int]:
    keep = []
    for i in range(len(cost)):
        dominated = any(
            j != i and (cost[j] <= cost[i]).all() and ((cost[j] != cost[i]).any() or j < i) for j in range(len(cost))
        )
        if not dominated:
            keep.append(i)
    return keep


@pytest.mark.parametrize("seed", range(12))
def test_pareto_rows_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, dims = int(rng.integers(1, 700)), int(rng.integers(1, 6))
    cost = rng.integers(0, 6, size=(n, dims)).astype(float)  # many ties and duplicates
    assert pareto_rows(cost, block=int(rng.integers(1, 300))).tolist() == brute_pareto(cost)


LANES = np.array([2, 3, 4, 6, 8])


def random_set(rng, group: str, n: int, channel_groups: int) -> OptionSet:
    stages = {"opq": 1, "front": 2, "lut": 1, "back": 2}[group]
    cycles = rng.integers(100, 5000, size=(n, stages)).astype(float)
    cycles[:, 0] = np.round(cycles[:, 0], -2)  # ties in the bottleneck
    res = rng.integers(0, 400, size=(n, 5)).astype(float)
    channels = rng.integers(0, 3, size=(n, channel_groups))
    # lanes that are and are not multiples of one another (back: none)
    lanes = np.zeros(n, dtype=np.int64) if group == "back" else rng.choice(LANES, size=n)
    return OptionSet(
        group,
        ("s",) * stages,
        [(group, i) for i in range(n)],
        cycles,
        rng.random(n),
        res,
        channels,
        [{} for _ in range(n)],
        n,
        res.min(0),
        lanes,
    )


def brute_force(spaces, budget):
    valid = []
    for space in spaces:
        sets = space.sets
        for combo in itertools.product(*(range(len(sets[g])) for g in GROUPS)):
            lanes = [int(sets[g].lanes[i]) for g, i in zip(GROUPS, combo) if sets[g].lanes[i]]
            if any(max(a, b) % min(a, b) for a in lanes for b in lanes):
                continue  # the query cannot be regrouped between these stages
            cost = sum(cost_matrix(sets[g])[i] for g, i in zip(GROUPS, combo))
            cycles = max(cost_matrix(sets[g])[i, 0] for g, i in zip(GROUPS, combo))
            use = cost[1:] + space.infra
            if (use <= budget).all():
                valid.append((cycles, use[0], use[5:].sum(), space.key, combo))
    return valid


@pytest.mark.parametrize("seed", range(40))
def test_search_finds_the_brute_force_best_and_front(seed):
    rng = np.random.default_rng(100 + seed)
    groups = int(rng.integers(1, 3))
    spaces = []
    for key in range(int(rng.integers(1, 4))):
        sizes = {
            "opq": int(rng.integers(1, 4)),
            "front": int(rng.integers(1, 9)),
            "lut": int(rng.integers(1, 6)),
            "back": int(rng.integers(1, 9)),
        }
        sets = {g: random_set(rng, g, sizes[g], groups) for g in GROUPS}
        infra = np.concatenate([rng.integers(0, 50, 5).astype(float), np.ones(groups)])
        spaces.append(Space(key, {g: prune(s) for g, s in sets.items()}, infra, int(np.prod(list(sizes.values())))))
        spaces[-1].full = sets
    budget = np.concatenate([np.full(5, float(rng.integers(600, 1400))), np.full(groups, 7.0)])
    result = search(spaces, budget, pool=5)
    full = [Space(s.key, s.full, s.infra, s.raw) for s in spaces]
    valid = brute_force(full, budget)
    if not valid:
        assert len(result.pool) == 0
        return
    best = min(valid, key=lambda v: v[:3])
    row = result.pool[0]
    assert tuple(row[3:6]) == pytest.approx(best[:3])
    # The row decodes to options whose costs add up to what the search reported.
    space = spaces[int(row[0])]
    pick = decode(space, int(row[1]), int(row[2]))
    cost = sum(cost_matrix(space.sets[g])[pick[g]] for g in GROUPS)
    assert cost[1] + space.infra[0] == pytest.approx(row[4])
    assert max(cost_matrix(space.sets[g])[pick[g], 0] for g in GROUPS) == pytest.approx(row[3])
    # Pareto front of (cycles, LUT): the same values as brute force.
    pts = sorted({(v[0], v[1]) for v in valid})
    front, best_lut = [], np.inf
    for c, lut in pts:
        if lut < best_lut:
            front.append((c, lut))
            best_lut = lut
    assert [(float(r[3]), float(r[4])) for r in result.front] == front
    # The pool is ordered by cycles, then LUT, then channels.
    keys = [tuple(r[3:6]) for r in result.pool]
    assert keys == sorted(keys)
    combined = sum(len(s.left) * len(s.sets["back"]) for s in spaces)
    assert result.evaluated + result.bounded >= combined


def test_the_bound_skips_only_what_could_not_enter(monkeypatch):
    """Skipping left rows whose bound is behind the full pool and the front changes nothing: the
    pool and the front equal those of evaluating every combination, with chunks of any size, and
    the skipped and evaluated combinations add up to all of them."""
    taken = 0
    for seed in range(30):
        rng = np.random.default_rng(900 + seed)
        monkeypatch.setattr(search_module, "CHUNK_ELEMENTS", int(rng.integers(1, 200)))
        groups = int(rng.integers(1, 3))
        spaces = random_spaces(rng, groups, 14)
        budget = np.concatenate([np.full(5, float(rng.integers(600, 1400))), np.full(groups, 7.0)])
        pool = int(rng.integers(1, 6))
        bounded, every = search(spaces, budget, pool=pool), search(spaces, budget, pool=pool, bound=False)
        assert np.array_equal(bounded.pool, every.pool) and np.array_equal(bounded.front, every.front), seed
        assert every.bounded == 0 and bounded.evaluated + bounded.bounded == every.evaluated, seed
        taken += bounded.bounded > 0
    assert taken >= 20  # the bound is taken on most of these spaces (21 of 30 when written)


def random_spaces(rng, groups: int, scale: int) -> list[Space]:
    spaces = []
    for key in range(int(rng.integers(1, 4))):
        sets = {g: random_set(rng, g, int(rng.integers(1, scale)), groups) for g in GROUPS}
        infra = np.concatenate([rng.integers(0, 50, 5).astype(float), np.ones(groups)])
        spaces.append(Space(key, {g: prune(s) for g, s in sets.items()}, infra, 1))
    return spaces


@pytest.mark.parametrize("seed", range(30))
def test_a_refined_pool_equals_a_fresh_search(seed, monkeypatch):
    """The DSE grows its pool by refining the previous search (`known`): the pool is exactly the
    one a fresh search with that pool keeps, with chunks of any size (every bound and early stop
    taken); with a pool larger than everything, it is every valid (left row, back option) pair,
    ranked by cycles, LUT, channels, then position."""
    rng = np.random.default_rng(500 + seed)
    monkeypatch.setattr(search_module, "CHUNK_ELEMENTS", int(rng.integers(1, 200)))
    groups = int(rng.integers(1, 3))
    spaces = random_spaces(rng, groups, 14)
    budget = np.concatenate([np.full(5, float(rng.integers(600, 1400))), np.full(groups, 7.0)])
    small = search(spaces, budget, pool=int(rng.integers(1, 6)))
    for pool in (len(small.pool) + 1, 8 * len(small.pool) + 3, 10**6):
        fresh = search(spaces, budget, pool=pool)
        refined = search(spaces, budget, pool=pool, known=small)
        assert np.array_equal(refined.pool, fresh.pool)
        assert np.array_equal(refined.front, fresh.front)
        # the counts of the smaller pool stand (a larger pool takes the bound less often)
        assert refined.evaluated + refined.bounded == fresh.evaluated + fresh.bounded
    every = []
    for s in spaces:
        back = cost_matrix(s.sets["back"])
        for i, row in enumerate(s.left.cost()):
            for j, col in enumerate(back):
                if (row[1:] + col[1:] <= budget).all():
                    every.append((max(row[0], col[0]), row[1] + col[1], row[6:].sum() + col[6:].sum(), s.key, i, j))
    assert [tuple(r) for r in refined.pool[:, [3, 4, 5, 0, 1, 2]]] == sorted(every)
