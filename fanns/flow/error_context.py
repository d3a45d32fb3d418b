"""The design an unexpected error names, when the design exists only in memory.

Why: a bug that stops `fanns generate` in code generation (an RTL elaboration that fails, issue
46) is reported by `fanns.cli` as one line naming the step and the design file, so the user can
attach it to a report and `fanns generate-rtl` can reproduce it. The design `generate` chose, or
the one `generate-graph-*` pinned from options, is in no file yet (the project folder is staged
and removed on the error): it is saved under the cache, named by its content, only when an error
is reported.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from fanns.datasets.cache import cache_root
from fanns.design.base import DesignFile
from fanns.errors import WHERE

FOLDER = "failed-designs"
"""Where, under the cache root, the designs of reported errors are saved."""


def note_design(design: DesignFile) -> None:
    """Name `design` in the report of an unexpected error, saving it then (`fanns.errors.WHERE`)."""
    WHERE.note_design(lambda: saved(design))


def saved(design: DesignFile) -> Path:
    """`design` as a file under the cache, named by its content (one file per distinct design)."""
    text = design.to_yaml()
    path = cache_root() / FOLDER / f"design-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    design.save(path)
    return path
