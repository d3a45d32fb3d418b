"""The graph benches (`FalconBench`, `FalconAcrossBench`: QPPs with their memory in RTL) on either
harness, with one parameter set (`sim/tb_falcon.py` documents it) and one report:

- "fast": the bench compiled with its clock loop in C++ (`fanns.tools.vmodel`) and driven from
  Python (`fanns.sim.compiled`, as the IVF-PQ fast harness);
- "cocotb": `sim/tb_falcon.py` under cocotb (the bench's ports public, nothing else).

What the fast harness assumes of a QPP's control port: its register map (`QppHw.regmap`) gives
every register a host writes by name (`regs`) and the `status` and 64-bit `cycles` registers;
`RegMap.control()` says which word and bit start a run (and clears a write-1-to-clear ap_done
first); a map with `gie` / `ier` registers (a Xilinx ap_ctrl_hs block) gets both set to 1 before
the start; the bench's `interrupt` output (one bit per QPP) goes high when a QPP's run is done and
stays high until the next start. Register writes answered with a response other than OKAY are
counted in `bad_response`, not raised. With `control` in the parameters both harnesses observe the
ap_ctrl_hs block of one QPP the same way (`sim/tb_falcon.py`: the control word before, during and
after the run, ISR toggled off) and report it as `protocol`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from fanns.errors import FannsError
from fanns.hdl.regmap import RegMap
from fanns.index.graph import WORD_BYTES
from fanns.sim.compiled import AxilHost, Csr, check_trace, load, read, reset
from fanns.tools.verilator import RtlSim
from fanns.tools.vmodel import ModelBuild

HARNESSES = ("fast", "cocotb")
DEFAULT_HARNESS = "fast"


class GraphBench:
    """A graph bench's Verilog (`sources`, top module `top`) built for `harness` under `build_dir`;
    with `trace` (a VCD path, fast harness) every run writes every signal's waveform there."""

    def __init__(
        self,
        sources: Mapping[str, str],
        top: str,
        build_dir: Path,
        regmap: RegMap,
        harness: str,
        trace: Path | None = None,
    ):
        if harness not in HARNESSES:
            raise FannsError(f"unknown simulation harness {harness!r}", hint=f"one of {', '.join(HARNESSES)}")
        check_trace(trace, harness)
        self.harness, self.regmap, self.trace = harness, regmap, trace
        if harness == "fast":
            self.sim = ModelBuild(sources, top, Path(build_dir) / "compiled", trace=trace is not None)
        else:
            self.sim = RtlSim(sources, top, Path(build_dir), top_only_public=True)  # cocotb touches the ports alone

    @property
    def build_dir(self) -> Path:
        return self.sim.build_dir

    def build(self) -> None:
        self.sim.build()

    def describe(self) -> str:
        """The simulator and its build, for a printout."""
        return f"{self.sim.describe()}, {self.harness} harness"

    def run(self, params: dict) -> dict:
        """Run the bench with `params` (`sim/tb_falcon.py`'s) and return its report."""
        if self.harness == "cocotb":
            return self.sim.run("tb_falcon", params=params)
        m = self.sim.open()
        try:
            if self.trace:
                m.trace(self.trace)
            return self._run(m, params)
        finally:
            m.close()

    def _run(self, m, p: dict) -> dict:
        m.poke("bd_we", 0)
        m.poke("latency", p["latency"])
        m.poke("stall", 0)
        reset(m)
        image = np.load(p["image"])
        load(m, image[: p["words"] * WORD_BYTES].tobytes(), p["word_bytes"])
        m.poke("stall", p["stall"])
        if "shared" in p:
            m.poke("shared", p["shared"])
        wall, cpu = time.perf_counter(), time.process_time()
        sets = p["regs"] if isinstance(p["regs"], list) else [p["regs"]]
        host = AxilHost(m)
        csrs = [Csr(host, self.regmap, i * p.get("window", 0), strict=False) for i in range(len(sets))]
        ctrl = self.regmap.control()
        for csr, regs in zip(csrs, sets):
            for name, value in regs.items():
                csr.write(name, int(value))
            for name in ("gie", "ier"):
                if self.regmap.has(name):
                    csr.write(name, 1)
            if ctrl.clear is not None:
                csr.write_word(ctrl.offset, ctrl.clear)
        seen = {}
        if p.get("control"):
            seen["before"] = csrs[0].read_word(ctrl.offset)
        t0 = m.cycles
        for csr in csrs:
            csr.write_word(ctrl.offset, ctrl.start)
        if p.get("control"):
            seen["running"] = csrs[0].read_word(ctrl.offset)
        everyone = (1 << len(sets)) - 1
        m.step_until("interrupt", everyone, max(0, t0 + p["timeout_cycles"] - m.cycles))
        timed_out = m.peek("interrupt") != everyone
        sim_cycles = m.cycles - t0
        if p.get("control"):
            seen.update(_observe_done(m, csrs[0], ctrl.offset, p["control"]["isr"][0]))
        m.poke("stall", 0)
        status = [csr.read("status") for csr in csrs]
        cycles = [csr.read("cycles") for csr in csrs]
        start, nbytes = p["result"]
        np.save(p["out"], np.frombuffer(read(m, p["word_bytes"], start, nbytes), dtype=np.uint8))
        several = isinstance(p["regs"], list)
        return {
            "status": status if several else status[0],
            "cycles": cycles if several else cycles[0],
            "sim_cycles": sim_cycles,
            "bad_response": sum(csr.bad for csr in csrs),
            "timed_out": timed_out,
            "seconds": time.perf_counter() - wall,
            "cpu_seconds": time.process_time() - cpu,
            "protocol": seen,
        }


def _observe_done(m, csr: Csr, ctrl: int, isr: int) -> dict:
    """The control word twice after the run (ap_done / ap_ready clear on read), ISR before and
    after writing its bits back (they toggle), the interrupt line, and the control word a while
    later (no restart with auto_restart off) — what `sim/tb_falcon.py` observes."""
    seen = {"done": csr.read_word(ctrl), "read_again": csr.read_word(ctrl), "isr": csr.read_word(isr)}
    csr.write_word(isr, seen["isr"])
    seen["isr_after_write"] = csr.read_word(isr)
    seen["interrupt_after_write"] = m.peek("interrupt")
    m.step(1000)
    seen["later"] = csr.read_word(ctrl)
    return seen
