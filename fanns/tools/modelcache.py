"""Compiled simulator models, kept by content across runs and processes.

A Verilator build (the compiled harness's shared library, a cocotb bench's executable) is a pure
function of what it compiles, its options and the tools that compile it. `ModelEntry` names the
finished model by a hash of exactly those (`content_key`) under `models_root()`, so a second
`generate --sim`, a second test session or another process asking for the same model opens the
one already built instead of compiling it again (minutes for a whole accelerator). A build
happens in a staging folder beside the entries and only the files a model needs are kept (the
library or executable and the build log, not the hundreds of megabytes of objects); a lock makes
a second process wait for the first one's build instead of repeating it. The folder is bounded:
after a build the least recently used entries go until the rest fit in `FANNS_SIM_MODELS_GB`
gigabytes (default `DEFAULT_GB`).

The models live in `FANNS_SIM_MODELS` if set, else in the cache root's `sim-models` folder; the
test suite points it at the user's cache (tests/conftest.py), so its per-PE and whole-design
builds survive from one session to the next.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fanns.choices import SIM_MODELS_ENV
from fanns.datasets.cache import cache_root

ROOT_ENV = SIM_MODELS_ENV
SIZE_ENV = "FANNS_SIM_MODELS_GB"
DEFAULT_GB = 8.0
"""Gigabytes of models kept (a whole-accelerator library is 5-60 MB, a PE's cocotb executable 1-5 MB)."""
READY = "model.json"
"""Written last into an entry: its presence says the model is complete; its time says when it was last used."""
IN_USE_SECONDS = 3600
"""An entry used this recently is never evicted (another process may be about to open it)."""
STALE_STAGE_SECONDS = 86400
"""A staging folder this old belongs to a build that died; eviction removes it."""


def models_root() -> Path:
    """Where compiled models are kept (`FANNS_SIM_MODELS`, else `cache_root()/sim-models`)."""
    env = os.environ.get(ROOT_ENV)
    return Path(env).expanduser() if env else cache_root() / "sim-models"


def runtime_objects() -> Path:
    """Where `fanns.tools.objcache` keeps Verilator's runtime objects (beside the models, so they
    outlive a test session as the models do)."""
    return models_root() / ".runtime-objects"


@functools.cache
def tool_version(executable: str) -> str:
    """`executable --version`'s first line (part of every key: another compiler, another model)."""
    done = subprocess.run([executable, "--version"], capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr) else executable


def content_key(parts: Iterable[str | bytes]) -> str:
    """A hash of `parts` in order (each length-prefixed, so no two lists of parts collide)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:20]


class ModelEntry:
    """The cache entry `models_root()/<name>-<key>` of one model (see the module docstring)."""

    def __init__(self, name: str, key: str, root: Path | None = None):
        self.root = Path(root) if root is not None else models_root()
        self.folder = self.root / f"{name}-{key}"

    @property
    def ready(self) -> bool:
        return (self.folder / READY).is_file()

    def touch(self) -> None:
        """Mark the entry used now (eviction removes the least recently used first)."""
        try:
            os.utime(self.folder / READY)
        except OSError:  # evicted meanwhile: the caller's build() rebuilds it
            pass

    @contextmanager
    def build(self, keep: Iterable[str], record: dict) -> Iterator[Path | None]:
        """Yield a fresh staging folder to build the model in, or None if the entry is complete
        (perhaps built meanwhile by another process, whose build this waited for). When the
        block ends normally the files `keep` of the staging folder become the entry, with
        `record` (what was built, how) in its `model.json`; the staging folder is removed either way."""
        self.root.mkdir(parents=True, exist_ok=True)
        locks = self.root / ".locks"
        locks.mkdir(exist_ok=True)
        with open(locks / f"{self.folder.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if self.ready:
                    self.touch()
                    yield None
                    return
                stage = Path(tempfile.mkdtemp(dir=self.root, prefix=f".stage-{self.folder.name}-"))
                try:
                    yield stage
                    self._publish(stage, keep, record)
                finally:
                    shutil.rmtree(stage, ignore_errors=True)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        evict(self.root, keep=self.folder)

    def _publish(self, stage: Path, keep: Iterable[str], record: dict) -> None:
        entry = Path(tempfile.mkdtemp(dir=self.root, prefix=f".entry-{self.folder.name}-"))
        for name in keep:
            os.replace(stage / name, entry / name)
        (entry / READY).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        shutil.rmtree(self.folder, ignore_errors=True)  # an incomplete entry of a build that died
        os.replace(entry, self.folder)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def evict(root: Path, keep: Path | None = None, limit_gb: float | None = None) -> list[Path]:
    """Remove the least recently used entries of `root` until the rest fit in `limit_gb`
    (default `FANNS_SIM_MODELS_GB` or `DEFAULT_GB`), never `keep` nor an entry used in the last
    `IN_USE_SECONDS`, and staging folders of builds that died; the entries removed."""
    limit = float(os.environ.get(SIZE_ENV, DEFAULT_GB)) if limit_gb is None else limit_gb
    now = time.time()
    for stage in root.glob(".stage-*"):
        if now - stage.stat().st_mtime > STALE_STAGE_SECONDS:
            shutil.rmtree(stage, ignore_errors=True)
    entries = []
    for folder in root.iterdir():
        ready = folder / READY
        if folder.name.startswith(".") or not ready.is_file():
            continue
        entries.append((ready.stat().st_mtime, folder, _size(folder)))
    total = sum(size for _, _, size in entries)
    removed = []
    for used, folder, size in sorted(entries, key=lambda e: (e[0], e[1].name)):
        if total <= limit * 1e9:
            break
        if folder == keep or now - used < IN_USE_SECONDS:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        total -= size
        removed.append(folder)
    return removed
