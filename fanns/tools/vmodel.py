"""A Verilated model driven from Python without cocotb: the compiled harness of whole-accelerator benches.

A bench whose memories are in RTL (`fanns.sim.axi_memory.SimMemory`) needs no per-cycle Python:
the host only loads memories, programs registers, waits for the end of a run and reads results.
`ModelBuild` verilates the bench into a shared library with the clock loop and the back-door
memory transfers in C++ (`sim/compiled/vmodel.cpp`) and `Model` drives it through ctypes:
`poke`/`peek` set and read top-level ports by their Verilog names, `step(n)` runs n clock cycles,
`step_until` runs until a port shows a value, `write_words`/`read_words` move memory images
through a bench's back door. cocotb's scheduler (two VPI callbacks and a Python wake-up per clock
period, and `--public-flat-rw`) is what this removes; timing is the RTL's own, so a bench keeps its
cycles exactly.

Cycle semantics: inputs set between two `step`s are sampled by the next rising edge; `peek`
returns the value with the inputs set so far (combinational outputs settled), so a handshake read
before `step()` is the one that edge completes. Models are built with `-O3`, `--x-assign fast`,
`--x-initial fast` and no timing (`BUILD_FLAGS`), with `--trace` only when asked (`ModelBuild(trace=True)`,
then `Model.trace(path)` writes a VCD); one model runs on one thread.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from fanns.datasets.cache import cache_root
from fanns.errors import FannsError
from fanns.paths import shared_dir
from fanns.tools import objcache
from fanns.tools.verilator import PCH_FIX, verilator_bin, write_sources

BUILD_FLAGS = ("-O3", "--x-assign", "fast", "--x-initial", "fast", "--no-timing", "-Wno-fatal")
"""Verilator's options: its optimisations, X values resolved the fast way (Amaranth initialises
every register), no timing scheduler (tracing is a `ModelBuild` option)."""
WARNINGS = ("-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC")
CXX_FLAGS = "-fPIC -fvisibility=hidden"
"""Position-independent for the shared library; only the harness's `vm_*` functions exported, so
two models loaded in one process keep their own copy of Verilator's runtime."""
CXX_OPT = "-O2"
"""g++ optimisation of the model (Verilator's default is -Os)."""
QUICK_CXX_OPT = "-O0"
"""The optimisation of a model that simulates only a few queries: its build, not its run, is the
cost (g++ -O0 builds a whole IVF-PQ bench several times faster than -O2)."""
CXX_OPTS = ("-O0", "-O1", "-O2", "-O3", "-Os", "-Og")
LIBRARY = "libvmodel.so"

_PORT = re.compile(r"VL_(?:IN|OUT|INOUT)(?:8|16|64|W)?\(&(\w+),(\d+),(\d+)(?:,\d+)?\);")
_ESCAPE = re.compile(r"__0([0-9A-F]{2})")


def header_ports(header: str) -> list[tuple[str, str, int]]:
    """(Verilog name, C++ member, width) of every top-level port Verilator declared in `Vtop.h`
    (Verilator escapes characters of a name as `__0XX`: `s_axil__awaddr` is `s_axil___05Fawaddr`,
    and prefixes names a C++ compiler may reserve with `__SYM__`: `interrupt` is `__SYM__interrupt`)."""
    out = []
    for member, msb, lsb in _PORT.findall(header):
        name = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), member.removeprefix("__SYM__"))
        out.append((name, member, int(msb) - int(lsb) + 1))
    return out


def harness_source() -> Path:
    """The clock loop and back door every model is compiled with (`sim/compiled/vmodel.cpp`)."""
    return shared_dir("sim") / "compiled" / "vmodel.cpp"


class ModelBuild:
    """One Verilator build of `sources` (file name -> Verilog text) with top module `top` into
    `build_dir`, as a shared library `Model`s open; rebuilt only when the sources change. `cxx_opt`:
    g++'s optimisation of the model (one of `CXX_OPTS`; `QUICK_CXX_OPT` for a short simulation)."""

    def __init__(
        self,
        sources: Mapping[str, str],
        top: str,
        build_dir: Path,
        clock: str = "clk",
        cxx_opt: str = CXX_OPT,
        trace: bool = False,
    ):
        """`trace`: verilate with --trace, so a model can write its waveforms (`Model.trace`); a
        traced build lives beside the plain one, in `build_dir` + "-trace"."""
        if cxx_opt not in CXX_OPTS:
            raise FannsError(
                f"unknown C++ optimisation {cxx_opt!r} for the Verilated model", hint=f"one of {', '.join(CXX_OPTS)}"
            )
        self.top, self.clock, self.cxx_opt, self.trace = top, clock, cxx_opt, trace
        self.build_dir = Path(f"{Path(build_dir).resolve()}{'-trace' if trace else ''}")
        self.paths = write_sources(self.build_dir, sources)

    @property
    def library(self) -> Path:
        return self.build_dir / LIBRARY

    def _stale(self) -> bool:
        """No library yet, or one older than a source or the harness (a fanns update may change it)."""
        lib = self.library
        inputs = [*self.paths, harness_source()]
        return not lib.exists() or any(p.stat().st_mtime > lib.stat().st_mtime for p in inputs)

    def build(self) -> None:
        """Verilate, list the ports for the harness, compile and link (the log in `build.log`)."""
        if not self._stale():
            return
        harness = harness_source()
        log = self.build_dir / "build.log"
        verilate = [
            str(verilator_bin() / "verilator"),
            "--cc",
            "--exe",
            "-Mdir",
            str(self.build_dir),
            "--top-module",
            self.top,
            "--prefix",
            "Vtop",
            "-o",
            LIBRARY,
            *BUILD_FLAGS,
            *(("--trace",) if self.trace else ()),
            *WARNINGS,
            "-CFLAGS",
            f"{CXX_FLAGS} -I{self.build_dir}",
            "-LDFLAGS",
            "-shared -Wl,-Bsymbolic",
            str(harness),
            *map(str, self.paths),
        ]
        self._run(verilate, log, "w")
        ports = header_ports((self.build_dir / "Vtop.h").read_text())
        if self.clock not in {name for name, _, _ in ports}:
            raise FannsError(f"{self.top} has no clock port {self.clock!r}", hint="name the bench's clock port")
        lines = [f'FANNS_PORT("{name}", {member}, {width})\n' for name, member, width in ports]
        (self.build_dir / "ports.inc").write_text("".join(lines))
        env = dict(os.environ)
        env.setdefault("OBJCACHE", f"{sys.executable} {objcache.__file__}")  # a user's ccache wins
        env["FANNS_OBJCACHE_DIR"] = str(cache_root() / "verilator-objects")
        make = [
            "make",
            "-j",
            str(min(4, os.cpu_count() or 1)),
            "-C",
            str(self.build_dir),
            "-f",
            "Vtop.mk",
            PCH_FIX,
            f"OPT_FAST={self.cxx_opt}",
            f"OPT_SLOW={self.cxx_opt}",
            f"OPT_GLOBAL={self.cxx_opt}",
        ]
        self._run(make, log, "a", env)

    def _run(self, cmd: list[str], log: Path, mode: str, env: dict | None = None) -> None:
        with open(log, mode) as out:
            done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
        if done.returncode != 0:
            tail = log.read_text()[-4000:]
            raise FannsError(
                f"the Verilator build of {self.top} failed (log: {log}):\n{tail}",
                hint="the generated Verilog does not compile: report it with the design",
            )

    def open(self) -> Model:
        """A fresh model (every register at its reset-free initial value) of this build."""
        self.build()
        return Model(self.library, self.clock)


_LIBS: dict[Path, ctypes.CDLL] = {}


def _load(path: Path) -> ctypes.CDLL:
    """The library at `path`, loaded once per process (a rebuilt library gets a new path key by mtime)."""
    key = Path(f"{path}@{path.stat().st_mtime_ns}")
    if key not in _LIBS:
        lib = ctypes.CDLL(str(path))
        u64, vp, i32 = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int
        words = ctypes.POINTER(ctypes.c_uint32)
        buf = ctypes.c_char_p
        lib.vm_new.restype, lib.vm_new.argtypes = vp, [i32]
        lib.vm_free.argtypes = [vp]
        lib.vm_ports.restype, lib.vm_ports.argtypes = i32, []
        lib.vm_port_name.restype, lib.vm_port_name.argtypes = ctypes.c_char_p, [i32]
        lib.vm_port_width.restype, lib.vm_port_width.argtypes = i32, [i32]
        lib.vm_set.argtypes = lib.vm_get.argtypes = [vp, i32, words]
        lib.vm_step.argtypes = [vp, u64]
        lib.vm_cycles.restype, lib.vm_cycles.argtypes = u64, [vp]
        lib.vm_step_until.restype, lib.vm_step_until.argtypes = u64, [vp, i32, u64, u64, u64]
        lib.vm_write_words.argtypes = [vp, i32, i32, i32, buf, u64, i32, u64, i32]
        lib.vm_read_words.argtypes = [vp, i32, i32, ctypes.c_void_p, u64, i32, u64]
        lib.vm_trace.restype, lib.vm_trace.argtypes = i32, [vp, ctypes.c_char_p]
        _LIBS[key] = lib
    return _LIBS[key]


class Model:
    """A running instance of a `ModelBuild` (see the module docstring for the cycle semantics)."""

    def __init__(self, library: Path, clock: str):
        self._h = None
        self._lib = _load(Path(library))
        lib = self._lib
        ports = [(lib.vm_port_name(i).decode(), lib.vm_port_width(i)) for i in range(lib.vm_ports())]
        self.ports = {name: (i, width) for i, (name, width) in enumerate(ports)}
        if clock not in self.ports:
            raise FannsError(f"the model has no clock port {clock!r}")
        self._h = self._lib.vm_new(self.ports[clock][0])
        self._words = (ctypes.c_uint32 * (max(w for _, w in ports) // 32 + 2))()

    def close(self) -> None:
        if self._h:
            self._lib.vm_free(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def trace(self, path: Path) -> None:
        """Write every signal's waveform to the VCD file `path` from this cycle on (time 2c + 1 is
        cycle c's rising edge); the file is complete when the model is closed."""
        code = self._lib.vm_trace(self._h, str(Path(path).resolve()).encode())
        if code == 1:
            raise FannsError("this model was built without tracing", hint="build it with ModelBuild(..., trace=True)")
        if code == 2:
            raise FannsError(f"the model already writes a trace; not starting another in {path}")

    def _port(self, name: str) -> tuple[int, int]:
        try:
            return self.ports[name]
        except KeyError:
            raise FannsError(
                f"the model has no port {name!r}", hint="the bench's top-level ports are the ones a host drives"
            ) from None

    def poke(self, name: str, value: int) -> None:
        """Set input `name` (sampled by the next rising edge)."""
        index, width = self._port(name)
        value = int(value) & ((1 << width) - 1)
        for i in range((width + 31) // 32):
            self._words[i] = (value >> (32 * i)) & 0xFFFFFFFF
        self._lib.vm_set(self._h, index, self._words)

    def peek(self, name: str) -> int:
        """The value of port `name` now (inputs set so far included)."""
        index, width = self._port(name)
        self._lib.vm_get(self._h, index, self._words)
        return sum(self._words[i] << (32 * i) for i in range((width + 31) // 32))

    def step(self, n: int = 1) -> None:
        """Run `n` clock cycles."""
        self._lib.vm_step(self._h, n)

    @property
    def cycles(self) -> int:
        """Clock cycles run since the model was created."""
        return int(self._lib.vm_cycles(self._h))

    def step_until(self, name: str, value: int, limit: int, mask: int | None = None) -> int:
        """Run until port `name` (masked) equals `value` after a rising edge, at most `limit` cycles;
        return the cycles run (a port of at most 64 bits)."""
        index, width = self._port(name)
        mask = (1 << min(width, 64)) - 1 if mask is None else mask
        return int(self._lib.vm_step_until(self._h, index, mask, value, limit))

    def write_words(
        self, port: tuple[str, str, str], data: bytes, word_bytes: int, first: int, skip_zero: bool
    ) -> None:
        """Write `data` (whole words) from word `first` through the back door `port` = (address,
        data, write enable): one word per cycle; `skip_zero`: leave all-zero words out."""
        if len(data) % word_bytes:
            raise FannsError(f"{len(data)} bytes are not whole words of {word_bytes} bytes")
        a, d, e = (self._port(name)[0] for name in port)
        self._lib.vm_write_words(self._h, a, d, e, bytes(data), len(data) // word_bytes, word_bytes, first, skip_zero)

    def read_words(self, port: tuple[str, str], count: int, word_bytes: int, first: int) -> bytes:
        """`count` words from word `first` through the back door `port` = (address, read data)."""
        a, d = (self._port(name)[0] for name in port)
        out = ctypes.create_string_buffer(count * word_bytes)
        self._lib.vm_read_words(self._h, a, d, out, count, word_bytes, first)
        return out.raw
