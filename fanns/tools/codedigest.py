"""A digest of fanns's own code: part of the key of every result kept by content across runs.

Why: a result cached by its inputs (a converted Verilog module, `fanns.tools.verilogcache`; a DSE
outcome, `fanns.model.ivfpq.dse_cache`) is also a function of the code that computed it, and the
package version does not change with every edit. Hashing every file of the package (code and the
PE calibration and timing tables) makes any change miss such caches, so no edit can be served an
old result."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache
def source_digest() -> str:
    """A hash of every file of the fanns package (its code and tables), by relative path."""
    h = hashlib.sha256()
    files = (p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in sorted(files):
        h.update(str(path.relative_to(PACKAGE)).encode() + b"\0")
        data = path.read_bytes()
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()
