"""Converted Verilog modules and kernels, kept by content across runs and processes.

Why: converting a design was most of `fanns generate`'s code-generation step (the demo design:
about 22 CPU seconds; its 20 distinct parts, each elaborated by Amaranth and written by yosys
(`fanns.hdl.modules.ModuleLibrary`), about 14 of them, the kernel around them the rest), and a
second run converted the same design again. A part's Verilog is a pure function of its key (the
PE's parameters, a FIFO's width and depth: `fanns.hdl.modules` requires the key to determine the
module exactly), the code that elaborates it and the tools that convert it; so is a kernel's, of
its RTL view (`fanns.hdl.verilog.to_kernel_verilog`'s `key`). `VerilogModuleCache` keeps each
text under a hash of exactly those (`entry_key`): the module name and the key's `repr`, a digest
of every file of the fanns package (any change to fanns misses the cache, so no edit can serve an
old module: `fanns.tools.codedigest`), and the Amaranth and yosys versions. A key whose `repr` does not show its whole
content (an object's default `repr`, a long numpy array's elided one) is never kept.

The entries live in `FANNS_VERILOG_MODULES` if set, else in the cache root's `verilog-modules`
folder (one file each, written atomically, so a
concurrent or interrupted run never leaves half a module). The folder is bounded: when it
outgrows `FANNS_VERILOG_MODULES_MB` megabytes (default `DEFAULT_MB`) the least recently used
entries go.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import tempfile
from pathlib import Path

from amaranth._toolchain.yosys import find_yosys  # the yosys Amaranth's Verilog backend runs

from fanns.datasets.cache import cache_root
from fanns.errors import FannsError
from fanns.tools import codedigest
from fanns.tools.modelcache import content_key

ROOT_ENV = "FANNS_VERILOG_MODULES"
SIZE_ENV = "FANNS_VERILOG_MODULES_MB"
DEFAULT_MB = 256.0
"""Megabytes of modules kept (a PE's module is 10-500 kB; the demo design's 20 parts are 2 MB)."""
SUFFIX = ".v"
YOSYS_REQUIREMENT = (0, 40)
"""The version `amaranth.back.verilog` asks of yosys (so the key names the yosys it runs)."""


UNSHOWN = (" at 0x", "...")
"""What a `repr` that hides content shows: an object's address, numpy's elision of a long array."""


@functools.cache
def toolchain() -> str:
    """The Amaranth version and the yosys that converts its output (name and version)."""
    yosys = find_yosys(lambda version: version >= YOSYS_REQUIREMENT)
    return f"amaranth {importlib.metadata.version('amaranth')}; {yosys.__name__} {yosys.version()}"


def modules_root() -> Path:
    """Where converted Verilog is kept (`FANNS_VERILOG_MODULES`, else `cache_root()/verilog-modules`)."""
    env = os.environ.get(ROOT_ENV)
    return Path(env).expanduser() if env else cache_root() / "verilog-modules"


def keepable(key: str) -> bool:
    """Whether a key's `repr` shows its whole content (else the key could stand for another part)."""
    return not any(mark in key for mark in UNSHOWN)


def entry_key(name: str, key: str) -> str:
    """The content hash of module `name` converted from a part of key `key` (its `repr`)."""
    return content_key([name, key, codedigest.source_digest(), toolchain()])


def _env_megabytes() -> float:
    value = os.environ.get(SIZE_ENV, str(DEFAULT_MB))
    try:
        return float(value)
    except ValueError:
        raise FannsError(
            f"{SIZE_ENV}={value!r} is not a number of megabytes", hint=f"e.g. {SIZE_ENV}={DEFAULT_MB:.0f}"
        ) from None


class VerilogModuleCache:
    """The module cache folder (see the module docstring): `get` and `put` one module's Verilog."""

    def __init__(self, root: Path | None = None, limit_mb: float | None = None):
        self.root = Path(root) if root is not None else modules_root()
        self.limit = (_env_megabytes() if limit_mb is None else limit_mb) * 1e6
        self._total: int | None = None

    def path(self, name: str, key: str) -> Path:
        return self.root / f"{name}-{entry_key(name, key)}{SUFFIX}"

    def get(self, name: str, key: str) -> str | None:
        """The Verilog kept for module `name` of key `key`, or None; a hit marks the entry used."""
        if not keepable(key):
            return None
        path = self.path(name, key)
        try:
            text = path.read_text()
        except OSError:  # never kept, evicted meanwhile, or no folder there
            return None
        try:
            os.utime(path)
        except OSError:  # a folder this user may read but not write: the entry serves all the same
            pass
        return text

    def put(self, name: str, key: str, text: str) -> None:
        """Keep module `name`'s Verilog (atomically), then evict down to the size bound. A folder
        that cannot be written keeps nothing: the conversion stands without the cache."""
        if not keepable(key):
            return
        path = self.path(name, key)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, stage = tempfile.mkstemp(dir=self.root, prefix=".stage-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(stage, path)
        except OSError:  # a full disk: nothing half-written is left
            Path(stage).unlink(missing_ok=True)
            return
        if self._total is None:
            self._total = sum(size for _, size, _ in self._entries())
        else:
            self._total += len(text.encode())
        if self._total > self.limit:
            self._total = self.evict(keep=path)

    def _entries(self) -> list[tuple[float, int, Path]]:
        """(last use, bytes, path) of every entry, oldest first (entries another process removes
        meanwhile are left out)."""
        entries = []
        for path in self.root.glob(f"*{SUFFIX}"):
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            entries.append((st.st_mtime, st.st_size, path))
        return sorted(entries)

    def evict(self, keep: Path | None = None) -> int:
        """Remove the least recently used entries (never `keep`) until the rest fit the bound;
        the bytes left."""
        entries = self._entries()
        total = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if total <= self.limit:
                break
            if path != keep:
                path.unlink(missing_ok=True)
                total -= size
        return total
