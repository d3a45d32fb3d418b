"""Output folders that appear complete or not at all.

Why: a report or a project that is half written (a crash, Ctrl-C, a full disk) looks like a
finished one to the next tool or person. Everything is built in a hidden temporary folder beside
the destination and renamed into place at the end; on any error or interrupt the temporary
folder is removed. An existing destination is replaced only with `force`, and only when it
carries the marker file of the same kind of output (a folder of other files is never deleted).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fanns.errors import FannsError


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_destination(out: Path, force: bool, marker: str, what: str) -> None:
    """Fail early (before any work) when `out` may not be written."""
    out = Path(out)
    if not out.exists():
        return
    if not force:
        raise FannsError(
            f"{out} already exists", hint=f"choose another output folder, or pass --force to replace the {what}"
        )
    if not out.is_dir() or not (out / marker).is_file():
        raise FannsError(
            f"{out} exists and is not a {what} written by fanns (no {marker}); refusing to replace it",
            hint="choose another output folder",
        )


@contextmanager
def staged_folder(out: Path, force: bool, marker: str, what: str) -> Iterator[Path]:
    """Yield an empty temporary folder beside `out`; when the block ends normally it becomes `out`
    (which must then hold `marker`), replacing an earlier one only with `force`."""
    out = Path(out)
    check_destination(out, force, marker, what)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it private; the result is an ordinary folder
    old = None
    try:
        yield tmp
        if not (tmp / marker).is_file():
            raise RuntimeError(f"{what} is missing its {marker}")
        check_destination(out, force, marker, what)  # nothing appeared meanwhile
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            out.rename(old / out.name)
            try:
                tmp.rename(out)
            except BaseException:
                (old / out.name).rename(out)  # put the earlier folder back
                raise
        else:
            tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
        if old is not None:
            shutil.rmtree(old)


def write_folder(files: dict[str, bytes], out: Path, force: bool, marker: str, what: str) -> None:
    """Write `files` (relative path -> bytes) as the folder `out`, atomically."""
    with staged_folder(out, force, marker, what) as tmp:
        for rel, content in sorted(files.items()):
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
