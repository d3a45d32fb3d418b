"""The explorations fanns keeps of a dataset, side by side in the dataset's cache folder.

Layout: `CACHE/explorations/<dataset>-<key>/`, one exploration folder each (staged, with its
manifest: `fanns.outputs`), where CACHE is the dataset's cache folder (`Dataset.cache_dir`, shared
by the files of one folder), `<dataset>` the start of the data's content hash and `<key>` a hash
of how the exploration was made and what it answers (`explore.json`'s version, data, query split,
settings and goals; `name_of`). An entry is never changed once written: a run that needs more
writes a new one. Beside each entry, `.<name>.use` is its use file:

- its modification time is the entry's last use, and the policy is to keep the `KEEP` most
  recently used entries of each dataset (content hash), deleting older ones after a new entry
  is written (`evict`);
- every run that reads, writes or takes trained indexes from an entry holds a shared lock on
  its use file until the process ends (`hold`), and an entry is deleted only under an exclusive
  lock on it: never while a run uses it;
- choosing an entry (and taking its lock), and evicting, happen under the lock of the
  `explorations/` folder (`fanns.outputs.folder_lock`); exploring into a new entry holds only
  that entry's lock, so runs of other settings explore at the same time.

An exploration cached by an earlier fanns in `CACHE/explore/` (one per dataset folder) is
moved in as an entry of its own (`adopt_legacy`), or deleted when it cannot be checked.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fanns.datasets.dataset import Dataset
from fanns.explore.ivfpq_record import read_json
from fanns.outputs import MANIFEST, folder_lock, read_manifest, umask_mode
from fanns.progress import status

ROOT = "explorations"
"""The folder of the entries, in the dataset's cache folder."""
LEGACY = "explore"
"""Where fanns before side-by-side explorations kept the one exploration of a dataset folder."""
KEEP = 4
"""Entries kept per dataset: the most recently used. An entry's trained indexes are hard links
shared with the entries that reuse them, so an entry of another grid or goal costs little more
than its recall and probe files."""
_HELD: dict[Path, int] = {}
"""Use files this process holds a shared lock on (path -> descriptor), until it ends."""


def root_of(ds: Dataset) -> Path:
    return Path(ds.cache_dir) / ROOT


def name_of(record: dict) -> str:
    """The entry name of an exploration from its record (an explore.json, or the request
    `fanns.explore.ivfpq_reuse.request` builds in the same form): the data's content hash, then
    a hash of how it was made and the goals it answers."""
    made = {k: record[k] for k in ("version", "recall_split", "settings")}
    made["queries_used"] = record["dataset"]["queries_used"]
    made["goals"] = sorted(g["text"] for g in record["goals"])
    if "lists_on_disk" in record:
        made["lists_on_disk"] = record["lists_on_disk"]
    else:
        made["lists_on_disk"] = all("lists" in r for r in record["indexes"])
    key = hashlib.sha256(json.dumps(made, sort_keys=True).encode()).hexdigest()[:16]
    return f"{record['dataset']['content_hash'][:16]}-{key}"


def _use_file(entry: Path) -> Path:
    return entry.parent / f".{entry.name}.use"


def entries(root: Path, content_hash: str) -> list[Path]:
    """The entries of the dataset with `content_hash`, most recently used first."""
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and p.name.startswith(f"{content_hash[:16]}-")]

    def used(entry: Path) -> int:
        try:
            return _use_file(entry).stat().st_mtime_ns
        except OSError:
            return 0

    return sorted(found, key=lambda p: (-used(p), p.name))


def read_entry(entry: Path) -> dict | None:
    """An entry's explore.json, when fanns wrote it whole (manifest present) and it is readable."""
    if read_manifest(entry) is None:
        return None
    data = read_json(entry / "explore.json")
    return data if isinstance(data, dict) else None


def hold(entry: Path) -> None:
    """Mark `entry` used now and keep it from being evicted until this process ends (call under
    the root's lock)."""
    path = _use_file(entry)
    if path not in _HELD:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, umask_mode())
        fcntl.flock(fd, fcntl.LOCK_SH)  # only an evictor, under the root's lock, holds it exclusively
        _HELD[path] = fd
    now = time.time_ns()  # given, not the file system's clock: that ticks in milliseconds
    os.utime(path, ns=(now, now))


def release_all() -> None:
    """Let every entry this process holds be evicted again (a long-lived process between runs)."""
    for fd in _HELD.values():
        os.close(fd)
    _HELD.clear()


@contextmanager
def borrowed(ds: Dataset, but: Path | None = None) -> Iterator[list[Path]]:
    """The dataset's entries (`but` left out), kept from eviction while the block runs: an
    exploration takes trained indexes from them (`IvfPqExplorer(index_sources=...)`)."""
    root = root_of(ds)
    fds = []
    try:
        with folder_lock(root):
            found = [entry for entry in entries(root, ds.content_hash()) if entry != but]
            for entry in found:
                fds.append(os.open(_use_file(entry), os.O_RDWR | os.O_CREAT, umask_mode()))
                fcntl.flock(fds[-1], fcntl.LOCK_SH)
        yield found
    finally:
        for fd in fds:
            os.close(fd)


def remove(entry: Path) -> bool:
    """Delete `entry` unless a run holds it (call under the root's lock); whether it was deleted."""
    path = _use_file(entry)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, umask_mode())
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        shutil.rmtree(entry, ignore_errors=True)
        with contextlib.suppress(OSError):
            path.unlink()
        return not entry.exists()
    finally:
        os.close(fd)


def evict(root: Path, content_hash: str, keep: int | None = None) -> list[Path]:
    """Delete the entries of the dataset beyond the `keep` most recently used, except those a run
    holds, and the use files left by explorations that failed (call under the root's lock); the
    entries deleted."""
    for path in root.glob(f".{content_hash[:16]}-*.use"):
        if not (root / path.name[1 : -len(".use")]).exists():
            remove(root / path.name[1 : -len(".use")])
    keep = KEEP if keep is None else keep
    gone = [entry for entry in entries(root, content_hash)[keep:] if remove(entry)]
    if gone:
        status(f"removed {len(gone)} older exploration(s) of this dataset from {root} (keeping {keep})")
    return gone


def adopt_legacy(ds: Dataset, root: Path) -> None:
    """Move the one exploration an earlier fanns cached in the dataset folder's `explore/` in as
    an entry (call under the root's lock); delete it when it cannot be checked (no manifest, no
    readable explore.json)."""
    legacy = Path(ds.cache_dir) / LEGACY
    if not legacy.is_dir():
        return
    with folder_lock(legacy):
        data = read_entry(legacy)
        try:
            name = name_of(data) if data is not None else None
        except (KeyError, TypeError, AttributeError):
            name = None
        if name is None:
            status(f"{legacy}: an exploration cached by an older fanns that cannot be checked (no {MANIFEST}); removed")
            shutil.rmtree(legacy)
        elif (root / name).exists():
            shutil.rmtree(legacy)
        else:
            root.mkdir(parents=True, exist_ok=True)
            legacy.rename(root / name)
            status(f"moved the cached exploration {legacy} to {root / name}")
