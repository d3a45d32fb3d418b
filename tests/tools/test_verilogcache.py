"""The Verilog cache (`fanns.tools.verilogcache`): a part or kernel converted once is taken from
the cache byte for byte as converted, and only for the same input: another parameter, another
key, other fanns code or a key whose `repr` hides content misses it; the least recently used
entries go when the folder outgrows its bound."""

import os

import pytest
from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.errors import FannsError
from fanns.hdl.modules import ModuleLibrary
from fanns.hdl.verilog import to_kernel_verilog, to_verilog
from fanns.pe.stream_fifo import stream_fifo
from fanns.tools import codedigest, verilogcache
from fanns.tools.verilogcache import VerilogModuleCache

WIDTH = 8


class Pair(wiring.Component):
    """Two FIFOs in a row, each a part of its own (`stream_fifo`); `elaborations` counts elaborations."""

    elaborations = 0

    def __init__(self, depth: int):
        self.depth = depth
        super().__init__({"i": In(stream.Signature(WIDTH)), "o": Out(stream.Signature(WIDTH))})

    def elaborate(self, platform):
        Pair.elaborations += 1
        m = Module()
        m.submodules.a = a = stream_fifo(WIDTH, self.depth)
        m.submodules.b = b = stream_fifo(WIDTH, 4)
        wiring.connect(m, wiring.flipped(self.i), a.i)
        wiring.connect(m, a.o, b.i)
        wiring.connect(m, b.o, wiring.flipped(self.o))
        return m


class Counting:
    """`to_verilog` that records the modules it converts."""

    def __init__(self):
        self.converted: list[str] = []

    def __call__(self, component, name):
        self.converted.append(name)
        return to_verilog(component, name)


def _convert(depth: int, store) -> tuple[str, list[str]]:
    convert = Counting()
    with ModuleLibrary(convert, store) as parts:
        top = to_verilog(Pair(depth), "pair")
    return top + parts.verilog(), convert.converted


@pytest.fixture(scope="module")
def fresh() -> str:
    """The design converted without a cache."""
    return _convert(8, None)[0]


def test_a_kept_part_is_not_converted_again_and_is_the_same_text(fresh, tmp_path):
    store = VerilogModuleCache(tmp_path)
    cold, converted = _convert(8, store)
    assert len(converted) == 2 and len(list(tmp_path.glob("*.v"))) == 2
    warm, again = _convert(8, store)
    assert again == [] and warm == cold == fresh


def test_a_changed_parameter_misses_the_cache(tmp_path):
    store = VerilogModuleCache(tmp_path)
    _convert(8, store)
    text, converted = _convert(16, store)  # the depth-4 FIFO is kept; the depth-16 one is new
    assert len(converted) == 1 and "fifo_" in converted[0]
    assert text == _convert(16, None)[0]
    assert len(list(tmp_path.glob("*.v"))) == 3


def test_other_code_or_tools_miss_the_cache(tmp_path, monkeypatch):
    store = VerilogModuleCache(tmp_path)
    store.put("m", "key", "module m;\nendmodule\n")
    assert store.get("m", "key") == "module m;\nendmodule\n"
    assert store.get("m", "other key") is None and store.get("n", "key") is None
    monkeypatch.setattr(codedigest, "source_digest", lambda: "edited fanns")
    assert store.get("m", "key") is None
    monkeypatch.undo()
    monkeypatch.setattr(verilogcache, "toolchain", lambda: "another yosys")
    assert store.get("m", "key") is None


def test_a_key_that_hides_content_is_never_kept(tmp_path):
    store = VerilogModuleCache(tmp_path)
    for key in ("Part(table=array([0, 1, ..., 9]))", "<Part object at 0x7f00>"):
        store.put("m", key, "module m;\nendmodule\n")
        assert store.get("m", key) is None
    assert not list(tmp_path.iterdir())


def test_a_whole_kernel_is_kept_by_its_key(tmp_path):
    store = VerilogModuleCache(tmp_path)
    first = to_kernel_verilog(Pair(8), "k", {}, store, ("pair", 8))
    count = Pair.elaborations
    assert to_kernel_verilog(Pair(8), "k", {}, store, ("pair", 8)) == first
    assert Pair.elaborations == count  # taken from the cache, not elaborated
    assert to_kernel_verilog(Pair(8), "k", {}) == first
    other = to_kernel_verilog(Pair(16), "k", {}, store, ("pair", 16))
    assert Pair.elaborations == count + 2 and other != first


def test_the_least_recently_used_entries_go_beyond_the_bound(tmp_path):
    store = VerilogModuleCache(tmp_path, limit_mb=2.5e-3)  # 2,500 bytes: two entries of 1,000
    for n in range(3):
        store.put(f"m{n}", "key", "x" * 1000)
        path = store.path(f"m{n}", "key")
        os.utime(path, (n, n))  # m0 the oldest
    assert store.get("m0", "key") is None
    assert store.get("m1", "key") and store.get("m2", "key")


def test_a_folder_that_cannot_be_written_keeps_nothing_and_breaks_nothing(tmp_path):
    (tmp_path / "file").write_text("")
    store = VerilogModuleCache(tmp_path / "file" / "cache")  # its parent is a file: no folder can be made
    store.put("m", "key", "module m;\nendmodule\n")
    assert store.get("m", "key") is None


def test_a_size_bound_that_is_not_a_number_is_named(monkeypatch):
    monkeypatch.setenv(verilogcache.SIZE_ENV, "lots")
    with pytest.raises(FannsError, match="FANNS_VERILOG_MODULES_MB='lots' is not a number"):
        VerilogModuleCache()
