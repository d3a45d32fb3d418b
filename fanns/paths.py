"""Locate the data folders that ship with fanns (templates, HLS headers, boards, testbenches).

In a source checkout they are the top-level folders of the repository; in an installed wheel
they are inside the package as `fanns/_share/<name>` (see `setup.py`).
"""

from __future__ import annotations

from pathlib import Path

from fanns.errors import FannsError

_PACKAGE = Path(__file__).resolve().parent
SHARED_FOLDERS = ("templates", "hls", "boards", "sim", "rtl")


def shared_dir(name: str) -> Path:
    """Return the folder `name` (one of SHARED_FOLDERS), wherever this install keeps it."""
    if name not in SHARED_FOLDERS:
        raise ValueError(f"unknown shared folder {name!r}; expected one of {SHARED_FOLDERS}")
    for candidate in (_PACKAGE / "_share" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"fanns installation is missing its {name}/ folder")


def inside(folder: Path, reference: object, what: str) -> Path:
    """The file `reference` (a relative path written in one of fanns's own files) resolved inside
    `folder`; absolute paths, `..` escapes, symlinks out of the folder, control characters and
    non-strings are a `FannsError` naming `what` (e.g. "explore.json: indexes[0].path")."""
    if not isinstance(reference, str) or not reference:
        raise FannsError(f"{what} must be a relative file name, got {reference!r}")
    rel = Path(reference)
    root = Path(folder).resolve()
    bad = any(ord(c) < 32 or ord(c) == 127 for c in reference)
    if bad or rel.is_absolute() or ".." in rel.parts or not (root / rel).resolve().is_relative_to(root):
        raise FannsError(
            f"{what} is {reference!r}: it must name a file inside {folder}",
            hint="file references are relative to the folder of the file that holds them, without '..'",
        )
    return root / rel
