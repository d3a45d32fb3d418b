"""Output folders that appear complete or not at all, and never destroy what fanns did not write.

Why: a report or a project that is half written (a crash, Ctrl-C, SIGTERM, a full disk) looks like
a finished one to the next tool or person, and a user's files inside an output folder (notes, an
hours-long Vitis build) must survive a re-run. So:

- every folder is built in a hidden temporary folder beside the destination and renamed into
  place at the end; on any error or interrupt the temporary folder is removed;
- every folder carries `fanns_manifest.json`: the kind of output and the sha256 of every file (and
  the target of every link) fanns wrote. An existing destination is replaced only with `force`
  and only when its manifest is of the same kind. What the manifest does not list (the user's
  notes, a Vitis build) is kept: carried into the new folder at the same place. A listed file
  that changed since (an edit), or a user's file where the new output writes one, makes fanns
  refuse and name it: nothing the user added or edited is ever deleted. An empty existing folder
  is simply used; a destination that is a symbolic link to a folder stands for that folder (it is
  replaced, the link kept);
- writers of one destination serialise on a lock file beside it (`fcntl.flock`), so two
  concurrent runs never interleave; readers can check files against the manifest
  (`verify_files`), so a folder that changed since fanns wrote it is refused, not trusted;
- single files are published by atomic rename (`atomic_path`), with the mode the umask gives.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from fanns.errors import FannsError

MANIFEST = "fanns_manifest.json"
"""The file listing what fanns wrote in an output folder (and what kind of output it is)."""
LISTED = 5
"""Foreign files named in a refusal (the rest are counted)."""
_SIGNALS = {getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)}
_local = threading.local()  # the locks this thread holds: path -> [fd, depth]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def umask_mode(mode: int = 0o666) -> int:
    """`mode` as the umask leaves it (what `open()` would give a new file)."""
    return mode & ~_umask()


# -- single files ---------------------------------------------------------------------------------
@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success it is renamed to `path` (atomic), so
    readers see the old file or the whole new one. The file gets the mode the umask gives."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = None
    try:
        with _signals_deferred():  # an interrupt cannot leave a file that `tmp_path` does not name yet
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            tmp_path = Path(tmp)
            try:
                os.fchmod(fd, umask_mode())  # mkstemp makes it private; writers keep the mode of the file they open
            finally:
                os.close(fd)
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path is not None and tmp_path.exists():
            tmp_path.unlink()


@dataclass(frozen=True, eq=False)
class Streamed:
    """A file's content produced piece by piece, each time it is read: a file too large to hold
    in memory (a PQ-code channel image of millions of vectors) is never joined. `pieces` yields
    the bytes in order; `nbytes` is their total, known before any piece is made. Contents compare
    by size and sha256 (hashed once, on first use), so a streamed file equals the same bytes."""

    nbytes: int
    pieces: Callable[[], Iterable[bytes]]

    def __len__(self) -> int:
        return self.nbytes

    def __bytes__(self) -> bytes:
        return self.join()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Streamed):
            return self.nbytes == other.nbytes and self.sha256 == other.sha256
        if isinstance(other, bytes):
            return self.nbytes == len(other) and self.sha256 == hashlib.sha256(other).hexdigest()
        return NotImplemented

    @cached_property
    def sha256(self) -> str:
        digest = hashlib.sha256()
        for piece in self.pieces():
            digest.update(piece)
        return digest.hexdigest()

    def join(self) -> bytes:
        """The whole content in memory (for the small files a simulator or driver loads)."""
        return b"".join(self.pieces())


FileContent = bytes | Streamed
"""What a generated file holds: its bytes, or a `Streamed` producer of them."""


def write_content(path: Path, content: FileContent) -> None:
    """Write `content` to `path` (a file being staged): bytes at once, `Streamed` a piece at a time."""
    if isinstance(content, bytes):
        path.write_bytes(content)
        return
    with open(path, "wb") as f:
        for piece in content.pieces():
            f.write(piece)


# -- manifests ------------------------------------------------------------------------------------
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _entries(root: Path) -> Iterator[tuple[str, str, Path]]:
    """(relative path, kind, path) of every file, link and other non-folder below `root`;
    links are not followed."""
    stack = [root]
    while stack:
        folder = stack.pop()
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            path = Path(entry.path)
            rel = path.relative_to(root).as_posix()
            if entry.is_symlink():
                yield rel, "link", path
            elif entry.is_dir():
                stack.append(path)
            elif entry.is_file():
                yield rel, "file", path
            else:
                yield rel, "other", path


def write_manifest(root: Path, what: str) -> None:
    """Record every file and link below `root` as written by fanns (an output of kind `what`)."""
    files, links = {}, {}
    for rel, kind, path in _entries(root):
        if rel == MANIFEST:
            continue
        if kind == "link":
            links[rel] = os.readlink(path)
        elif kind == "file":
            files[rel] = _sha256(path)
        else:
            raise FannsError(f"{path}: not a file, link or folder; cannot be part of a {what}")
    record = {"what": what, "files": files, "links": links}
    (root / MANIFEST).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def read_manifest(root: Path) -> dict | None:
    """The manifest of `root`, or None if it has none (or an unreadable one)."""
    try:
        data = json.loads((Path(root) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and isinstance(data.get("files"), dict) and isinstance(data.get("links"), dict)
    return data if ok else None


def foreign_files(root: Path, manifest: dict) -> tuple[list[str], list[str]]:
    """(added, changed): what below `root` the manifest does not list (the user's: kept when the
    folder is replaced), and what it lists but that differs now (edited: never overwritten)."""
    added, changed = [], []
    for rel, kind, path in _entries(Path(root)):
        if rel == MANIFEST:
            continue
        listed = rel in manifest["links"] or rel in manifest["files"]
        if kind == "link":
            same = manifest["links"].get(rel) == os.readlink(path)
        else:
            same = kind == "file" and manifest["files"].get(rel) == _sha256(path)
        if not listed and kind != "other":
            added.append(rel)
        elif not same:
            changed.append(rel)
    return added, changed


def _a(what: str) -> str:
    return ("an " if what[:1].lower() in "aeiou" else "a ") + what


def _names(rels: list[str]) -> str:
    more = f" and {len(rels) - LISTED} more" if len(rels) > LISTED else ""
    return ", ".join(rels[:LISTED]) + more


def verify_files(root: Path, rels: Iterable[str], what: str) -> None:
    """Refuse to read files of `root` that differ from what fanns wrote there (a folder with no
    manifest, assembled by hand or by an older fanns, is not checked)."""
    root = Path(root)
    manifest = read_manifest(root)
    if manifest is None:
        return
    bad = [r for r in rels if not (root / r).is_file() or manifest["files"].get(r) != _sha256(root / r)]
    if bad:
        raise FannsError(
            f"{root} is not the {what} fanns wrote: {_names(bad)} missing or changed since (see {MANIFEST})",
            hint="write it again (e.g. re-run the command that made it with --force)",
        )


# -- destinations ---------------------------------------------------------------------------------
def _is_empty_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and not any(path.iterdir())


def followed(out: Path) -> Path:
    """The folder an output named `out` is written to: a symbolic link to a folder is followed
    (the output it points to is replaced, the link stays); anything else is `out` itself."""
    out = Path(out)
    return Path(os.path.realpath(out)) if out.is_symlink() and out.is_dir() else out


def check_destination(out: Path, force: bool, marker: str | None, what: str) -> None:
    """Fail early (before any work) when `out` may not be written: it exists (and is not an empty
    folder) without `force`, or it is not an unchanged `what` that fanns wrote (through a link to
    a folder: the folder it points to, `followed`)."""
    out = Path(out)
    target = followed(out)
    probe = Path(os.path.abspath(out)).parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise FannsError(
            f"cannot write {out}: {probe} is not a writable folder",
            hint="choose an output folder in a writable place",
        )
    if not (out.exists() or out.is_symlink()):
        return
    here, there = os.path.realpath(os.getcwd()), os.path.realpath(out)
    if os.path.commonpath([here, there]) == there:
        raise FannsError(f"{out} is the folder fanns runs in (or holds it)", hint="choose another output folder")
    if _is_empty_folder(target):
        return
    if not force:
        raise FannsError(
            f"{out} already exists", hint=f"choose another output folder, or pass --force to replace the {what}"
        )
    manifest = read_manifest(target) if target.is_dir() and not target.is_symlink() else None
    if out.is_symlink() and not out.exists():
        why = "it is a symbolic link to nothing"
    elif manifest is None:
        why = f"no readable {MANIFEST}"
    elif manifest.get("what") != what:
        why = f"its {MANIFEST} says it is {_a(str(manifest.get('what')))}"
    elif marker and not (target / marker).is_file():
        why = f"it has no {marker}"
    else:
        why = None
    if why is not None:
        raise FannsError(
            f"{out} exists and is not {_a(what)} written by fanns ({why}); refusing to replace it",
            hint="choose another output folder",
        )
    _, changed = foreign_files(target, manifest)
    if changed:
        raise FannsError(
            f"{out}: {_names(changed)} changed since fanns wrote it (or is not a file or link); "
            f"refusing to replace {out}",
            hint=f"move your version out of {out} (files fanns never wrote are kept), or choose another folder",
        )


@contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """Hold the lock of destination `out` (a `.NAME.lock` file beside it; re-entrant within a
    thread), so concurrent fanns runs writing `out` take turns. The lock file is removed after."""
    key = Path(os.path.abspath(out))
    _held = _local.__dict__.setdefault("held", {})
    if key in _held:
        _held[key][1] += 1
        try:
            yield
        finally:
            _held[key][1] -= 1
        return
    path = key.parent / f".{key.name}.lock"
    while True:
        with _os_errors(key):
            key.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, umask_mode())
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(f"waiting for another fanns run writing {out} ...", file=sys.stderr, flush=True)
                fcntl.flock(fd, fcntl.LOCK_EX)
            if os.path.exists(path) and os.stat(path).st_ino == os.fstat(fd).st_ino:
                break  # still the published lock file (not one a previous holder removed)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    _held[key] = [fd, 1]
    try:
        yield
    finally:
        del _held[key]
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Delay SIGINT/SIGTERM/SIGHUP while a few renames run, so an interrupt cannot fall between them."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _make_parent(folder: Path) -> Path | None:
    """Create `folder` and its missing ancestors; return the topmost one created (None: it existed)."""
    top = None
    probe = Path(os.path.abspath(folder))
    while not probe.exists():
        top, probe = probe, probe.parent
    folder.mkdir(parents=True, exist_ok=True)
    return top


def _remove_if_empty(top: Path | None, folder: Path) -> None:
    """Undo `_make_parent` as far as the folders it made are still empty."""
    if top is None:
        return
    probe = Path(os.path.abspath(folder))
    while True:
        with contextlib.suppress(OSError):
            probe.rmdir()
        if probe == top:
            return
        probe = probe.parent


def link_or_copy(path: Path, dest: Path) -> None:
    """Hard-link `path` to `dest` (a copy where the file system cannot link; a symbolic link is
    recreated as such), making `dest`'s folder."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        os.symlink(os.readlink(path), dest)
        return
    try:
        os.link(path, dest)
    except OSError:
        shutil.copy2(path, dest)


def _carry(old: Path, new: Path, keep: Callable[[str], bool]) -> None:
    """Hard-link (or copy) the files of an earlier output that `keep` selects into the new one."""
    for rel, kind, path in _entries(old):
        if kind == "file" and rel != MANIFEST and keep(rel):
            link_or_copy(path, new / rel)


def _keep_users_files(old: Path, new: Path) -> None:
    """Put what the user added to the earlier output `old` (files, links, empty folders) into the
    replacement `new`, at the same places; refuse if `new` has something of its own there."""
    manifest = read_manifest(old)
    added, _ = foreign_files(old, manifest)
    clash = [r for r in added if os.path.lexists(new / r) or any(_not_folder(new / p) for p in _parents(r))]
    if clash:
        raise FannsError(
            f"{old}: {_names(clash)} (not written by fanns) would be overwritten by the new {manifest['what']}",
            hint=f"move them out of {old}, or choose another output folder",
        )
    for rel in added:
        link_or_copy(old / rel, new / rel)
    for folder, dirs, files in os.walk(old):
        if not dirs and not files:
            (new / Path(folder).relative_to(old)).mkdir(parents=True, exist_ok=True)


def _not_folder(path: Path) -> bool:
    return os.path.lexists(path) and (path.is_symlink() or not path.is_dir())


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


@contextmanager
def staged_folder(
    out: Path, force: bool, marker: str | None, what: str, carry: Callable[[str], bool] | None = None
) -> Iterator[Path]:
    """Yield an empty temporary folder beside `out`; when the block ends normally it gets its
    manifest and becomes `out` (which must then hold `marker`), replacing an earlier one only as
    `check_destination` allows. `carry` selects files of the earlier output (by relative path)
    that start out in the temporary folder: caches the new run may reuse."""
    out = followed(Path(os.path.abspath(out)))  # `.` and `dir/..` have a parent to stage beside
    tmp = old = top = None
    try:
        with _signals_deferred(), _os_errors(out):
            top = _make_parent(out.parent)
        with folder_lock(out):
            check_destination(out, force, marker, what)
            with _signals_deferred(), _os_errors(out):  # no interrupt between making `tmp` and naming it
                tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
            with _os_errors(out):
                os.chmod(tmp, umask_mode(0o777))  # mkdtemp makes it private; the result is an ordinary folder
                if carry is not None and out.is_dir() and read_manifest(out) is not None:
                    _carry(out, tmp, carry)
            try:
                yield tmp
            except OSError as exc:
                if exc.errno in DISK_FULL:
                    raise FannsError(f"cannot write {out}: {exc.strerror}", hint="free some space") from None
                raise
            if marker and not (tmp / marker).is_file():
                raise RuntimeError(f"{what} is missing its {marker}")
            with _os_errors(out):
                write_manifest(tmp, what)
            check_destination(out, force, marker, what)  # nothing appeared meanwhile
            with _signals_deferred(), _os_errors(out):
                if _is_empty_folder(out):
                    out.rmdir()
                if out.exists():
                    _keep_users_files(out, tmp)
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
        with _signals_deferred():  # an interrupt must not cut the clean-up short
            if tmp is not None and tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
            if old is not None and out.exists():  # never delete the earlier output unless `out` is whole
                shutil.rmtree(old, ignore_errors=True)
            if top is not None and not out.exists():
                _remove_if_empty(top, out.parent)


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


@contextmanager
def _os_errors(out: Path) -> Iterator[None]:
    """What the file system refuses while fanns stages or publishes `out` is an input error
    (a read-only or full disk, a parent that is a file), not a crash."""
    try:
        yield
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise FannsError(
            f"cannot write {out}: {exc.strerror or exc}{where}",
            hint="choose an output folder in a writable place with free space",
        ) from None


def write_folder(files: dict[str, FileContent], out: Path, force: bool, marker: str | None, what: str) -> None:
    """Write `files` (relative path -> bytes or `Streamed`) as the folder `out`, atomically."""
    with staged_folder(out, force, marker, what) as tmp:
        for rel, content in sorted(files.items()):
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            write_content(path, content)
