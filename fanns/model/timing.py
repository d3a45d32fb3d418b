"""A whole design's RTL clock estimate: the slowest of its PEs and of the structures between them.

Per PE, the timing table (`fanns.pe.timing_table`: yosys synthesis for the board's family, the
netlist walked with the family's delay model). Between PEs, what no PE's own synthesis sees:

* the reset: the kernel's synchronous reset reaches every register of the design, one net of as
  many loads (`reset_element`);
* the widest broadcasts: one stream forked to many consumers (`broadcast_element`);
* SLR crossings: a stream between stages placed in different SLRs crosses the interposer on a
  super long line (`slr_element`).

The design's estimate is the minimum clock over all of them; `DesignTiming.limit` names what
limits it. Units with no PE behind them (controller registers, memories the resource model
prices by rule) have no timing of their own and are listed as not covered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fanns.boards import Clock
from fanns.pe.base import PE
from fanns.pe.glue_streams import Broadcast
from fanns.tools.delay_models import MODELS, DelayModel

SLR_CROSSING_NS = 4.0
"""A register-to-register path that crosses one SLR boundary: UG949 (UltraFast Design
Methodology), 'SLR Crossing for Wide Buses': wide buses above 250 MHz need at least three
pipeline stages per crossing, so one crossing between two pipeline registers is taken to close
at 250 MHz (4.0 ns) and no faster."""


@dataclass(frozen=True)
class TimingElement:
    """One thing with a register-to-register delay in a design: a PE, the reset, a broadcast, a crossing."""

    kind: str
    label: str
    delay_ns: float
    detail: str
    basis: str

    @property
    def fmax_mhz(self) -> float:
        return 1e3 / self.delay_ns if self.delay_ns > 0 else float("inf")

    def describe(self) -> str:
        return f"{self.kind} {self.label}: {self.fmax_mhz:,.0f} MHz ({self.delay_ns:.2f} ns; {self.detail})"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "label": self.label,
            "delay_ns": round(self.delay_ns, 3),
            "fmax_mhz": round(self.fmax_mhz, 1),
            "detail": self.detail,
            "basis": self.basis,
        }


@dataclass(frozen=True)
class DesignTiming:
    """A design's RTL timing estimate: every element, slowest first, and what none covers."""

    family: str
    elements: tuple[TimingElement, ...]
    uncovered: tuple[str, ...] = ()

    @property
    def limit(self) -> TimingElement | None:
        return self.elements[0] if self.elements else None

    @property
    def fmax_mhz(self) -> float:
        return self.limit.fmax_mhz if self.limit else float("inf")

    def describe(self) -> str:
        """'RTL timing estimate 187 MHz (xcup), limited by pe pq_decode x8 (pq_dist): ...'."""
        if self.limit is None:
            return f"no RTL timing estimate ({self.family}: no PE of the design has a timing table, docs/timing.md)"
        model = MODELS[self.family].describe()
        return f"RTL timing estimate {self.fmax_mhz:,.0f} MHz ({model}), limited by {self.limit.describe()}"

    def clock(self) -> Clock:
        """The estimate as a clock (origin "rtl"), rounded down to a tenth of a MHz."""
        lim = self.limit
        mhz = max(0.1, math.floor(10 * self.fmax_mhz) / 10)
        return Clock(mhz, "rtl", f"limited by {lim.kind} {lim.label} ({lim.detail})")

    def to_dict(self) -> dict:
        return {
            "family": self.family,
            "model": MODELS[self.family].describe(),
            "fmax_mhz": round(self.fmax_mhz, 1) if self.limit else None,
            "limit": self.limit.to_dict() if self.limit else None,
            "elements": [e.to_dict() for e in self.elements],
            "not_covered": list(self.uncovered),
            "note": (
                "yosys synthesis per PE walked with the family's delay model (fanns.tools.delay_models), "
                "plus the reset fan-out, the widest broadcasts and the SLR crossings; no placement: "
                "docs/timing.md"
            ),
        }


def pe_elements(items: list[tuple[str, PE | None, int]], family: str) -> tuple[list[TimingElement], list[str]]:
    """The elements of a design's PEs, given as (label, PE or None, instances): each PE's timing
    table, and each Broadcast fork's net to its consumers; labels without a PE or a table are
    returned as not covered."""
    model = MODELS[family]
    elements, uncovered = [], []
    for label, pe, count in items:
        if pe is None:
            uncovered.append(label)
            continue
        t = pe.rtl_timing(family)
        if t is None:
            uncovered.append(f"{label} ({pe.name}: no timing table for {family})")
            continue
        detail = f"{t.depth_text()}; path {' '.join(t.path)}"
        elements.append(TimingElement("pe", f"{pe.name} {label} x{count}", t.reg_to_reg, detail, t.basis))
        if isinstance(pe, Broadcast) and pe.n > 1:
            sink = model.lut + model.route(1)  # a consumer's first register behind one LUT (its FIFO's write)
            elements.append(broadcast_element(model, label, pe.n, t.reg_to_out, sink))
    return elements, uncovered


def slowest_first(elements: list[TimingElement], family: str, uncovered: list[str]) -> DesignTiming:
    ordered = sorted(elements, key=lambda e: (-e.delay_ns, e.kind, e.label))
    return DesignTiming(family, tuple(ordered), tuple(sorted(set(uncovered))))


def reset_element(model: DelayModel, registers: float) -> TimingElement:
    """The synchronous reset from one register to every register of the design."""
    n = max(1, int(round(registers)))
    delay = model.ff_cko + model.route(n) + model.ff_setup
    return TimingElement(
        "reset", "fan-out", delay, f"one net to {n:,} registers", f"{model.describe()} delay model, log2 fan-out"
    )


def broadcast_element(
    model: DelayModel, label: str, fanout: int, source_out_ns: float, sink_in_ns: float
) -> TimingElement:
    """A stream forked to `fanout` consumers: the fork's register-to-output delay, one routed
    net of `fanout` loads, the consumer's input-to-register delay."""
    delay = max(source_out_ns, model.ff_cko) + model.route(fanout) + max(sink_in_ns, model.ff_setup)
    return TimingElement(
        "broadcast", label, delay, f"{fanout} consumers", f"{model.describe()} delay model, log2 fan-out"
    )


def slr_element(label: str, crossings: int) -> TimingElement:
    """A stream between stages `crossings` SLR boundaries apart (`SLR_CROSSING_NS` each)."""
    return TimingElement(
        "slr crossing",
        label,
        SLR_CROSSING_NS * crossings,
        f"{crossings} SLR boundar{'y' if crossings == 1 else 'ies'}",
        "UG949 'SLR Crossing for Wide Buses' (250 MHz per registered crossing)",
    )


def resolve_clock(board_clock: Clock, user: Clock | None, estimate: DesignTiming | None) -> Clock:
    """The clock a prediction uses: the user's when given; else the board's default, or the RTL
    estimate when that is lower (a design cannot be promised a clock its RTL does not reach)."""
    if user is not None:
        return user
    if estimate is not None and estimate.limit is not None and estimate.fmax_mhz < board_clock.mhz:
        return estimate.clock()
    return board_clock
