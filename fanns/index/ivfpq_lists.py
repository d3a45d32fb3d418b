"""Inverted lists on disk: an IVF-PQ index filled shard by shard into faiss's on-disk lists.

Why: an index's inverted lists hold every base vector's code and id (N x (m + 8) bytes: 2.4 GB
for 100M vectors at m = 16, 24 GB for 1B), and faiss fills them in RAM. `ListsOnDisk` adds the
base in shards of `shard_rows` vectors, each to a copy of the trained, empty index that is
written to a shard file, then merges the shards' lists into one `OnDiskInvertedLists` file
(`faiss.contrib.ondisk.merge_ondisk`, which memory-maps the shards): RAM holds one shard's lists
at a time, whatever N. faiss then searches the memory-mapped lists like lists in RAM, and the
index holds the same ids and codes as one filled at once (`ivfpq.add_base` gives every vector
its row number as id).

The index file names its lists file; `read_index` reads it from the index's own folder
(`IO_FLAG_ONDISK_SAME_DIR`), so a folder of both can move (an exploration is staged, then
renamed). faiss prints where its lists go on the C standard output; those lines are sent to the
standard error (`faiss_prints_to_stderr`) so that fanns's own output stays whole when piped.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np
from faiss.contrib.ondisk import merge_ondisk

from fanns.choices import DEFAULT_SHARD_ROWS
from fanns.errors import FannsError
from fanns.index.ivfpq import add_base

LISTS_SUFFIX = ".ivfdata"
"""The suffix of an on-disk lists file (faiss's name for it)."""


@contextmanager
def faiss_prints_to_stderr() -> Iterator[None]:
    """Inside this block, what faiss's C++ prints on the standard output goes to the standard error."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        libc.fflush(None)
        os.dup2(saved, 1)
        os.close(saved)


def read_index(path: str | Path):
    """A faiss index file; its on-disk lists, if it has them, are read from the file's own folder."""
    with faiss_prints_to_stderr():
        return faiss.read_index(str(path), faiss.IO_FLAG_ONDISK_SAME_DIR)


def lists_on_disk(index) -> bool:
    """Whether a faiss IVF index keeps its inverted lists in an on-disk file."""
    invlists = faiss.extract_index_ivf(index).invlists
    return isinstance(faiss.downcast_InvertedLists(invlists), faiss.OnDiskInvertedLists)


@dataclass(frozen=True)
class ListsOnDisk:
    """Fill an index's inverted lists into the file `path`, `shard_rows` base vectors at a time in RAM
    (an `ivfpq.ListFiller`)."""

    path: Path
    shard_rows: int = DEFAULT_SHARD_ROWS

    def __post_init__(self) -> None:
        if self.shard_rows < 1:
            raise FannsError(f"shards of {self.shard_rows} base vectors", hint="use at least 1 (e.g. 1048576)")
        if Path(self.path).suffix != LISTS_SUFFIX:
            raise FannsError(f"{self.path}: an on-disk lists file is named *{LISTS_SUFFIX}")

    def fill(
        self,
        index,
        base: np.ndarray,
        metric: str,
        assign: np.ndarray | None,
        on_phase: Callable[[str, int], None] | None,
    ) -> None:
        """Add the whole base to the trained, empty `index`, shard by shard, and leave its lists in `path`."""
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{path.stem}-shards-", dir=path.parent))
        try:
            shards = []
            for i, start in enumerate(range(0, base.shape[0], self.shard_rows)):
                shard = faiss.clone_index(index)
                rows = range(start, min(start + self.shard_rows, base.shape[0]))
                add_base(shard, base, metric, rows, assign, on_phase)
                shards.append(str(work / f"shard-{i}.faissindex"))
                faiss.write_index(shard, shards[-1])
                del shard
            path.unlink(missing_ok=True)
            with faiss_prints_to_stderr():
                merge_ondisk(index, shards, str(path))
        finally:
            shutil.rmtree(work, ignore_errors=True)
