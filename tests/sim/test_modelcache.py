"""The model cache (`fanns.tools.modelcache`): an entry is built once, keeps only the files named
with its record, waits for another builder instead of building twice, leaves nothing behind when
its build fails, and the least recently used entries go when the cache outgrows its size."""

import json
import os
import threading
import time

import pytest

from fanns.tools import modelcache
from fanns.tools.modelcache import READY, ModelEntry, content_key, evict


def _build(entry: ModelEntry, payload: bytes = b"library") -> bool:
    with entry.build(keep=("lib.so",), record={"what": "test"}) as stage:
        if stage is None:
            return False
        (stage / "lib.so").write_bytes(payload)
        (stage / "objects.o").write_bytes(b"big")
    return True


def test_an_entry_is_built_once_and_keeps_only_its_files(tmp_path):
    entry = ModelEntry("top", content_key(["a", "b"]), tmp_path)
    assert not entry.ready
    assert _build(entry)
    assert entry.ready and sorted(p.name for p in entry.folder.iterdir()) == ["lib.so", READY]
    assert json.loads((entry.folder / READY).read_text()) == {"what": "test"}
    assert not _build(entry)  # built: the block gets no staging folder
    assert not list(tmp_path.glob(".stage-*")) and not list(tmp_path.glob(".entry-*"))


def test_keys_tell_apart_what_joined_text_would_not():
    assert content_key(["ab", "c"]) != content_key(["a", "bc"])
    assert content_key(["a", b"b"]) == content_key([b"a", "b"])


def test_a_failed_build_leaves_nothing(tmp_path):
    entry = ModelEntry("top", "k", tmp_path)
    with pytest.raises(RuntimeError, match="compiler"):
        with entry.build(keep=("lib.so",), record={}) as stage:
            (stage / "lib.so").write_bytes(b"half")
            raise RuntimeError("compiler failed")
    assert not entry.ready and not entry.folder.exists() and not list(tmp_path.glob(".stage-*"))
    assert _build(entry)


def test_a_second_builder_waits_for_the_first_and_reuses_its_model(tmp_path):
    entry = ModelEntry("top", "k", tmp_path)
    started, results = threading.Event(), []

    def slow():
        with entry.build(keep=("lib.so",), record={}) as stage:
            started.set()
            time.sleep(0.5)
            (stage / "lib.so").write_bytes(b"first")
            results.append("first")  # inside the build: before its lock is released, whatever the scheduling

    first = threading.Thread(target=slow)
    first.start()
    started.wait()
    results.append("second built" if _build(ModelEntry("top", "k", tmp_path), b"second") else "second reused")
    first.join()
    assert results == ["first", "second reused"]
    assert (entry.folder / "lib.so").read_bytes() == b"first"


def test_the_least_recently_used_entries_go_first(tmp_path, monkeypatch):
    monkeypatch.setattr(modelcache, "IN_USE_SECONDS", 60)
    now = time.time()
    entries = {}
    for name, age in (("old", 7200), ("middle", 3600), ("recent", 10)):
        entries[name] = ModelEntry(name, "k", tmp_path)
        _build(entries[name], b"x" * 1000)
        os.utime(entries[name].folder / READY, (now - age, now - age))
    entries["middle"].touch()  # used now: the youngest
    stale = tmp_path / ".stage-dead"
    stale.mkdir()
    os.utime(stale, (now - 2 * modelcache.STALE_STAGE_SECONDS, now - 2 * modelcache.STALE_STAGE_SECONDS))
    removed = evict(tmp_path, limit_gb=1.5e-6)  # room for about one entry
    assert removed == [entries["old"].folder]  # "recent" is in use, "middle" was just touched
    assert entries["middle"].ready and entries["recent"].ready and not stale.exists()
    assert evict(tmp_path, limit_gb=1.0) == []
