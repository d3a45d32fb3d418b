"""C simulation of HLS C++ with the system g++ and the project's portability header.

`compile_program` builds a C++ source (a testbench or a generated host-side driver) with
`-Wall -Werror -ffp-contract=off` against `hls/` (our `fanns_hls.h` instead of vendor headers)
and caches the binary by a hash of the sources and flags in its output folder, and by content in
the model cache (`program_key`), so another session or process compiling the same program copies
the one built before. `run_program` feeds it arrays through files: inputs and outputs are raw
little-endian numpy arrays, which keeps the C++ side trivial.
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
from fanns.tools.modelcache import ModelEntry, content_key, tool_version

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
    options = list(CXXFLAGS) + [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    if shared:
        options += ["-shared", "-fPIC"]
    incs = [shared_dir("hls"), *include_dirs]
    flags = options + [f"-I{p}" for p in incs]
    digest = hashlib.sha256()
    for part in flags:
        digest.update(part.encode())
    texts: list[bytes] = []  # what `digest` hashes but the folders: part of the model-cache key
    for src in sources:
        digest.update(Path(src).read_bytes())
        texts.append(Path(src).read_bytes())
    for inc in incs:
        for header in sorted(Path(inc).glob("*.h")):
            digest.update(header.read_bytes())
            texts += [header.name.encode(), header.read_bytes()]
    name = Path(sources[0]).stem + "_" + digest.hexdigest()[:12] + (".so" if shared else "")
    binary = out_dir / name
    if binary.exists():
        return binary
    tmp = binary.with_name(binary.name + f".tmp{os.getpid()}")
    key = program_key(flags, options, sources, texts)
    entry = ModelEntry(f"gxx-{Path(sources[0]).stem}", key) if key is not None else None
    if entry is None or not _writable(entry.root):  # the preprocessor failed (the compile says why), or no cache
        _compile(flags, sources, tmp)
    else:
        record = {"sources": [str(s) for s in sources], "flags": flags}
        with entry.build(keep=(PROGRAM,), record=record) as stage:
            if stage is not None:
                _compile(flags, sources, stage / PROGRAM)
        shutil.copyfile(entry.folder / PROGRAM, tmp)
        os.chmod(tmp, 0o755)
    tmp.replace(binary)
    return binary


PROGRAM = "program"
"""The compiled file's name in its model-cache entry."""


def program_key(
    flags: Sequence[str], options: Sequence[str], sources: Sequence[Path], texts: list[bytes]
) -> str | None:
    """The content key of a program compiled with `flags`: the compiler's version, the `options`
    among them (all but the include folders: another session compiles a generated project in
    another folder), `texts` (the sources and the include folders' header names and texts as
    written) and the preprocessed text of every source without line markers (`-E -P`: every
    header it includes, wherever it was found, and every macro expanded); None if the
    preprocessor fails. Preprocessing takes a tenth of a second where the compile takes seconds
    (a generated kernel's C-simulation library: 1.5-4 CPU-s)."""
    pre = []
    for src in sources:
        done = subprocess.run([gxx(), *flags, "-E", "-P", str(src)], capture_output=True, check=False)
        if done.returncode:
            return None
        pre.append(done.stdout)
    return content_key([tool_version(gxx()), *options, *texts, *pre])


def _writable(root: Path) -> bool:
    """Whether the model cache's folder can be made and written (else a program is compiled
    without it, as the converted-Verilog cache does without its folder)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(root, os.W_OK | os.X_OK)


def _compile(flags: Sequence[str], sources: Sequence[Path], out: Path) -> None:
    proc = subprocess.run([gxx(), *flags, *map(str, sources), "-o", str(out)], capture_output=True, text=True)
    if proc.returncode:
        raise AssertionError(f"g++ failed on {', '.join(map(str, sources))}:\n{proc.stderr[-6000:]}")


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
