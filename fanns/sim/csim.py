"""The C-simulation library of a generated HLS project (either accelerator): the project's own
kernel source and `src/csim_lib.cpp`, compiled by g++ as a shared library that the simulators
(`fanns.sim.ivfpq.csim`, `fanns.sim.graph.csim`) and the host driver's c-sim backend call through ctypes.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from fanns.codegen.project_files import read_record
from fanns.tools.csim import compile_program


def build_library(project: Path, build_dir: Path | None = None, threads: bool = False) -> Path:
    """Compile the project's kernel and C-simulation library (cached by content); its path.
    `threads`: every dataflow process a thread, every FIFO of its declared depth (fanns_hls.h)."""
    project = Path(project)
    read_record(project)
    build_dir = Path(build_dir or project / "build" / "csim_lib")
    files = sorted((project / "src").glob("*"))
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.read_bytes())
    # the sources are staged by content, so projects with the same kernel share one library
    src = build_dir / f"src-{digest.hexdigest()[:16]}"
    build_dir.mkdir(parents=True, exist_ok=True)
    if not src.is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=".src-", dir=build_dir))
        for f in files:
            shutil.copyfile(f, tmp / f.name)
        try:
            tmp.rename(src)
        except OSError:  # staged meanwhile by another process
            shutil.rmtree(tmp)
    return compile_program(
        [src / "csim_lib.cpp", src / "kernel.cpp"],
        build_dir,
        defines={"FANNS_CSIM_THREADS": 1} if threads else None,
        include_dirs=[src],
        shared=True,
    )
