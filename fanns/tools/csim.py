"""C simulation of HLS C++ with the system g++ and the project's portability header.

`compile_program` builds a C++ source (a testbench or a generated host-side driver) with
`-Wall -Werror -ffp-contract=off` against `hls/` (our `fanns_hls.h` instead of vendor headers)
and caches the binary by a hash of the sources and flags. `run_program` feeds it arrays through
files: inputs and outputs are raw little-endian numpy arrays, which keeps the C++ side trivial.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from fanns.errors import FannsError
from fanns.paths import shared_dir

CXXFLAGS = ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off"]


def gxx() -> str:
    found = shutil.which(os.environ.get("CXX", "g++"))
    if not found:
        raise FannsError("g++ was not found", hint="install g++ (C simulation of the HLS code needs it)")
    return found


def compile_program(
    sources: Sequence[Path],
    out_dir: Path,
    defines: Mapping[str, object] | None = None,
    include_dirs: Sequence[Path] = (),
    shared: bool = False,
) -> Path:
    """Compile `sources` into an executable (or a shared library) in `out_dir`; return its path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    flags = list(CXXFLAGS) + [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    incs = [shared_dir("hls"), *include_dirs]
    flags += [f"-I{p}" for p in incs]
    if shared:
        flags += ["-shared", "-fPIC"]
    digest = hashlib.sha256()
    for part in flags:
        digest.update(part.encode())
    for src in sources:
        digest.update(Path(src).read_bytes())
    for inc in incs:
        for header in sorted(Path(inc).glob("*.h")):
            digest.update(header.read_bytes())
    name = Path(sources[0]).stem + "_" + digest.hexdigest()[:12] + (".so" if shared else "")
    binary = out_dir / name
    if binary.exists():
        return binary
    tmp = binary.with_name(binary.name + f".tmp{os.getpid()}")
    proc = subprocess.run([gxx(), *flags, *map(str, sources), "-o", str(tmp)], capture_output=True, text=True)
    if proc.returncode:
        raise AssertionError(f"g++ failed on {', '.join(map(str, sources))}:\n{proc.stderr[-6000:]}")
    tmp.replace(binary)
    return binary


def run_program(
    binary: Path,
    inputs: Sequence[np.ndarray],
    outputs: Sequence[tuple[str, tuple[int, ...]]],
    work_dir: Path,
    args: Sequence[str] = (),
) -> list[np.ndarray]:
    """Run `binary in_0 .. in_k out_0 .. out_j [args]`; each file is a raw little-endian array.

    `outputs` gives (dtype, shape) per output file. Returns the output arrays.
    """
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    in_paths = []
    for i, arr in enumerate(inputs):
        path = work_dir / f"in{i}.bin"
        np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tofile(path)
        in_paths.append(str(path))
    out_paths = [str(work_dir / f"out{i}.bin") for i in range(len(outputs))]
    proc = subprocess.run([str(binary), *in_paths, *out_paths, *args], capture_output=True, text=True)
    if proc.returncode:
        raise AssertionError(f"C simulation {binary.name} failed ({proc.returncode}):\n{proc.stderr[-6000:]}")
    return [
        np.fromfile(p, dtype=np.dtype(dt).newbyteorder("<")).reshape(shape)
        for p, (dt, shape) in zip(out_paths, outputs)
    ]
