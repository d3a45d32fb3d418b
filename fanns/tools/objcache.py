"""A minimal compiler cache for Verilator's own runtime objects (the OBJCACHE of RtlSim builds).

Verilator's makefiles prefix every compile with `$(OBJCACHE)`. Compiling Verilator's runtime
(verilated.cpp, its VPI, DPI and thread support) is most of a small design's build time and
its result depends only on the compile command, the source and the compiler, so this script
keeps those objects (and their -MMD dependency files) in the folder named by
FANNS_OBJCACHE_DIR, keyed by exactly that. Every other compile runs unchanged. Standalone on
purpose: make runs it as `python objcache.py <compiler command>` without importing fanns.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RUNTIME_SOURCES = ("verilated.cpp", "verilated_dpi.cpp", "verilated_vpi.cpp", "verilated_threads.cpp")


def _key(cmd: list[str], source: Path) -> str:
    version = subprocess.run([cmd[0], "--version"], capture_output=True, text=True).stdout
    h = hashlib.sha256("\0".join(cmd).encode())
    h.update(source.read_bytes())
    h.update(version.encode())
    return h.hexdigest()[:24]


def main(cmd: list[str]) -> int:
    cache = os.environ.get("FANNS_OBJCACHE_DIR")
    source = Path(cmd[-1]) if cmd else None
    if not cache or "-c" not in cmd or "-o" not in cmd or source is None or source.name not in RUNTIME_SOURCES:
        return subprocess.run(cmd).returncode
    out = Path(cmd[cmd.index("-o") + 1])
    dep = out.with_suffix(".d")
    entry = Path(cache) / _key(cmd, source)
    if (entry / "obj.o").exists() and (entry / "obj.d").exists():
        shutil.copyfile(entry / "obj.o", out)
        shutil.copyfile(entry / "obj.d", dep)
        return 0
    code = subprocess.run(cmd).returncode
    if code == 0 and out.exists() and dep.exists():
        entry.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(dir=entry.parent, prefix=".stage-"))
        shutil.copyfile(out, stage / "obj.o")
        shutil.copyfile(dep, stage / "obj.d")
        try:
            stage.rename(entry)
        except OSError:  # a concurrent build stored it first
            shutil.rmtree(stage, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
