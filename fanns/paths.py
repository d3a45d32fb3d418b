"""Locate the data folders that ship with fanns (templates, HLS headers, boards, testbenches).

In a source checkout they are the top-level folders of the repository; in an installed wheel
they are inside the package as `fanns/_share/<name>` (see `setup.py`).
"""

from __future__ import annotations

from pathlib import Path

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
