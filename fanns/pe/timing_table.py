"""The timing table: each PE's register-to-register delay, measured and fitted like its resources.

`fanns calibrate --timing` synthesises a PE's calibration points for a device family (yosys, as
for resources), walks each mapped netlist with the family's delay model (`fanns.tools.timing`)
and stores, per PE, the measured points (delay, LUT levels, carry cells, the slowest path, the
widest net) and a fit of the delay over the PE's `timing_features()`: a non-negative linear
combination, least squares of the relative error (`fanns.calibration.fit_timing`, as
`fit_points` does for resources; there, so that a PE's simulation does not import scipy). A PE
at a measured point gets its measurement; any other gets the fit, with the depth and path of
the measured point nearest in features, and says so (`PeTiming.basis`).

One JSON file per PE in `tables/<family>/timing/`; a PE without one has no estimate (the design
estimate lists it as not covered rather than guessing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from fanns.errors import FannsError
from fanns.tools.timing import Timing

if TYPE_CHECKING:  # annotations only: fanns.pe.base imports this module
    from fanns.pe.base import PE

TABLE_DIR = Path(__file__).parent / "tables"


@dataclass(frozen=True)
class PeTiming:
    """The estimated timing of one PE instance (delays in ns)."""

    reg_to_reg: float
    lut_levels: int
    carry_cells: int
    path: tuple[str, ...]
    in_to_reg: float
    reg_to_out: float
    max_fanout: int
    basis: str
    """'measured' (a point of the table) or 'fitted (N points, max error x %)'."""

    @property
    def fmax_mhz(self) -> float:
        return 1e3 / self.reg_to_reg if self.reg_to_reg > 0 else float("inf")

    def depth_text(self) -> str:
        """'4 LUT levels, 2 carry cells'."""
        return f"{self.lut_levels} LUT level{'s' * (self.lut_levels != 1)}, {self.carry_cells} carry cell" + (
            "s" * (self.carry_cells != 1)
        )


@dataclass
class TimingFit:
    """One PE's timing table: measured points and the fit of the delay over its features."""

    features: list[str]
    coefficients: dict[str, float]
    points: list[dict] = field(default_factory=list)
    max_rel_error: float = 0.0
    source: str = ""

    def predict(self, pe: PE, family: str) -> PeTiming:
        params = json.dumps(pe.params(), sort_keys=True)
        for p in self.points:
            if json.dumps(p["params"], sort_keys=True) == params:
                return _timing(Timing.from_dict(p["timing"]), "measured")
        feats = pe.timing_features(family)
        unknown = sorted(set(feats) - set(self.features))
        if unknown:
            raise FannsError(
                f"the timing table of {pe.name!r} was fitted without its features {unknown}",
                hint=f"remeasure it: `fanns calibrate --timing --pe {pe.name} --family {family}`",
            )
        delay = sum(c * feats.get(f, 0.0) for f, c in self.coefficients.items())
        near = min(self.points, key=lambda p: _distance(p["features"], feats))
        t = Timing.from_dict(near["timing"])
        basis = f"fitted ({len(self.points)} points, max error {100 * self.max_rel_error:.0f} %)"
        return PeTiming(
            reg_to_reg=round(max(delay, 0.0), 4),
            lut_levels=t.lut_levels,
            carry_cells=t.carry_cells,
            path=t.path,
            in_to_reg=t.in_to_reg,
            reg_to_out=t.reg_to_out,
            max_fanout=t.max_fanout,
            basis=basis,
        )


def _timing(t: Timing, basis: str) -> PeTiming:
    return PeTiming(t.reg_to_reg, t.lut_levels, t.carry_cells, t.path, t.in_to_reg, t.reg_to_out, t.max_fanout, basis)


def _distance(a: dict[str, float], b: dict[str, float]) -> float:
    return sum((a.get(k, 0.0) - b.get(k, 0.0)) ** 2 for k in set(a) | set(b))


def table_path(family: str, name: str) -> Path:
    return TABLE_DIR / family / "timing" / f"{name}.json"


def save_fit(family: str, name: str, fit: TimingFit) -> Path:
    path = table_path(family, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(vars(fit), indent=1, sort_keys=True) + "\n")
    return path


@cache
def load_timing_table(family: str) -> dict[str, TimingFit]:
    """Every PE's timing table of `family` (empty when none was measured)."""
    folder = TABLE_DIR / family / "timing"
    return {p.stem: TimingFit(**json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))}


def pe_timing(pe: PE, family: str) -> PeTiming | None:
    """The timing estimate of `pe` on `family`, or None when its table has not been measured."""
    fit = load_timing_table(family).get(pe.name)
    return None if fit is None else fit.predict(pe, family)
