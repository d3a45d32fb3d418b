"""A Verilated model driven from Python without cocotb: the compiled harness of whole-accelerator benches.

A bench whose memories are in RTL (`fanns.sim.axi_memory.SimMemory`) needs no per-cycle Python:
the host only loads memories, programs registers, waits for the end of a run and reads results.
`ModelBuild` verilates the bench into a shared library with the clock loop and the back-door
memory transfers in C++ (`sim/compiled/vmodel.cpp`) and `Model` drives it through ctypes:
`poke`/`peek` set and read top-level ports by their Verilog names, `step(n)` runs n clock cycles,
`step_until` runs until a port shows a value, `write_memory`/`read_memory` move memory images
into and out of a bench's word arrays in place, without clock cycles (`write_words`/`read_words`
through a bench's clocked back-door ports, one word a cycle). cocotb's scheduler (two VPI
callbacks and a Python wake-up per clock period, and `--public-flat-rw`) is what this removes;
timing is the RTL's own, so a bench keeps its cycles exactly.

Cycle semantics: inputs set between two `step`s are sampled by the next rising edge; `peek`
returns the value with the inputs set so far (combinational outputs settled), so a handshake read
before `step()` is the one that edge completes. Models are built with `-O3`, `--x-assign fast`,
`--x-initial fast` and no timing (`BUILD_FLAGS`), with `--trace` only when asked (`ModelBuild(trace=True)`,
then `Model.trace(path)` writes a VCD); one model runs on one thread.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from fanns.errors import FannsError
from fanns.paths import shared_dir
from fanns.tools import objcache
from fanns.tools.modelcache import ModelEntry, content_key, runtime_objects, tool_version
from fanns.tools.vbuild import CXX, BuildOptions, BuildWatch, build_seconds, choose_options, jobs, prepare_sources
from fanns.tools.verilator import PCH_FIX, verilator_bin, write_sources

BUILD_FLAGS = ("-O3", "--x-assign", "fast", "--x-initial", "fast", "--no-timing", "-Wno-fatal")
"""Verilator's options: its optimisations, X values resolved the fast way (Amaranth initialises
every register), no timing scheduler (tracing is a `ModelBuild` option)."""
WARNINGS = ("-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC")
CXX_FLAGS = "-fPIC -fvisibility=hidden"
"""Position-independent for the shared library; only the harness's `vm_*` functions exported, so
two models loaded in one process keep their own copy of Verilator's runtime."""
DEFAULT_BUILD = BuildOptions()
"""g++ -O2 for the per-cycle code (Verilator's default is -Os), shared modules as hierarchical blocks."""
QUICK_BUILD = BuildOptions(cxx_opt="-O0")
"""The build of a model that simulates only a few queries: its build, not its run, is the cost."""
LIBRARY = "libvmodel.so"
LOG = "build.log"

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
    """One Verilator build of `sources` (file name -> Verilog text) with top module `top`, as a
    shared library `Model`s open, compiled as `options` say. The library is kept by content in
    the model cache (`fanns.tools.modelcache`: the same sources, options and tools open the model
    built before, in this process or another); `build_dir` is the folder of the runs' own files."""

    def __init__(
        self,
        sources: Mapping[str, str],
        top: str,
        build_dir: Path,
        clock: str = "clk",
        options: BuildOptions | None = DEFAULT_BUILD,
        trace: bool = False,
        cycles: int | None = None,
    ):
        """`options` None: the build with the least expected build and run time for simulating
        `cycles` cycles (`fanns.tools.vbuild.choose_options`). `trace`: verilate with --trace, so a
        model can write its waveforms (`Model.trace`); a traced build is flattened (no hierarchical
        blocks) and its runs' folder is `build_dir` + "-trace"."""
        self.top, self.clock, self.trace = top, clock, trace
        if options is None:
            options, self.prepared = choose_options(sources, cycles or 0, hierarchical=not trace)
        else:
            options = dataclasses.replace(options, hierarchical=False) if trace else options
            self.prepared = prepare_sources(sources, options.hierarchical)
        self.options = options
        self.build_dir = Path(f"{Path(build_dir).resolve()}{'-trace' if trace else ''}")
        self.build_dir.mkdir(parents=True, exist_ok=True)
        self.sources, self.blocks = self.prepared.sources, self.prepared.blocks
        key = content_key(
            [
                top,
                *BUILD_FLAGS,
                *WARNINGS,
                CXX_FLAGS,
                *self.options.make_variables(),
                *self.options.verilator_flags(),
                f"trace={trace}",
                harness_source().read_text(),
                tool_version(str(verilator_bin() / "verilator")),
                tool_version(CXX),
                *(part for name, text in self.sources.items() for part in (name, text)),
            ]
        )
        self.entry = ModelEntry(f"{top}{'-trace' if trace else ''}", key)
        self.timings: dict[str, dict] = {}
        """Wall and processor seconds of the build's steps (`verilate`, with the MB of C++ it wrote,
        and `compile`), when this object built the model."""

    @property
    def library(self) -> Path:
        return self.entry.folder / LIBRARY

    @property
    def log(self) -> Path:
        """The build's log (Verilator's and the compiler's output)."""
        return self.entry.folder / LOG

    def describe(self) -> str:
        """What the build is, for a printout: e.g. "Verilator, g++ -O1 (run-once code -O0), 2 hierarchical blocks"."""
        return f"Verilator, {self.options.describe(self.blocks)}"

    def build(self, estimate: tuple[float, float] | None = None) -> bool:
        """Verilate, list the ports for the harness, compile and link, unless the model cache has the
        library already; True if it was built now. `estimate`: the expected seconds of verilation and
        compilation, shown with the build's progress (`fanns.tools.vbuild.BuildWatch`)."""
        if self.entry.ready:
            self.entry.touch()
            return False
        record = {"top": self.top, "options": self.describe(), "compiled_bytes": self.prepared.compiled_bytes}
        record["seconds"] = self.timings  # filled by the build before the entry is written
        with self.entry.build(keep=(LIBRARY, LOG), record=record) as stage:
            if stage is None:
                return False
            verilate_s, compile_s = estimate or build_seconds(self.prepared, self.options)
            with BuildWatch(stage, self.top, verilate_s, compile_s):
                self._compile(stage)
        return True

    def _compile(self, folder: Path) -> None:
        paths = write_sources(folder, self.sources)
        log = folder / LOG
        verilate = [
            str(verilator_bin() / "verilator"),
            "--cc",
            "--exe",
            "-Mdir",
            str(folder),
            "--top-module",
            self.top,
            "--prefix",
            "Vtop",
            "-o",
            LIBRARY,
            *BUILD_FLAGS,
            *self.options.verilator_flags(),
            *(("--hierarchical", "-j", str(jobs())) if self.blocks else ()),  # blocks verilated in parallel
            *(("--trace",) if self.trace else ()),
            *WARNINGS,
            "-CFLAGS",
            CXX_FLAGS,  # ports.inc is found by make's -I. (objects keyed by their command stay reusable)
            "-LDFLAGS",
            "-shared -Wl,-Bsymbolic",
            str(harness_source()),
            *map(str, paths),
        ]
        self.timings["verilate"] = self._run(verilate, log, "w", cwd=folder)
        self.timings["verilate"]["cpp_mb"] = round(sum(p.stat().st_size for p in folder.rglob("*.cpp")) / 1e6, 2)
        ports = header_ports((folder / "Vtop.h").read_text())
        if self.clock not in {name for name, _, _ in ports}:
            raise FannsError(f"{self.top} has no clock port {self.clock!r}", hint="name the bench's clock port")
        lines = [f'FANNS_PORT("{name}", {member}, {width})\n' for name, member, width in ports]
        (folder / "ports.inc").write_text("".join(lines))
        env = dict(os.environ)
        env.setdefault("OBJCACHE", f"{sys.executable} {objcache.__file__}")  # a user's ccache wins
        env["FANNS_OBJCACHE_DIR"] = str(runtime_objects())
        makefile = ("-f", "Vtop_hier.mk", "hier_build") if self.blocks else ("-f", "Vtop.mk")
        make = ["make", "-j", str(jobs()), "-C", str(folder), *makefile, PCH_FIX]
        self.timings["compile"] = self._run([*make, *self.options.make_variables()], log, "a", env)

    def _run(self, cmd: list[str], log: Path, mode: str, env: dict | None = None, cwd: Path | None = None) -> dict:
        """Run a build step; its wall and processor seconds (its whole process tree's)."""
        wall, cpu = time.perf_counter(), _children_cpu()
        with open(log, mode) as out:
            done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, check=False)
        if done.returncode != 0:
            tail = log.read_text()[-4000:]
            raise FannsError(
                f"the Verilator build of {self.top} failed:\n{tail}",
                hint="the generated Verilog does not compile: report it with the design",
            )
        return {"wall_s": round(time.perf_counter() - wall, 2), "cpu_s": round(_children_cpu() - cpu, 2)}

    def open(self) -> Model:
        """A fresh model (every register at its reset-free initial value) of this build."""
        self.build()
        return Model(self.library, self.clock)


def _children_cpu() -> float:
    """Processor seconds of this process's finished children (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclasses.dataclass(frozen=True)
class Memory:
    """A word array of a model that the back door reaches in place: its index in the harness,
    its words' bytes and its depth in words."""

    index: int
    word_bytes: int
    depth: int


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
        lib.vm_mems.restype, lib.vm_mems.argtypes = i32, [vp]
        lib.vm_mem_name.restype, lib.vm_mem_name.argtypes = ctypes.c_char_p, [vp, i32]
        lib.vm_mem_word_bytes.restype, lib.vm_mem_word_bytes.argtypes = i32, [vp, i32]
        lib.vm_mem_depth.restype, lib.vm_mem_depth.argtypes = u64, [vp, i32]
        lib.vm_mem_write.restype, lib.vm_mem_write.argtypes = i32, [vp, i32, buf, u64, u64, i32]
        lib.vm_mem_read.restype, lib.vm_mem_read.argtypes = i32, [vp, i32, ctypes.c_void_p, u64, u64]
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
        h = self._h
        self.memories = {
            lib.vm_mem_name(h, i).decode(): Memory(i, lib.vm_mem_word_bytes(h, i), lib.vm_mem_depth(h, i))
            for i in range(lib.vm_mems(h))
        }
        """The word arrays the back door reaches in place (`write_memory`), by their instance's
        hierarchical name (e.g. "TOP.fanns_ivfpq_bench.mem_io.ram")."""

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

    def memory(self, part: str = "") -> str:
        """The name of the one word array whose hierarchical name has the component `part` (e.g.
        "mem_io"); "": the model's only one."""
        names = [n for n in self.memories if not part or part in n.split(".")]
        if len(names) != 1:
            raise FannsError(
                f"{'no' if not names else 'more than one'} memory of the model is {part or 'the only one'!r}",
                hint=f"its memories: {', '.join(self.memories) or 'none'} (a bench memory is a fanns_sim_ram)",
            )
        return names[0]

    def write_memory(self, name: str, data: bytes, first: int, skip_zero: bool) -> None:
        """Write `data` (whole words of the array's width) from word `first` of word array `name`
        in place: no clock cycle runs; `skip_zero`: leave all-zero words out."""
        mem = self.memories[name]
        if len(data) % mem.word_bytes:
            raise FannsError(f"{len(data)} bytes are not whole words of {mem.word_bytes} bytes of {name}")
        if self._lib.vm_mem_write(self._h, mem.index, bytes(data), len(data) // mem.word_bytes, first, skip_zero):
            raise FannsError(f"{len(data)} bytes from word {first} pass the end of {name} ({mem.depth} words)")

    def read_memory(self, name: str, count: int, first: int) -> bytes:
        """`count` words from word `first` of word array `name`, read in place (no clock cycle)."""
        mem = self.memories[name]
        out = ctypes.create_string_buffer(count * mem.word_bytes)
        if self._lib.vm_mem_read(self._h, mem.index, out, count, first):
            raise FannsError(f"{count} words from word {first} pass the end of {name} ({mem.depth} words)")
        return out.raw

    def read_words(self, port: tuple[str, str], count: int, word_bytes: int, first: int) -> bytes:
        """`count` words from word `first` through the back door `port` = (address, read data)."""
        a, d = (self._port(name)[0] for name in port)
        out = ctypes.create_string_buffer(count * word_bytes)
        self._lib.vm_read_words(self._h, a, d, out, count, word_bytes, first)
        return out.raw
