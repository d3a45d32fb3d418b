"""The files every generated project holds, whatever the accelerator and face: `design.yaml`,
the memory images with `images/manifest.json`, and the project record `fanns_project.json`
(what a host driver and `fanns sim` read), written atomically as one folder.

Why one module: the IVF-PQ and graph generators, HLS and RTL alike, must write these the same
way (sorted JSON, the one YAML style, no timestamps), so that a project is byte-identical from
run to run and a tool reads every project alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from fanns import __version__
from fanns.checks import check_number
from fanns.design.base import DesignFile
from fanns.errors import FannsError
from fanns.images.base import ImageSet
from fanns.outputs import MANIFEST, FileContent, read_manifest, verify_files, write_folder

PROJECT_FILE = "fanns_project.json"
"""The project record; its presence marks a folder as a generated project."""


def json_bytes(value: Any) -> bytes:
    """A JSON file of the project: sorted keys, one-space indent, a final newline."""
    return (json.dumps(value, indent=1, sort_keys=True) + "\n").encode()


def generator(command: str) -> str:
    """The record's "generator": the fanns version and the command that wrote the project."""
    return f"fanns {__version__} {command}"


def design_and_images(design: DesignFile, images: ImageSet) -> dict[str, FileContent]:
    """`design.yaml` and `images/` (every image and its manifest) of a project."""
    files = {f"images/{name}": content for name, content in images.files().items()}
    files["design.yaml"] = design.to_yaml().encode()
    return files


def add_record(files: dict[str, FileContent], record: dict) -> None:
    """Put the project record into `files` as `fanns_project.json`."""
    files[PROJECT_FILE] = json_bytes(record)


def write_files(files: dict[str, FileContent], out: Path, force: bool = False) -> None:
    """Write `files` as the folder `out`, atomically (`fanns.outputs`: a temporary sibling,
    renamed at the end); an existing `out` is replaced only with `force` and only if it is a project."""
    write_folder(files, Path(out), force, PROJECT_FILE, "generated project")


def read_data(project: Path, name: str, dtype: str, shape: tuple[int, ...], why: str) -> np.ndarray:
    """`PROJECT/data/NAME` as an array of `shape`, after checking its size against the shape the
    project record implies (`why` says where the shape comes from). Why one reader: a missing or
    truncated data file must be an input error before any simulator starts, never a reshape
    traceback or a hardware mismatch."""
    path = Path(project) / "data" / name
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    actual = path.stat().st_size if path.is_file() else None
    if actual != size:
        found = "missing" if actual is None else f"{actual} bytes"
        raise FannsError(
            f"{path}: {found}, expected {size} bytes ({why})",
            hint="the project is incomplete or was changed; regenerate it",
        )
    return np.fromfile(path, dtype=dtype).reshape(shape)


HLS_SOURCES = ("src/kernel.cpp", "src/csim_lib.cpp")
"""The C++ files the C simulation of an HLS project (IVF-PQ or graph) compiles."""


def check_sources(project: Path, folder: str, required: tuple[str, ...]) -> None:
    """`design.yaml`, the project record and every file of `folder` (the kernel's Verilog `rtl/` or
    its C++ `src/`: what a simulator compiles or a driver opens) as fanns wrote them: each file the
    project's manifest lists there present with its sha256, and the `required` ones present even
    in a project without a manifest. Why: a truncated kernel or an edited design must be refused
    as an input error before a simulator starts, not reported as a compiler error, a traceback or
    the hardware disagreeing with the reference; one check serves IVF-PQ and graph projects alike."""
    project = Path(project)
    manifest = read_manifest(project) or {"files": {}}
    listed = [r for r in manifest["files"] if r.startswith(f"{folder}/")]
    rels = sorted({"design.yaml", PROJECT_FILE, *required, *listed})
    missing = [r for r in rels if not (project / r).is_file()]
    if missing:
        raise FannsError(
            f"{project}: {', '.join(missing)} missing (a generated project holds them)",
            hint="the project is incomplete; regenerate it",
        )
    if (project / MANIFEST).exists() and read_manifest(project) is None:
        raise FannsError(f"{project}/{MANIFEST} is unreadable", hint="regenerate the project")
    verify_files(project, rels, "project")


def query_count(project: Path, record: Any) -> int:
    """The project record's number of test queries (`test.nq`), checked."""
    try:
        nq = record["test"]["nq"]
    except (KeyError, TypeError):
        raise FannsError(
            f"{project}/{PROJECT_FILE}: no test.nq in the project record", hint="regenerate the project"
        ) from None
    return int(check_number(nq, f"{project}/{PROJECT_FILE}: test.nq", lo=1, hi=1 << 32, integer=True))


def read_record(project: Path) -> dict:
    """The project record of `project` (a JSON object), or a clear error."""
    path = Path(project) / PROJECT_FILE
    if not path.is_file():
        raise FannsError(
            f"{project} is not a generated project (no {PROJECT_FILE})",
            hint="pass the folder written by `fanns generate-hls` / `generate-rtl` (or their graph versions)",
        )
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise FannsError(f"{path}: cannot read the project record ({exc})", hint="regenerate the project") from None
    if not isinstance(record, dict):
        raise FannsError(f"{path}: the project record must be a JSON object", hint="regenerate the project")
    return record


def query_range(total: int, queries: int | None, first: int, least: int = 1) -> int:
    """How many of a project's `total` test queries to simulate from `first` (`queries`, default all
    the rest): at least `least` and all inside the project, else an error naming the options."""
    if not 0 <= first < total:
        raise FannsError(f"--first {first}: the project has {total} test queries", hint=f"use --first 0..{total - 1}")
    nq = total - first if queries is None else queries
    if not least <= nq <= total - first:
        raise FannsError(
            f"--queries {nq} from --first {first}: the project has {total} test queries",
            hint=f"simulate {least}..{total - first} of them"
            + (f" (at least {least}: the steady-state interval needs two)" if least > 1 else ""),
        )
    return nq
