"""Where derived data lives: next to a dataset when that folder is writable, else under the cache
root (`FANNS_CACHE`, default ``~/.cache/fanns``). Built-in datasets always live under the root."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """The user-level cache folder (env FANNS_CACHE overrides ``~/.cache/fanns``)."""
    env = os.environ.get("FANNS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "fanns"


def writable(folder: Path) -> bool:
    """True if `folder` exists and files can be created in it (or it can be created)."""
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            return False
        probe = probe.parent
    return probe.is_dir() and os.access(probe, os.W_OK | os.X_OK)


def cache_dir_for(data_folder: Path, fallback_key: str) -> Path:
    """``DATA_FOLDER/.fanns-cache`` if writable, else ``cache_root()/datasets/<fallback_key>``."""
    beside = data_folder / ".fanns-cache"
    if writable(beside):
        return beside
    return cache_root() / "datasets" / fallback_key
