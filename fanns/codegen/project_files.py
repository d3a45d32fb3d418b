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

from fanns import __version__
from fanns.design.base import DesignFile
from fanns.images.base import ImageSet
from fanns.outputs import write_folder

PROJECT_FILE = "fanns_project.json"
"""The project record; its presence marks a folder as a generated project."""


def json_bytes(value: Any) -> bytes:
    """A JSON file of the project: sorted keys, one-space indent, a final newline."""
    return (json.dumps(value, indent=1, sort_keys=True) + "\n").encode()


def generator(command: str) -> str:
    """The record's "generator": the fanns version and the command that wrote the project."""
    return f"fanns {__version__} {command}"


def design_and_images(design: DesignFile, images: ImageSet) -> dict[str, bytes]:
    """`design.yaml` and `images/` (every image and its manifest) of a project."""
    files = {f"images/{name}": content for name, content in images.files().items()}
    files["design.yaml"] = design.to_yaml().encode()
    return files


def add_record(files: dict[str, bytes], record: dict) -> None:
    """Put the project record into `files` as `fanns_project.json`."""
    files[PROJECT_FILE] = json_bytes(record)


def write_files(files: dict[str, bytes], out: Path, force: bool = False) -> None:
    """Write `files` as the folder `out`, atomically (`fanns.outputs`: a temporary sibling,
    renamed at the end); an existing `out` is replaced only with `force` and only if it is a project."""
    write_folder(files, Path(out), force, PROJECT_FILE, "generated project")
