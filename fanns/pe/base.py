"""The processing-element contract: one class per PE carries all of its faces.

A PE is a frozen dataclass whose fields are its parameters. Next to the parameters it defines

1. its bit-accurate reference model (methods named after what they compute, numpy in and out),
2. its timing: `latency()` L and `ii()` II, so a query of N inputs costs `cycles(N) = L + (N-1)*II`,
3. its resources, from the committed calibration table (`fanns calibrate` measures it with yosys)
   through the features returned by `resource_features()`, and its register-to-register timing,
   from the committed timing table (`fanns calibrate --timing`) through `timing_features()`,
4. its Amaranth component (`component()`), with stream interfaces,
5. the cocotb testbench module in `sim/` that checks the component against the model,
6. the HLS C++ header in `hls/` that implements the same behaviour (`hls_header`), and, for a PE
   an HLS kernel instantiates, the C++ call that does (`hls_call`, filled in by `hls_function()`).

Subclasses register themselves by `name`; `fanns.pe.registry()` lists them.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

from amaranth.lib import wiring

from fanns.errors import FannsError
from fanns.hdl.modules import separate
from fanns.hdl.verilog import to_verilog
from fanns.pe.calibration_table import load_table
from fanns.pe.timing_table import PeTiming, pe_timing
from fanns.resources import Resources
from fanns.tools.yosys import URAM_FAMILIES

_REGISTRY: dict[str, type[PE]] = {}


@dataclasses.dataclass(frozen=True)
class PE:
    """Base class of all processing elements (see the module docstring)."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    timing_formula: ClassVar[str] = ""
    hls_header: ClassVar[str] = ""
    hls_call: ClassVar[str] = ""
    """The C++ function of `hls_header` that runs this PE for one query, a `str.format` template
    over the PE's fields and properties (e.g. "fanns::hpq<{z}, {s}, {s1}, {key_bits}>"); empty
    when no generated kernel calls the PE directly."""
    testbench: ClassVar[str] = ""
    calibration_points: ClassVar[tuple[dict[str, Any], ...]] = ()
    logic_features: ClassVar[tuple[str, ...]] = ()
    """Resource features that count datapath logic (adder, multiplexer bits). When set, the LUT fit
    uses only these (and the constant) and the other kinds only the rest, so LUTs follow the
    logic's structure and registers/memories/DSPs are not fitted on multiplexer counts."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name"):
            _REGISTRY[cls.name] = cls

    def __post_init__(self) -> None:
        self.validate()

    # -- parameters ---------------------------------------------------------------------------
    def validate(self) -> None:
        """Raise FannsError when the parameters are invalid; override to add checks."""

    def params(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def require(self, condition: bool, message: str, hint: str | None = None) -> None:
        if not condition:
            raise FannsError(f"{self.name}: {message}", hint=hint)

    def hls_function(self) -> str:
        """`hls_call` with this PE's parameters: the template instance an HLS kernel calls."""
        if not self.hls_call:
            raise FannsError(f"{self.name}: no HLS call", hint="set `hls_call` beside the PE's `hls_header`")
        return self.hls_call.format_map(_Attributes(self))

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        raise NotImplementedError

    def ii(self) -> int:
        raise NotImplementedError

    def cycles(self, n: int) -> int:
        """Cycles to process `n` inputs of one query: L + (N-1)*II (0 for no input)."""
        return 0 if n <= 0 else self.latency() + (n - 1) * self.ii()

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        """Quantities the resources are linear in (a constant term "1" is always added)."""
        raise NotImplementedError

    def features(self) -> dict[str, float]:
        return {"1": 1.0, **self.resource_features()}

    def resources(self, family: str = "xcup") -> Resources:
        """Predicted from the family's calibration; a memory in UltraRAM on a family without it is
        refused (its fit has no UltraRAM points, so it would be priced as free)."""
        if family not in URAM_FAMILIES and self.features().get("uram_tiles", 0):
            raise FannsError(
                f"PE {self.name} keeps a memory in UltraRAM, which device family {family} does not have",
                hint="store it in block RAM (storage bram)",
            )
        return load_table(family).predict(self)

    # -- clock: register-to-register delay --------------------------------------------------------
    def timing_features(self, family: str = "xcup") -> dict[str, float]:
        """Quantities the register-to-register delay is linear in: a constant, and the logarithm
        of the registers and LUTs (the widest nets of a PE are its pipeline enable and its reset,
        whose routed delay grows with the logarithm of their loads; deeper logic comes with more
        LUTs). Predicted from the family's resource calibration."""
        r = self.resources(family)
        return {"1": 1.0, "log2_ff": math.log2(1.0 + r.ff), "log2_lut": math.log2(1.0 + r.lut)}

    def rtl_timing(self, family: str = "xcup") -> PeTiming | None:
        """The estimated register-to-register timing on `family` (`fanns.pe.timing_table`), or
        None when the family's timing table has no entry for this PE."""
        return pe_timing(self, family)

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        raise NotImplementedError

    def instance(self) -> wiring.Component:
        """The component as a part of a larger design: while the design is converted to Verilog,
        a module of its own, converted once for every instance of equal parameters
        (`fanns.hdl.modules`); elsewhere the component itself."""
        return separate(self.component(), self, self.name)

    def verilog(self, top: str | None = None) -> str:
        return to_verilog(self.component(), top or self.name)


class _Attributes:
    """A PE's fields and properties by name, for `str.format_map`."""

    def __init__(self, pe: PE) -> None:
        self.pe = pe

    def __getitem__(self, key: str) -> Any:
        return getattr(self.pe, key)


def registered() -> dict[str, type[PE]]:
    """The PE classes imported so far, by name (`fanns.pe.registry()` imports them all first)."""
    return dict(sorted(_REGISTRY.items()))
