"""FPGA resource vectors (LUT, FF, BRAM18, URAM, DSP) and their arithmetic.

One `Resources` value describes a PE, a stage, a whole accelerator or a board budget; they add,
scale and compare element-wise, so the resource model of Eq. 6.2 is plain arithmetic.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np

KINDS = ("lut", "ff", "bram18", "uram", "dsp")


@dataclass(frozen=True)
class Resources:
    lut: float = 0.0
    ff: float = 0.0
    bram18: float = 0.0
    uram: float = 0.0
    dsp: float = 0.0

    def __add__(self, other: Resources) -> Resources:
        return Resources(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def __sub__(self, other: Resources) -> Resources:
        return Resources(*(a - b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def __mul__(self, k: float) -> Resources:
        return Resources(*(a * k for a in self.as_tuple()))

    __rmul__ = __mul__

    def as_tuple(self) -> tuple[float, ...]:
        return (self.lut, self.ff, self.bram18, self.uram, self.dsp)  # KINDS order (asserted below)

    def as_array(self) -> np.ndarray:
        return np.array(self.as_tuple(), dtype=np.float64)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Resources:
        return cls(**{k: float(data.get(k, 0.0)) for k in KINDS})

    def fits(self, budget: Resources) -> bool:
        return all(a <= b for a, b in zip(self.as_tuple(), budget.as_tuple()))

    def rounded(self) -> Resources:
        return Resources(*(float(np.ceil(a)) for a in self.as_tuple()))

    @staticmethod
    def total(items: list[Resources]) -> Resources:
        out = Resources()
        for r in items:
            out = out + r
        return out


assert tuple(f.name for f in fields(Resources)) == KINDS
