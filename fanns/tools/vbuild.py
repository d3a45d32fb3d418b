"""How a Verilated model of a whole accelerator is compiled, what that costs, and its progress.

What the build of a whole design spends (benchmarks/sim_build.py, docs/simulation.md): Verilator
turns the Verilog into C++ in a minority of the time; g++ compiling that C++ is the rest. Verilator
writes a module's code once per instance (it flattens the design), so the demo design's 40
BuildLUT PEs, one Verilog module since `fanns.hdl.modules` converts each distinct PE once, are
still 40 copies of the same C++. `prepare_sources` therefore makes every large module that several
instances share a Verilator *hierarchical block* (`/*verilator hier_block*/`): verilated and
compiled once, into a library every instance calls. Its other levers are g++'s optimisation of the
per-cycle code (`BuildOptions.cxx_opt`) and of the code that runs once (`slow_opt`: the initial
blocks and the first settle, -O0 by default since their run is a few microseconds).

`BuildWatch` shows a build's progress: a status line with the expected time (always), and on a
terminal a bar with the time remaining: verilation against its estimate, then compilation by the
C++ compiled so far (the object files that have appeared, weighted by their sources' size).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from fanns.errors import FannsError
from fanns.hdl.verilog import instance_counts, submodules, verilog_modules
from fanns.progress import eta_bar, status

CXX = "c++"
"""The compiler Verilator's makefiles call."""
CXX_OPTS = ("-O0", "-O1", "-O2", "-O3", "-Os", "-Og")
SLOW_OPT = "-O0"
"""g++'s optimisation of a model's run-once code (Verilator's OPT_SLOW: initial values, the first
settle): it runs once per model, so its compile time is all it costs."""
HIER_MIN_BYTES = 16_000
"""A module becomes a hierarchical block when its Verilog has at least this many bytes..."""
HIER_MIN_SAVED = 500_000
"""... and its other instances at least this many: smaller or unshared modules stay flattened.
A block is not free: Verilator verilates each on its own, parsing the whole design again (4 s of
processor time for a 784-d design), and a cycle calls into every instance (the demo's two blocks
make a cycle 1.5x slower)."""


@dataclass(frozen=True)
class BuildOptions:
    """How a model is compiled: g++'s optimisation of its per-cycle code and of Verilator's runtime
    (`cxx_opt`: OPT_FAST and OPT_GLOBAL), of its run-once code (`slow_opt`: OPT_SLOW), and whether
    modules shared by several instances are compiled once as hierarchical blocks (`hierarchical`)."""

    cxx_opt: str = "-O2"
    slow_opt: str = SLOW_OPT
    hierarchical: bool = True
    split: int = 0
    """Statements per C++ function and per C++ file (Verilator's `--output-split-cfuncs` and
    `--output-split`; 0: Verilator's defaults, files of 20,000 statements, functions unsplit).
    Measured (benchmarks/sim_build.py `hier-O1-s1000`), not a candidate of `choose_options`: the
    demo compiles in 47 instead of 51 s, the 784-d design in 231 instead of 106 s (each of its 244
    C++ files of the top parses the 1 MB model header; one function stays a 1.2 MB file)."""

    def __post_init__(self):
        for opt in (self.cxx_opt, self.slow_opt):
            if opt not in CXX_OPTS:
                raise FannsError(
                    f"unknown C++ optimisation {opt!r} for the Verilated model", hint=f"one of {', '.join(CXX_OPTS)}"
                )
        if self.split < 0:
            raise FannsError(f"split {self.split} of the Verilated model is negative", hint="0 (unsplit) or more")

    def make_variables(self) -> list[str]:
        """The optimisation variables of Verilator's makefiles."""
        return [f"OPT_FAST={self.cxx_opt}", f"OPT_SLOW={self.slow_opt}", f"OPT_GLOBAL={self.cxx_opt}"]

    def verilator_flags(self) -> list[str]:
        """Verilator's options for `split`."""
        return ["--output-split", str(self.split), "--output-split-cfuncs", str(self.split)] if self.split else []

    def describe(self, blocks: int | None = None) -> str:
        """E.g. "g++ -O1 (run-once code -O0), 2 hierarchical blocks"."""
        text = f"g++ {self.cxx_opt}" + (f" (run-once code {self.slow_opt})" if self.slow_opt != self.cxx_opt else "")
        text += f", split every {self.split:,} statements" if self.split else ""
        if not self.hierarchical:
            return text + ", flattened"
        return text + (f", {blocks} hierarchical block{'s' if blocks != 1 else ''}" if blocks is not None else "")


def plain_name(name: str) -> str:
    """A plain Verilog identifier for a module name (Verilator's hierarchical blocks mishandle
    escaped names such as `\\fanns_ivfpq.core.lut.build_lut0`: the block is built but not used)."""
    return "hier_" + re.sub(r"\W", "_", name.lstrip("\\")) if name.startswith("\\") else name


def hier_blocks(text: str) -> list[str]:
    """The modules of `text` worth a hierarchical block (`HIER_MIN_BYTES`, `HIER_MIN_SAVED`), in
    file order; a module inside another block stays inside it."""
    modules = verilog_modules(text)
    counts = instance_counts(text)
    sizes = {name: len(m.group("body")) for name, m in modules.items()}
    chosen = [
        name for name in modules if sizes[name] >= HIER_MIN_BYTES and (counts[name] - 1) * sizes[name] >= HIER_MIN_SAVED
    ]
    inside: set[str] = set()
    for name in chosen:
        stack = [name]
        while stack:
            for child in submodules(modules[stack.pop()].group("body"), modules):
                if child not in inside:
                    inside.add(child)
                    stack.append(child)
    return [name for name in chosen if name not in inside]


def expanded_bytes(text: str, blocks: Collection[str] = ()) -> int:
    """Bytes of Verilog Verilator expands `text` into (every instance a copy of its module), each
    module of `blocks` counted once: what its C++ grows with (`blocks` empty: what a cycle of the
    flattened model evaluates)."""
    modules = verilog_modules(text)
    children = {name: submodules(m.group("body"), modules) for name, m in modules.items()}
    memo: dict[tuple[str, bool], int] = {}

    def size(name: str, stop: bool) -> int:
        if (name, stop) not in memo:
            kids = [c for c in children[name] if not (stop and c in blocks)]
            memo[name, stop] = len(modules[name].group("body")) + sum(size(c, stop) for c in kids)
        return memo[name, stop]

    inner = {c for kids in children.values() for c in kids}
    return sum(size(r, True) for r in modules if r not in inner) + sum(size(b, False) for b in blocks)


def mark_blocks(text: str, blocks: list[str]) -> str:
    """`text` with each module of `blocks` renamed to its `plain_name` (definition and instances)
    and marked `/*verilator hier_block*/`."""
    modules = verilog_modules(text)
    out, pos = [], 0
    renames = {name: plain_name(name) for name in blocks}
    for name, m in modules.items():
        head = m.group(0)[: m.start("body") - m.start()]
        body = m.group("body")
        for old, new in renames.items():
            body = re.sub(rf"^  {re.escape(old)}(?=\s)", f"  {new}", body, flags=re.M)
        if name in renames:
            head = head.replace(f"module {name}", f"module {renames[name]}", 1) + "  /*verilator hier_block*/\n"
        out.append(text[pos : m.start()] + head + body + "endmodule\n")
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


@dataclass(frozen=True)
class Prepared:
    """What a model compiles (`sources`), its hierarchical blocks (`blocks`), the Verilog bytes
    Verilator expands it into (`compiled_bytes`, each block once: what the build grows with) and
    the bytes a cycle evaluates (`evaluated_bytes`: every instance)."""

    sources: dict[str, str]
    blocks: int
    compiled_bytes: int
    evaluated_bytes: int


def prepare_sources(sources: Mapping[str, str], hierarchical: bool) -> Prepared:
    """The sources a model compiles: with `hierarchical`, every Verilog file's shared large modules
    made hierarchical blocks (`hier_blocks`)."""
    out, blocks, compiled, evaluated = {}, 0, 0, 0
    for name, text in sources.items():
        if name.endswith(".v"):
            chosen = hier_blocks(text) if hierarchical else []
            compiled += expanded_bytes(text, chosen)
            evaluated += expanded_bytes(text)
            text = mark_blocks(text, chosen) if chosen else text
            blocks += len(chosen)
        out[name] = text
    return Prepared(out, blocks, compiled, evaluated)


# The cost model, measured with benchmarks/sim_build.py on the demo design of `make demo` (processor
# seconds, machine loaded; docs/simulation.md): today's demo (8 BuildLUT PEs; 3.56 MB compiled with
# its 2 blocks, 7.64 MB evaluated) where it was built, the earlier demo (40 BuildLUT PEs; 3.1 MB
# compiled, 8.4 MB evaluated) for the ratios between optimisation levels.
VERILATE_S_PER_MB = {True: 4.5, False: 8.7}
"""Processor seconds Verilator spends per MB of Verilog it expands (`Prepared.compiled_bytes`), by
whether the build has hierarchical blocks: today's demo 15.9 s for 3.56 MB hierarchical, 66.4 s
for 7.64 MB flattened (it optimises across the whole flattened netlist). The 784-d README design
agrees (`sim_build.py --design d784=... --options hier-O1 --queries 8 --rate-queries 0`): 46.5 s
for 9.96 MB with 5 blocks, 4.7 s per MB."""
COMPILE_S_PER_MB = {"-O0": 12.8, "-O1": 14.3, "-O2": 21.1}
"""Processor seconds g++ spends per MB of expanded Verilog (the C++ grows with it, about 3.3 bytes a
byte), by the per-cycle code's optimisation, the run-once code at -O0: today's demo (3.56 MB)
-O0 45.5 s, -O1 50.8 s; -O2 in the earlier demo's proportion to -O1 (103.7 against 70.2 s). The
784-d README design at -O1 (the build above) compiles in less: 105.7 s for 9.96 MB, 10.6 s per MB,
so the model overestimates its build by a quarter."""
RUN_S_PER_MCYCLE_MB = {"-O0": 64.0, "-O1": 7.5, "-O2": 7.1}
"""Processor seconds per million simulated cycles per MB of evaluated Verilog (`Prepared.evaluated_bytes`)
of a flattened model, by the per-cycle code's optimisation, on today's demo (100 queries, 16,453
cycles, best of 3; 7.64 MB): -O2 54.1 s per million cycles (flattened, -O2 throughout); -O1 85.9 s
hierarchical, over `HIER_RUN_FACTOR`; -O0 8.5x -O1 (today's demo, 16 queries, hierarchical:
4.86 against 0.57 s)."""
HIER_RUN_FACTOR = 1.5
"""A model with hierarchical blocks takes this much longer a cycle: the earlier demo at -O2, 100
queries, 1.15 against 0.76 s."""
BASELINE = BuildOptions(cxx_opt="-O2", slow_opt="-O2", hierarchical=False)
"""The build every whole design had before `choose_options` (flattened, g++ -O2 throughout)."""
RUN_LIMIT = 2.0
"""No build is chosen whose cycles take more than this many times those of `BASELINE`."""
CANDIDATES = tuple(BuildOptions(cxx_opt=opt, hierarchical=h) for h in (True, False) for opt in ("-O0", "-O1", "-O2"))
"""The builds `choose_options` weighs."""


def jobs() -> int:
    """Compiler processes a build runs at once (make -j), and Verilator processes verilating the
    hierarchical blocks at once (verilator -j: the blocks are verilated in parallel, the top after
    them; without it one after another)."""
    return min(4, os.cpu_count() or 1)


def build_seconds(prepared: Prepared, options: BuildOptions) -> tuple[float, float]:
    """The expected seconds of verilation and of compilation (on `jobs()` idle cores) of a build."""
    mb = prepared.compiled_bytes / 1e6
    return VERILATE_S_PER_MB[options.hierarchical] * mb, COMPILE_S_PER_MB.get(
        options.cxx_opt, COMPILE_S_PER_MB["-O2"]
    ) * mb / jobs()


def run_seconds(prepared: Prepared, options: BuildOptions, cycles: int) -> float:
    """The expected processor seconds of simulating `cycles` cycles on a build."""
    per = RUN_S_PER_MCYCLE_MB.get(options.cxx_opt, RUN_S_PER_MCYCLE_MB["-O2"]) * prepared.evaluated_bytes / 1e6
    return per * cycles / 1e6 * (HIER_RUN_FACTOR if prepared.blocks else 1.0)


def choose_options(sources: Mapping[str, str], cycles: int, hierarchical: bool = True) -> tuple[BuildOptions, Prepared]:
    """The build of `CANDIDATES` (flattened ones only unless `hierarchical`) with the least expected
    build and run time for simulating `cycles` cycles, among those whose cycles take at most
    `RUN_LIMIT` times those of `BASELINE`; with it, its prepared sources."""
    prepared = {h: prepare_sources(sources, h) for h in {False, hierarchical}}
    limit = RUN_LIMIT * run_seconds(prepared[False], BASELINE, 1_000_000)
    best = None
    for options in CANDIDATES:
        if options.hierarchical and not prepared[hierarchical].blocks:
            continue  # no module worth a block: the flattened build is the same
        p = prepared[options.hierarchical]
        if run_seconds(p, options, 1_000_000) > limit * (1 + 1e-9):
            continue
        total = sum(build_seconds(p, options)) + run_seconds(p, options, cycles)
        if best is None or total < best[0]:
            best = (total, options, p)
    return best[1], best[2]


class BuildWatch:
    """The progress of a Verilator build in `folder` (see the module docstring): `verilate_s` and
    `compile_s` are the expected seconds of its two phases."""

    POLL_SECONDS = 0.5

    def __init__(self, folder: Path, what: str, verilate_s: float, compile_s: float):
        self.folder, self.what = Path(folder), what
        self.verilate_s, self.compile_s = max(verilate_s, 1.0), max(compile_s, 1.0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> BuildWatch:
        minutes = (self.verilate_s + self.compile_s) / 60
        expected = f"about {minutes:.0f} min" if minutes >= 1.5 else f"about {60 * minutes:.0f} s"
        status(f"building the simulator of {self.what}: {expected} expected on an idle machine")
        self._thread = threading.Thread(target=self._show, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _compiled(self) -> tuple[int, int]:
        """(bytes of C++ whose object file exists, bytes of C++ in all) of the model's sources."""
        done = total = 0
        for cpp in self.folder.rglob("*.cpp"):
            size = cpp.stat().st_size
            total += size
            if cpp.with_suffix(".o").exists():
                done += size
        return done, total

    def _show(self) -> None:
        whole = self.verilate_s + self.compile_s
        with eta_bar() as bar:
            task = bar.add_task(f"simulator build: {self.what}", total=whole)
            start = time.monotonic()
            while not self._stop.wait(self.POLL_SECONDS):
                done, total = self._compiled()
                if total and (self.folder / "Vtop.mk").exists():
                    bar.update(task, completed=self.verilate_s + self.compile_s * done / total)
                else:
                    bar.update(task, completed=min(time.monotonic() - start, 0.95 * self.verilate_s))
            bar.update(task, completed=whole)
