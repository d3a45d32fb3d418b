"""The containers the stage option groups are built in: each option's limits (`Limits`), a group
as aligned arrays (`OptionSet`) and the builder that collects one (`Builder`).

Why apart from `fanns.model.ivfpq.options`: that module enumerates what each group offers; these
are the bookkeeping every group shares — which options the budget admits, the least resources
over all of them (for "nothing fits" reports), and which options a kept one already makes
pointless to time (`Front`, `Builder.dominated`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fanns.model.ivfpq import stages as stage_model
from fanns.resources import KINDS, Resources


@dataclass(frozen=True)
class Limits:
    """What one option may use on its own: the total budget, the memory channels per board memory
    group, and each SLR's room (every instance must fit some SLR)."""

    total: Resources
    channels: tuple[int, ...]
    slr_rooms: np.ndarray  # [SLRs, 5]
    seen: dict = field(default_factory=dict, compare=False, repr=False)  # `instance_fits` per instance

    def instances_fit(self, units: list[stage_model.Unit]) -> bool:
        return all(self.instance_fits(u.each) for u in units)

    def instance_fits(self, each: Resources) -> bool:
        """One instance of these resources fits some SLR's room (remembered: the DSE asks about
        the same PEs many times)."""
        if each not in self.seen:
            rooms = [tuple(float(v) + 1e-9 for v in room) for room in self.slr_rooms]
            self.seen[each] = any(all(e <= r for e, r in zip(each.as_tuple(), room)) for room in rooms)
        return self.seen[each]


@dataclass
class OptionSet:
    """The options of one group, aligned arrays (`fanns.model.ivfpq.options` says what each group holds)."""

    group: str
    stages: tuple[str, ...]
    configs: list[tuple]
    cycles: np.ndarray  # [n, len(stages)] mean cycles per query of each stage
    latency: np.ndarray  # [n]
    res: np.ndarray  # [n, 5] (KINDS order)
    channels: np.ndarray  # [n, G] channels per board memory group
    details: list[dict]
    raw: int
    floor: np.ndarray  # [5 + G] least of each resource / channel count over all configurations offered
    lanes: np.ndarray  # [n] the option's lanes (0: none), which must suit the other groups' lanes
    empty_reason: str = ""  # why the group has no configuration at all (not a resource limit)
    dominated: int = 0  # options within the limits left out untimed: no better than one kept (`Builder.skip`)

    @property
    def fit(self) -> int:
        """Options within the limits: those kept and those left out as dominated."""
        return len(self) + self.dominated

    def __len__(self) -> int:
        return len(self.configs)

    def take(self, idx: np.ndarray) -> OptionSet:
        idx = np.asarray(idx, dtype=np.int64)
        return OptionSet(
            self.group,
            self.stages,
            [self.configs[i] for i in idx],
            self.cycles[idx],
            self.latency[idx],
            self.res[idx],
            self.channels[idx],
            [self.details[i] for i in idx],
            self.raw,
            self.floor,
            self.lanes[idx],
            self.empty_reason,
            self.dominated,
        )


class Front:
    """The cost rows (cycles, resources, channels: all to be minimised) of the options kept so far
    that no other kept row is at or below everywhere: a row at or above one of them is at or above
    a kept option (`covers`)."""

    def __init__(self, width: int):
        self.rows = np.zeros((0, width))

    def covers(self, rows: np.ndarray) -> np.ndarray:
        """Per row: some front row is <= it everywhere."""
        if len(self.rows) == 0 or len(rows) == 0:
            return np.zeros(len(rows), dtype=bool)
        return (self.rows[None, :, :] <= rows[:, None, :]).all(-1).any(-1)

    def add(self, rows: np.ndarray) -> None:
        rows = rows[~self.covers(rows)]
        if len(rows) == 0:
            return
        le = (rows[None, :, :] <= rows[:, None, :]).all(-1)  # le[i, j]: row j <= row i
        below = le & ~le.T  # row j strictly below row i somewhere
        first = np.tri(len(rows), k=-1, dtype=bool) & le & le.T  # an equal row earlier
        rows = rows[~(below | first).any(1)]
        old = self.rows[~(rows[None, :, :] <= self.rows[:, None, :]).all(-1).any(-1)]
        self.rows = np.concatenate([old, rows])


class Builder:
    """Collects a group's options; `offer` keeps those within the limits and tracks, over every
    configuration offered, the least amount of each resource (for "nothing fits" reports).
    `dominated` and `skip` leave out options no better than one already kept (`Front`)."""

    def __init__(self, group: str, stages: tuple[str, ...], limits: Limits):
        self.group, self.stages, self.limits = group, stages, limits
        self.configs, self.cycles, self.latency, self.res, self.channels, self.details = [], [], [], [], [], []
        self.floor = np.full(len(KINDS) + len(limits.channels), np.inf)
        self.raw = 0
        self.lanes: list[int] = []
        self.offered = 0
        self.skipped = 0
        self.reasons: list[str] = []
        self.front = Front(1 + len(KINDS) + len(limits.channels))
        self.in_front = 0  # kept options added to `front`

    def cost_row(self, cycles: float, res: Resources, channels: dict[int, int]) -> np.ndarray:
        """The row `fanns.model.ivfpq.search.cost_matrix` gives an option of these bottleneck
        cycles, resources and channels."""
        return np.array([cycles, *res.as_tuple(), *self._channels(channels)], dtype=np.float64)

    def dominated(self, rows: np.ndarray) -> np.ndarray:
        """Per cost row (`cost_row`, its cycles a lower bound): some option kept so far is at or
        below it everywhere. Such an option is never in the Pareto-pruned group
        (`fanns.model.ivfpq.search.prune`: the kept one, earlier, is below it or equal to it),
        and leaving it out changes no other option's fate (whatever it would be below, the kept
        one is below too), so it need not be timed: `skip` it."""
        if self.in_front < len(self.configs):
            fresh = range(self.in_front, len(self.configs))
            self.front.add(
                np.array(
                    [[max(self.cycles[i]), *self.res[i], *self.channels[i]] for i in fresh], dtype=np.float64
                ).reshape(len(fresh), -1)
            )
            self.in_front = len(self.configs)
        return self.front.covers(rows)

    def skip(self, res: Resources, channels: dict[int, int]) -> None:
        """Count an option within the limits that `dominated` left out (it is not kept)."""
        self.offered += 1
        self.skipped += 1
        self._least(res, self._channels(channels))

    def _least(self, res: Resources, ch: list[int]) -> None:
        self.floor = np.minimum(self.floor, np.concatenate([res.as_array(), np.asarray(ch, dtype=np.float64)]))

    def offer(
        self,
        configs: tuple,
        cycles: list[float],
        latency: float,
        res: Resources,
        channels: dict[int, int],
        detail: dict,
        placeable: bool = True,
    ) -> bool:
        self.offered += 1
        ch = self._channels(channels)
        self._least(res, ch)
        if not self.admits(res, channels, placeable):
            return False
        self.configs.append(configs)
        self.cycles.append(cycles)
        self.latency.append(latency)
        self.res.append(res.as_tuple())
        self.channels.append(ch)
        self.details.append(detail)
        self.lanes.append(getattr(configs[0], "lanes", 0) or 0)
        return True

    def _channels(self, channels: dict[int, int]) -> list[int]:
        ch = [0] * len(self.limits.channels)
        for g, n in channels.items():
            ch[g] += n
        return ch

    def admits(self, res: Resources, channels: dict[int, int], placeable: bool = True) -> bool:
        """Whether `offer` keeps an option of these resources and channels: callers skip timing
        the options it would drop (their cycles are never read)."""
        ch = self._channels(channels)
        return placeable and res.fits(self.limits.total) and all(c <= b for c, b in zip(ch, self.limits.channels))

    def build(self) -> OptionSet:
        n, s = len(self.configs), len(self.stages)
        floor = np.where(np.isfinite(self.floor), self.floor, 0.0)
        return OptionSet(
            self.group,
            self.stages,
            self.configs,
            np.array(self.cycles, dtype=np.float64).reshape(n, s),
            np.array(self.latency, dtype=np.float64).reshape(n),
            np.array(self.res, dtype=np.float64).reshape(n, len(KINDS)),
            np.array(self.channels, dtype=np.int64).reshape(n, len(self.limits.channels)),
            self.details,
            max(self.raw, n + self.skipped),
            floor,
            np.array(self.lanes, dtype=np.int64).reshape(n),
            "" if self.offered else "; ".join(self.reasons),
            self.skipped,
        )
