"""`fanns.outputs` as one mechanism for every folder fanns writes: files the user added survive a
`--force` replacement, edited ones block it, foreign folders are refused, failures leave nothing,
writers take turns on a lock, files follow the umask; and the dataset caches (exact neighbours,
built-ins, graphs) never trust an entry that does not read back whole."""

import os
import signal
import tempfile
import threading
import time

import numpy as np
import pytest

from fanns.cli import Terminated
from fanns.datasets import load_dataset, save_npy
from fanns.datasets.builtins import load_builtin
from fanns.errors import FannsError
from fanns.explore.graph import load_or_build
from fanns.outputs import (
    MANIFEST,
    atomic_path,
    folder_lock,
    read_manifest,
    staged_folder,
    verify_files,
    write_folder,
)
from tests.hostile.helpers import make_dataset, snapshot

WHAT = "generated project"
MARKER = "fanns_project.json"
OLD = {MARKER: b"{}\n", "hls/src/kernel.cpp": b"int k;\n", "hls/only_old.txt": b"old\n", "README.md": b"r1\n"}
NEW = {MARKER: b"{}\n", "hls/src/kernel.cpp": b"int k2;\n", "README.md": b"r2\n"}


def test_force_keeps_what_the_user_added(tmp_path):
    out = tmp_path / "p"
    write_folder(OLD, out, False, MARKER, WHAT)
    (out / "NOTES.txt").write_text("my notes")
    (out / "hls" / "build" / "hw").mkdir(parents=True)
    (out / "hls" / "build" / "hw" / "k.xclbin").write_bytes(b"\x00hours of vitis\xff")
    (out / "scratch").mkdir()
    os.symlink("hls/src", out / "src-link")
    write_folder(NEW, out, True, MARKER, WHAT)
    files = snapshot(out)
    assert files["NOTES.txt"] == b"my notes" and files["hls/build/hw/k.xclbin"] == b"\x00hours of vitis\xff"
    assert (out / "scratch").is_dir() and os.readlink(out / "src-link") == "hls/src"
    assert files["hls/src/kernel.cpp"] == b"int k2;\n" and "hls/only_old.txt" not in files  # fanns's own: replaced
    manifest = read_manifest(out)
    assert manifest["what"] == WHAT and sorted(manifest["files"]) == sorted(NEW)  # the user's stay the user's
    write_folder(OLD, out, True, MARKER, WHAT)  # and survive the next replacement too
    assert snapshot(out)["NOTES.txt"] == b"my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]  # no staging, backup or lock left


@pytest.mark.parametrize(
    "tamper, named",
    [
        (lambda out: (out / "README.md").write_text("my edit"), "README.md"),
        (lambda out: (out / "hls" / "src" / "kernel.cpp").unlink() or os.mkfifo(out / "hls/src/kernel.cpp"), "kernel"),
        (
            lambda out: (out / "hls" / "src" / "kernel.cpp").unlink() or os.symlink("/etc", out / "hls/src/kernel.cpp"),
            "kernel",
        ),
    ],
    ids=["edited", "fifo", "link"],
)
def test_force_never_overwrites_a_changed_file(tmp_path, tamper, named):
    out = tmp_path / "p"
    write_folder(OLD, out, False, MARKER, WHAT)
    tamper(out)
    before = snapshot(out)
    with pytest.raises(FannsError, match=f"{named}.*changed since fanns wrote it"):
        write_folder(NEW, out, True, MARKER, WHAT)
    assert snapshot(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["p"]


def test_force_refuses_when_the_new_output_would_overwrite_a_users_file(tmp_path):
    out = tmp_path / "p"
    write_folder(OLD, out, False, MARKER, WHAT)
    (out / "extra.txt").write_text("mine")
    before = snapshot(out)
    with pytest.raises(FannsError, match="extra.txt .not written by fanns. would be overwritten"):
        write_folder({**NEW, "extra.txt": b"fanns's"}, out, True, MARKER, WHAT)
    assert snapshot(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["p"]


@pytest.mark.parametrize(
    "folder, message",
    [
        ({"notes.txt": b"mine"}, "not a generated project written by fanns"),
        ({MARKER: b"{}\n"}, "not a generated project written by fanns"),  # marker but no manifest (older fanns)
        ({MARKER: b"{}\n", MANIFEST: b'{"what": "sweep report", "files": {}, "links": {}}'}, "not a generated"),
        ({MARKER: b"{}\n", MANIFEST: b"not json"}, "not a generated project"),
    ],
    ids=["foreign", "marker-only", "other-kind", "bad-manifest"],
)
def test_refuses_folders_fanns_did_not_write(tmp_path, folder, message):
    out = tmp_path / "p"
    out.mkdir()
    for rel, content in folder.items():
        (out / rel).write_bytes(content)
    for force, expected in ((False, "already exists"), (True, message)):
        with pytest.raises(FannsError, match=expected):
            write_folder(NEW, out, force, MARKER, WHAT)
        assert snapshot(out) == folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]


def test_failure_leaves_nothing_and_an_empty_folder_is_used(tmp_path):
    out = tmp_path / "a" / "b" / "p"
    with pytest.raises(FannsError, match="boom"):
        with staged_folder(out, False, MARKER, WHAT) as tmp:
            (tmp / MARKER).write_text("{}")
            raise FannsError("boom")
    assert list(tmp_path.iterdir()) == []  # no output, no staging, no lock, no parent folders it made
    (tmp_path / "e").mkdir()
    write_folder(NEW, tmp_path / "e", False, MARKER, WHAT)
    assert sorted(snapshot(tmp_path / "e")) == sorted([*NEW, MANIFEST])


def _signalled_at_birth(make):
    """`make` (tempfile.mkstemp or mkdtemp) that sends this process SIGTERM the moment its file exists."""

    def made(*args, **kwargs):
        result = make(*args, **kwargs)
        signal.raise_signal(signal.SIGTERM)
        return result

    return made


@pytest.mark.parametrize("make", ["mkstemp", "mkdtemp"])
def test_a_signal_as_the_staging_appears_leaves_nothing(tmp_path, monkeypatch, make):
    """The window between making the temporary file or folder and naming it for the clean-up: a
    SIGTERM there (CI caught it once, under load) must not leave `.p.*.tmp` behind."""

    def terminate(signum, frame):
        raise Terminated(signum)

    monkeypatch.setattr(tempfile, make, _signalled_at_birth(getattr(tempfile, make)))
    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        with pytest.raises(Terminated):
            if make == "mkstemp":
                with atomic_path(tmp_path / "p") as tmp:
                    tmp.write_text("{}")
            else:
                write_folder(NEW, tmp_path / "a" / "p", False, MARKER, WHAT)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_modes_follow_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        save_npy(tmp_path / "a.npy", np.arange(3))
        with atomic_path(tmp_path / "b.json") as tmp:
            tmp.write_text("{}")
        write_folder(NEW, tmp_path / "p", False, MARKER, WHAT)
    finally:
        os.umask(old)
    files = [tmp_path / "a.npy", tmp_path / "b.json", *(p for p in (tmp_path / "p").rglob("*") if p.is_file())]
    assert {oct(f.stat().st_mode & 0o777) for f in files} == {oct(0o666 & ~mask)}
    folders = [tmp_path / "p", *(p for p in (tmp_path / "p").rglob("*") if p.is_dir())]
    assert {oct(f.stat().st_mode & 0o777) for f in folders} == {oct(0o777 & ~mask)}


def test_writers_of_one_folder_take_turns(tmp_path):
    out, events = tmp_path / "p", []

    def writer(name: str, hold: float) -> None:
        with folder_lock(out):
            events.append(f"{name} in")
            time.sleep(hold)
            with folder_lock(out):  # re-entrant within a thread
                events.append(f"{name} out")

    first = threading.Thread(target=writer, args=("a", 0.4))
    first.start()
    time.sleep(0.1)
    second = threading.Thread(target=writer, args=("b", 0.0))
    second.start()
    first.join(10), second.join(10)
    assert events == ["a in", "a out", "b in", "b out"]
    assert list(tmp_path.iterdir()) == []  # the lock file is gone


def test_readers_refuse_a_changed_folder(tmp_path):
    out = tmp_path / "p"
    write_folder(NEW, out, False, MARKER, WHAT)
    verify_files(out, ["README.md"], WHAT)
    (out / "README.md").write_text("changed")
    with pytest.raises(FannsError, match="README.md missing or changed since"):
        verify_files(out, ["README.md"], WHAT)
    (out / MANIFEST).unlink()  # a folder assembled by hand is not checked against anything
    verify_files(out, ["README.md"], WHAT)


@pytest.mark.parametrize(
    "damage",
    [lambda p: p.write_bytes(p.read_bytes()[:100]), lambda p: save_npy(p, -np.load(p) - 1)],
    ids=["truncated", "ids-out-of-range"],
)
def test_groundtruth_cache_entry_is_checked_before_reuse(tmp_path, damage):
    ds = load_dataset(str(make_dataset(tmp_path / "ds")))
    exact = ds.groundtruth(10).copy()
    (entry,) = ds.cache_dir.glob("gt-*.npy")
    damage(entry)
    again = load_dataset(str(tmp_path / "ds"))
    assert np.array_equal(again.groundtruth(10), exact)  # recomputed, not read from the damaged entry
    assert np.array_equal(np.load(entry)[:, :10], exact)  # and published again whole


def test_builtin_and_graph_caches_rebuild_a_damaged_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("FANNS_CACHE", str(tmp_path / "cache"))
    ds = load_builtin("deep-10k")
    base = np.asarray(ds.base).copy()
    path = ds.cache_dir / "base.npy"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert np.array_equal(np.asarray(load_builtin("deep-10k").base), base)
    small = load_dataset(str(make_dataset(tmp_path / "ds", n=600)))
    graph = load_or_build(small, "nsg", 8, 16, 8)
    (entry,) = (small.cache_dir / "graphs").glob("*.npz")
    entry.write_bytes(b"PK\x03\x04 not a whole archive")
    again = load_or_build(small, "nsg", 8, 16, 8)
    assert np.array_equal(again.neighbors, graph.neighbors)
    assert [p.name for p in (small.cache_dir / "graphs").iterdir()] == [entry.name]  # no temporary files
