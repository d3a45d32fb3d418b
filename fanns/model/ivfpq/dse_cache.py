"""The DSE's outcome, kept by content across runs: a second `fanns generate` with the same inputs
reuses it.

Why: the DSE was half of a second `make demo`'s wait once the exploration and the simulator build
were reused (10.7 of 38.8 s), and with the same inputs it finds the same designs: it is a pure
function of its workloads (what the exploration measured of each index), the board, the goal,
the clock, the utilisation cap, the number of designs kept and the LLM time (`fanns.model.ivfpq.timing.run`),
of fanns's code and tables (`fanns.tools.codedigest`) and of the numerical libraries. The key is
a hash of the pickled inputs and of those versions (`content_key`), so any other input, and any
edit of fanns, misses; the outcome is kept pickled under `cache_root()/dse-outcomes`, written
atomically, the `KEEP` most recently used kept.
"""

from __future__ import annotations

import importlib.metadata
import os
import pickle
import sys
import tempfile
from pathlib import Path

from fanns.boards import Board, Clock
from fanns.choices import DEFAULT_LLM_MS
from fanns.datasets.cache import cache_root
from fanns.model.ivfpq import timing
from fanns.model.ivfpq.dse import Outcome
from fanns.tools import codedigest
from fanns.tools.modelcache import content_key

KEEP = 64
"""Outcomes kept (a few hundred kB each)."""
SUFFIX = ".pickle"


def outcomes_root() -> Path:
    return cache_root() / "dse-outcomes"


def outcome_key(
    workloads: list,
    board: Board,
    goal: str,
    clock: Clock | None,
    util: float,
    top: int,
    unreachable: list | None,
    llm_ms: float = DEFAULT_LLM_MS,
) -> str:
    """The content hash of one DSE's inputs (see the module docstring)."""
    inputs = pickle.dumps((workloads, board, goal, clock, util, top, unreachable, llm_ms), protocol=5)
    versions = [f"python {sys.version}"] + [f"{p} {importlib.metadata.version(p)}" for p in ("numpy", "scipy")]
    return content_key([inputs, codedigest.source_digest(), *versions])


def run(
    workloads: list,
    board: Board,
    goal: str,
    clock: Clock | None,
    util: float = 0.6,
    top: int = 5,
    unreachable: list | None = None,
    root: Path | None = None,
    llm_ms: float = DEFAULT_LLM_MS,
) -> tuple[Outcome, bool]:
    """`fanns.model.ivfpq.timing.run`'s outcome, and whether it was kept from an earlier run."""
    root = outcomes_root() if root is None else root
    path = root / f"{outcome_key(workloads, board, goal, clock, util, top, unreachable, llm_ms)}{SUFFIX}"
    try:
        kept = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        kept = None  # never kept, evicted meanwhile, or unreadable: run the DSE
    if isinstance(kept, Outcome):
        try:
            os.utime(path)
        except OSError:  # a folder this user may read but not write
            pass
        return kept, True
    outcome = timing.run(workloads, board, goal, clock, util, top, unreachable, llm_ms=llm_ms)
    _keep(root, path, outcome)
    return outcome, False


def _keep(root: Path, path: Path, outcome: Outcome) -> None:
    """Write `outcome` to `path` atomically, then evict; a folder that cannot be written keeps nothing."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, stage = tempfile.mkstemp(dir=root, prefix=".stage-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(outcome, f, protocol=5)
        os.replace(stage, path)
    except OSError:  # a full disk: nothing half-written is left
        Path(stage).unlink(missing_ok=True)
        return
    _evict(root)


def _evict(root: Path) -> None:
    """Remove all but the `KEEP` most recently used outcomes."""
    entries = []
    for path in root.glob(f"*{SUFFIX}"):
        try:
            entries.append((path.stat().st_mtime, path))
        except FileNotFoundError:
            continue
    for _, path in sorted(entries, reverse=True)[KEEP:]:
        path.unlink(missing_ok=True)
