"""The trained indexes of an exploration folder, and where an exploration finds one trained before.

Why: training is the slow part of an exploration, and several explorations of one dataset (other
grids, goals or query counts: `fanns.explore.ivfpq_reuse` keeps them side by side) train many
of the same indexes. Each index sits in the folder's `indexes/` as `<stem>.faissindex` with a
`<stem>.meta.json` saying exactly what was trained (dataset content hash, factory, sample size,
seed, shared coarse quantizer, rotation sample, lists on disk; the explorer's `_meta`) and, with
its lists on disk, `<stem>.ivfdata`. An index is reused from the folder itself or from another
exploration's folder (`sources`) only when its meta is equal; one found elsewhere is hard-linked
(or copied) into the folder, so every exploration folder stays whole on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.datasets.formats import atomic_path
from fanns.explore.ivfpq_record import read_json, write_json
from fanns.index.ivfpq_lists import LISTS_SUFFIX
from fanns.outputs import link_or_copy

INDEX_FOLDER = "indexes"


def is_cached_index(rel: str) -> bool:
    """Files of an earlier exploration a new one into the same folder starts from (trained indexes)."""
    return rel.startswith(f"{INDEX_FOLDER}/") and rel.endswith((".faissindex", ".meta.json", LISTS_SUFFIX))


def stem_of(factory: str) -> str:
    """The file stem of an index: its factory string with the commas replaced."""
    return factory.replace(",", "_")


@dataclass(frozen=True)
class IndexFiles:
    """The trained indexes of the exploration folder `folder`, and the exploration folders `sources`
    an index may be taken from."""

    folder: Path
    sources: tuple[Path, ...] = ()

    @staticmethod
    def paths(folder: Path, factory: str) -> tuple[Path, Path, Path]:
        """(index, meta, on-disk lists) files of `factory` in the exploration folder `folder`."""
        where, stem = Path(folder) / INDEX_FOLDER, stem_of(factory)
        return where / f"{stem}.faissindex", where / f"{stem}.meta.json", where / f"{stem}{LISTS_SUFFIX}"

    def find(self, factory: str, meta: dict) -> Path | None:
        """The index file of a trained copy of `factory` whose meta equals `meta`: in the folder
        itself, else in the first source that has one; None if none has."""
        for folder in (self.folder, *self.sources):
            index, meta_path, lists = self.paths(folder, factory)
            has_lists = meta.get("lists") != "disk" or lists.is_file()
            if index.is_file() and meta_path.is_file() and has_lists and read_json(meta_path) == meta:
                return index
        return None

    def local(self, factory: str, meta: dict) -> Path | None:
        """The folder's own trained copy of `factory` (linked in from a source when that is where
        `find` found it); None when there is none, or the source's vanished meanwhile."""
        found = self.find(factory, meta)
        own = self.paths(self.folder, factory)
        if found is None or found == own[0]:
            return found
        theirs = self.paths(found.parent.parent, factory)
        try:
            for src, dest in zip(theirs, own):
                if src.is_file():
                    dest.unlink(missing_ok=True)
                    link_or_copy(src, dest)
        except OSError:
            for dest in own:
                dest.unlink(missing_ok=True)
            return None
        return own[0] if read_json(own[1]) == meta else None

    def store(self, factory: str, meta: dict, serialized: np.ndarray) -> None:
        """Put a trained index (as `faiss.serialize_index` gives it) and its meta into the folder."""
        index, meta_path, _ = self.paths(self.folder, factory)
        index.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(index) as tmp:
            tmp.write_bytes(serialized.tobytes())
        write_json(meta_path, meta)
