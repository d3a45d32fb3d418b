"""The calibration table: measured PE resources and the linear models fitted to them.

One JSON file per PE in `tables/<family>/` stores the measured points, the coefficients, the
fit error and the tool that measured them, so every constant has its source. PEs not in the
table have no resource estimate (an error, not a guess). `fanns.calibration` remakes the tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from fanns.errors import FannsError
from fanns.resources import KINDS, Resources

if TYPE_CHECKING:  # annotations only: fanns.pe.base imports this module
    from fanns.pe.base import PE

TABLE_DIR = Path(__file__).parent / "tables"
NOISE = 1e-6
"""A predicted resource below this (a millionth of a LUT, a block RAM, ...) is zero."""


@dataclass
class PeFit:
    features: list[str]
    coefficients: dict[str, dict[str, float]]
    points: list[dict] = field(default_factory=list)
    max_rel_error: dict[str, float] = field(default_factory=dict)
    source: str = ""

    def predict(self, pe: PE) -> Resources:
        feats = pe.features()
        unknown = sorted(set(feats) - set(self.features))
        if unknown:
            raise FannsError(
                f"the calibration of {pe.name!r} was fitted without its features {unknown}",
                hint=f"refit it from its measured points: `fanns calibrate --refit --pe {pe.name}`",
            )
        values = {}
        for kind in KINDS:
            coef = self.coefficients.get(kind, {})
            v = sum(c * feats.get(f, 0.0) for f, c in coef.items())
            # below a millionth of a unit is the fit's rounding (nnls leaves coefficients of ~1e-17):
            # kept, it made a PE need "some" UltraRAM on a device that has none (OPQ on the ZCU102)
            values[kind] = v if v > NOISE else 0.0
        return Resources(**values)


@dataclass
class CalibrationTable:
    """All PE fits of one device family: one JSON file per PE in `tables/<family>/`."""

    family: str
    pes: dict[str, PeFit]

    def predict(self, pe: PE) -> Resources:
        fit = self.pes.get(pe.name)
        if fit is None:
            raise FannsError(
                f"PE {pe.name!r} has no resource calibration for family {self.family}",
                hint=f"run `fanns calibrate --pe {pe.name}`",
            )
        return fit.predict(pe)

    def save(self, name: str) -> Path:
        path = TABLE_DIR / self.family / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(vars(self.pes[name]), indent=1, sort_keys=True) + "\n")
        return path


@cache
def load_table(family: str = "xcup") -> CalibrationTable:
    folder = TABLE_DIR / family
    if not folder.is_dir():
        raise FannsError(
            f"no resource calibration for device family {family!r} ({folder}): boards of this family "
            "(see `fanns boards`) cannot be designed for yet",
            hint=f"run `fanns calibrate --family {family}` (a yosys synthesis of every PE's calibration points)",
        )
    return CalibrationTable(family, {p.stem: PeFit(**json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))})
