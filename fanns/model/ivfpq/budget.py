"""Resource budget of a board (Eq. 6.2 with the shell) and the SLR assignment of a design.

Budget: on each SLR, the accelerator plus the shell's share of that SLR must stay under the
utilisation cap of the SLR's device resources (FANNS 6.5.2: designs above ~60 % rarely place
and route), so the accelerator gets ``cap * device - shell`` per SLR and per resource (never
below zero). The search first checks designs against the sum over SLRs (cheap, vectorised),
then assigns the candidates to SLRs exactly.

SLR assignment rule (deterministic): walk the design's units in pipeline order (infrastructure,
OPQ, IVFDist, SelCells, BuildLUT, PQDist, SelK) and put every instance (one PE, one FIFO, one
memory reader; a selection PE counts one instance per input stream) into the first SLR, in the
board file's order, where it still fits every resource (first fit). A design that leaves an
instance without room fails, even if its total fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fanns.boards import Board
from fanns.model.ivfpq.options import Limits
from fanns.model.ivfpq.stages import Unit
from fanns.resources import KINDS, Resources

KIND_LABELS = {"lut": "LUT", "ff": "FF", "bram18": "BRAM18", "uram": "URAM", "dsp": "DSP"}


@dataclass(frozen=True)
class Budget:
    """What the accelerator may use on a board at a utilisation cap."""

    board: str
    util: float
    device: Resources
    shell: Resources
    slrs: dict[str, Resources]
    channels: tuple[int, ...]  # per memory group of the board
    channel_kinds: tuple[str, ...]

    @classmethod
    def from_board(cls, board: Board, util: float) -> Budget:
        board.budget(util)  # validates the cap with a clear error
        slrs = {}
        for name, dev in board.device_slrs.items():
            room = dev * util - board.shell.get(name, Resources())
            slrs[name] = Resources(*(max(0.0, v) for v in room.as_tuple()))
        shell = Resources.total(list(board.shell.values()))
        return cls(
            board=board.name,
            util=util,
            device=board.device_total,
            shell=shell,
            slrs=slrs,
            channels=tuple(m.count for m in board.memory),
            channel_kinds=tuple(m.kind for m in board.memory),
        )

    @property
    def total(self) -> Resources:
        return Resources.total(list(self.slrs.values()))

    def vector(self) -> np.ndarray:
        """[5 + G]: resources (KINDS order) then channels per memory group."""
        return np.concatenate([self.total.as_array(), np.asarray(self.channels, dtype=np.float64)])

    def limits(self) -> Limits:
        """What a single stage option may use (`fanns.model.ivfpq.options.Limits`)."""
        rooms = np.array([r.as_tuple() for r in self.slrs.values()], dtype=np.float64)
        return Limits(self.total, self.channels, rooms)

    def labels(self) -> list[str]:
        return [KIND_LABELS[k] for k in KINDS] + [f"{k} channels" for k in self.channel_kinds]


def assign_slrs(units: list[Unit], budget: Budget) -> dict[str, list[list]] | None:
    """First-fit assignment (module docstring): {SLR: [[stage, label, instances], ...]}, or None
    when some instance fits no SLR."""
    fill = SlrFill.start(budget).place(units)
    return None if fill is None else fill.assignment()


@dataclass(frozen=True)
class SlrFill:
    """The first-fit assignment part-way through a design's units: each SLR's room left and what
    it holds. Designs sharing their first stages share the fill of those stages (the DSE places
    the infrastructure and front stages once for all the back options that follow them)."""

    names: tuple[str, ...]
    room: tuple[tuple[float, ...], ...]
    placed: tuple[tuple, ...] = ()  # (SLR index, stage, label, instances) in placing order

    @classmethod
    def start(cls, budget: Budget) -> SlrFill:
        names = tuple(budget.slrs)
        return cls(names, tuple(budget.slrs[n].as_tuple() for n in names))

    def place(self, units: list[Unit]) -> SlrFill | None:
        """The fill after placing `units` in order, or None when an instance fits no SLR. Plain
        floats: the same IEEE operations as a float64 vector, without its per-call overhead."""
        room = [list(r) for r in self.room]
        added = []
        for unit in units:
            used = [(i, v) for i, v in enumerate(unit.each.as_tuple()) if v != 0]
            need = [(i, v) for i, v in used if v > 0]
            left = unit.count
            for s, r in enumerate(room):
                if left == 0:
                    break
                fit = left if not need else math.floor(min(r[i] / v for i, v in need) + 1e-9)
                k = min(left, max(0, fit))
                if k:
                    for i, v in used:
                        r[i] -= k * v
                    left -= k
                    added.append((s, unit.stage, unit.label, k))
            if left:
                return None
        return SlrFill(self.names, tuple(tuple(r) for r in room), self.placed + tuple(added))

    def assignment(self) -> dict[str, list[list]]:
        """{SLR: [[stage, label, instances], ...]}."""
        out: dict[str, list[list]] = {n: [] for n in self.names}
        for s, stage, label, k in self.placed:
            out[self.names[s]].append([stage, label, k])
        return out


def overflow_text(usage: np.ndarray, budget: Budget) -> list[str]:
    """Per resource that `usage` [5 + G] exceeds: what it needs, what the budget allows, by how much."""
    lines = []
    for label, need, have in zip(budget.labels(), usage, budget.vector()):
        if need > have + 1e-9:
            pct = f"+{100 * (need - have) / have:.0f}%" if have > 0 else "none available"
            lines.append(f"{label}: needs {need:,.0f}, the budget allows {have:,.0f} ({pct})")
    return lines
