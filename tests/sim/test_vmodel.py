"""The compiled harness (`fanns.tools.vmodel`): Verilator's port declarations read back, and a
`SimMemory` built into a shared library and driven from Python: the memory timing the cycle model
assumes (the first read beat `latency` cycles after the request, then one a cycle; the write
response `latency` cycles after the last beat; random stalls delay but keep every beat, and a
quick build gives the same cycles), words written over AXI with byte strobes and through the
back door read back, and a missing port or clock refused; the in-place load and read of bench
memories of several widths agree word for word with their clocked back-door ports."""

import re

import numpy as np
import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.errors import FannsError
from fanns.hdl.verilog import to_verilog
from fanns.sim.axi_memory import SimMemory, ram_sources
from fanns.sim.compiled import BACKDOOR_READ, BACKDOOR_WRITE, load, read
from fanns.tools.vbuild import BuildOptions
from fanns.tools.vmodel import QUICK_BUILD, Model, ModelBuild, header_ports

LATENCY = 7
HANDSHAKES = (
    ("ar", "r", "arvalid", "arready"),
    ("r", "r", "rvalid", "rready"),
    ("aw", "w", "awvalid", "awready"),
    ("w", "w", "wvalid", "wready"),
    ("b", "w", "bvalid", "bready"),
)


def test_header_ports_decode_verilators_escaped_names():
    header = """
    VL_IN8(&clk,0,0);
    VL_IN16(&s_axil___05Fawaddr,11,0);
    VL_OUT64(&count,47,0);
    VL_INW(&bd_wdata,511,0,16);
    VL_OUT(&rdata,31,0);
    VL_OUT8(&__SYM__interrupt,0,0);
    """
    assert header_ports(header) == [
        ("clk", "clk", 1),
        ("s_axil__awaddr", "s_axil___05Fawaddr", 12),
        ("count", "count", 48),
        ("bd_wdata", "bd_wdata", 512),
        ("rdata", "rdata", 32),
        ("interrupt", "__SYM__interrupt", 1),
    ]


def _memory_build(folder, **options) -> ModelBuild:
    sources = {"mem.v": to_verilog(SimMemory(64, 1024, ["r"], ["w"]), "mem"), **ram_sources()}
    return ModelBuild(sources, "mem", folder, **options)


@pytest.fixture(scope="module")
def memory(build_root):
    build = _memory_build(build_root / "vmodel")
    build.build()
    return build


def _handshakes(build: ModelBuild, stall: int = 0) -> dict:
    """Cycles of the AR, R, W and B handshakes of one 4-beat read and one 2-beat write."""
    m = build.open()
    seen = _handshakes_on(m, stall)
    m.close()
    return seen


def _handshakes_on(m: Model, stall: int = 0) -> dict:
    """`_handshakes` on an open model."""
    seen: dict[str, list[int]] = {name: [] for name, *_ in HANDSHAKES}
    m.poke("rst", 1)
    m.step(1)
    m.poke("rst", 0)
    m.poke("latency", LATENCY)
    m.poke("stall", stall)
    m.step()  # the memory's settings are registered
    for name, value in (("r__arlen", 3), ("r__arvalid", 1), ("r__rready", 1), ("w__awlen", 1), ("w__awvalid", 1)):
        m.poke(name, value)
    for name, value in (("w__wvalid", 1), ("w__wstrb", 0xFF), ("w__bready", 1)):
        m.poke(name, value)
    for cycle in range(3 * LATENCY + 40):
        for name, bus, valid, ready in HANDSHAKES:
            if m.peek(f"{bus}__{valid}") and m.peek(f"{bus}__{ready}"):
                seen[name].append(cycle)
        m.step()
        if seen["ar"]:
            m.poke("r__arvalid", 0)
        if seen["aw"]:
            m.poke("w__awvalid", 0)
        if len(seen["w"]) == 2:
            m.poke("w__wvalid", 0)
    return seen


@pytest.mark.slow
def test_first_beat_latency_after_the_request_then_one_per_cycle(memory):
    seen = _handshakes(memory)
    (ar,) = seen["ar"]
    assert seen["r"] == [ar + LATENCY + i for i in range(4)]
    assert len(seen["w"]) == 2 and seen["b"] == [seen["w"][-1] + LATENCY]


@pytest.mark.slow
def test_stalls_delay_but_keep_every_beat(memory):
    seen = _handshakes(memory, stall=128)
    calm = _handshakes(memory)
    assert len(seen["r"]) == 4 and len(seen["w"]) == 2 and len(seen["b"]) == 1
    assert seen["r"][-1] > calm["r"][-1]  # without stalls the last beat is at ar + LATENCY + 3


@pytest.mark.slow
@pytest.mark.long  # a second Verilator build of the memory, the quick one
def test_a_quick_build_keeps_the_rtl_timing(memory, build_root):
    """The g++ -O0 build the short simulations of the shape tests and the fuzz use."""
    quick = _memory_build(build_root / "vmodel-quick", options=QUICK_BUILD)
    quick.build()
    assert f"c++ {QUICK_BUILD.cxx_opt} " in quick.log.read_text()
    for stall in (0, 128):
        assert _handshakes(quick, stall) == _handshakes(memory, stall)


@pytest.mark.slow
def test_an_axi_write_honours_its_byte_strobes_and_a_read_returns_the_words(memory):
    """Words loaded through the back door; one AXI beat writes the low four bytes of word 2
    (strobes 0x0F); an AXI burst reads words 1-3 back."""
    m = memory.open()
    m.poke("rst", 1)
    m.step(2)
    m.poke("rst", 0)
    words = np.random.default_rng(5).integers(1, 256, 8 * 4, dtype=np.uint8).tobytes()
    load(m, words, 8)
    new = bytes(range(0xA0, 0xA8))
    for name, value in (("w__awaddr", 16), ("w__awlen", 0), ("w__awvalid", 1), ("w__bready", 1)):
        m.poke(name, value)
    m.poke("w__wdata", int.from_bytes(new, "little"))
    m.poke("w__wstrb", 0x0F)
    m.poke("w__wvalid", 1)
    for _ in range(LATENCY + 10):  # a valid drops after the edge that completes its handshake
        aw_done = m.peek("w__awvalid") and m.peek("w__awready")
        w_done = m.peek("w__wvalid") and m.peek("w__wready")
        m.step()
        if aw_done:
            m.poke("w__awvalid", 0)
        if w_done:
            m.poke("w__wvalid", 0)
    expected = words[:16] + new[:4] + words[20:]
    assert read(m, 8, 0, len(words)) == expected
    for name, value in (("r__araddr", 8), ("r__arlen", 2), ("r__arvalid", 1), ("r__rready", 1)):
        m.poke(name, value)
    beats = []
    for _ in range(LATENCY + 10):
        ar_done = m.peek("r__arvalid") and m.peek("r__arready")
        if m.peek("r__rvalid"):
            beats.append(m.peek("r__rdata").to_bytes(8, "little"))
        m.step()
        if ar_done:
            m.poke("r__arvalid", 0)
    assert b"".join(beats) == expected[8:32]
    m.close()


def test_an_unknown_optimisation_is_refused():
    with pytest.raises(FannsError, match="unknown C\\+\\+ optimisation '-O9'"):
        BuildOptions(cxx_opt="-O9")


@pytest.mark.slow
@pytest.mark.long  # more of the compiled memory CI already drives
def test_back_door_round_trip_and_refusals(memory):
    m = memory.open()
    m.poke("rst", 1)
    m.step(2)
    m.poke("rst", 0)
    data = np.random.default_rng(3).integers(0, 256, 8 * 40, dtype=np.uint8).tobytes()
    data = data[:80] + bytes(16) + data[96:]  # zero words are skipped on a zeroed memory
    load(m, data, 8, first_word=5)
    assert read(m, 8, 5 * 8, len(data)) == data
    assert read(m, 8, 5 * 8 + 3, 11) == data[3:14]
    assert m.cycles > 0
    with pytest.raises(FannsError, match="no port 'nope'"):
        m.peek("nope")
    m.close()
    with pytest.raises(FannsError, match="no clock port 'ap_clk'"):
        Model(memory.library, "ap_clk")


@pytest.mark.slow
def test_a_traced_build_writes_every_signals_waveform(build_root, tmp_path):
    """`ModelBuild(trace=True)` and `Model.trace`: the VCD has the bench's signals, the memory's
    internal ones included, and one time step per clock edge; a model built without tracing
    refuses, as does a second trace."""
    traced = _memory_build(build_root / "vmodel-trace", trace=True, options=QUICK_BUILD)
    traced.build()
    m = traced.open()
    vcd = tmp_path / "mem.vcd"
    m.trace(vcd)
    with pytest.raises(FannsError, match="already writes a trace"):
        m.trace(tmp_path / "again.vcd")
    _handshakes_on(m)
    cycles = m.cycles
    m.close()
    text = vcd.read_text()
    header, _, body = text.partition("$enddefinitions")
    for name in ("r__arvalid", "r__rvalid", "w__wready", "latency"):
        assert re.search(rf"\$var wire +\d+ \S+ {name} ", header), name
    assert re.search(r"\$scope module ram \$end", header)  # inside the bench: the word array's instance
    times = [int(t) for t in re.findall(r"^#(\d+)$", body, re.M)]
    assert times[0] == 0 and times[-1] == 2 * cycles  # the state when the trace opened, then every edge
    plain = _memory_build(build_root / "vmodel").open()
    with pytest.raises(FannsError, match="built without tracing"):
        plain.trace(tmp_path / "plain.vcd")
    plain.close()


WIDTHS = (16, 64, 256, 512)
"""Word widths of the in-place back door's bench: Verilator keeps a word of 16 bits as SData, of
64 as QData, of 256 and 512 (the benches' widest memories) as VlWide arrays of 32-bit words."""


class _Memories(wiring.Component):
    """One `SimMemory` per width of `WIDTHS` (submodule `m<width>`), each with its clocked back door
    on ports `m<width>_bd_*`."""

    def __init__(self):
        members = {}
        for w in WIDTHS:
            members |= {f"m{w}_bd_addr": In(8), f"m{w}_bd_wdata": In(w), f"m{w}_bd_we": In(1)}
            members[f"m{w}_bd_rdata"] = Out(w)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for w in WIDTHS:
            m.submodules[f"m{w}"] = mem = SimMemory(w, 256, [], [])
            for port in ("bd_addr", "bd_wdata", "bd_we"):
                m.d.comb += getattr(mem, port).eq(getattr(self, f"m{w}_{port}"))
            m.d.comb += getattr(self, f"m{w}_bd_rdata").eq(mem.bd_rdata)
        return m


@pytest.mark.slow
def test_the_in_place_load_and_read_agree_with_the_clocked_back_door(build_root):
    """Per width: an image (zero words in it) loaded in place (no clock cycle) reads back word for
    word through the memory's clocked back-door port; one written through that port reads back in
    place; loads past the end, of another word size or into an unknown memory are refused."""
    build = ModelBuild({"mems.v": to_verilog(_Memories(), "mems"), **ram_sources()}, "mems", build_root / "mems")
    m = build.open()
    m.poke("rst", 1)
    m.step(2)
    m.poke("rst", 0)
    assert sorted(m.memories) == sorted(f"TOP.mems.m{w}.ram" for w in WIDTHS)
    rng = np.random.default_rng(7)
    for w in WIDTHS:
        wb, part, ports = w // 8, f"m{w}", tuple(f"m{w}_{p}" for p in BACKDOOR_WRITE)
        image = bytearray(rng.integers(0, 256, wb * 40, dtype=np.uint8).tobytes())
        image[wb * 5 : wb * 7] = bytes(2 * wb)
        before = m.cycles
        load(m, bytes(image), wb, first_word=3, memory=part)
        assert m.cycles == before  # in place: no clock cycle
        clocked = m.read_words(tuple(f"m{w}_{p}" for p in BACKDOOR_READ), 40, wb, 3)
        assert clocked == bytes(image)
        assert read(m, wb, 3 * wb + 1, 5, memory=part) == bytes(image[1:6])
        other = rng.integers(1, 256, wb * 9, dtype=np.uint8).tobytes()
        m.write_words(ports, other, wb, 100, skip_zero=False)
        assert read(m, wb, 100 * wb, len(other), memory=part) == other
        assert read(m, wb, 0, 3 * wb, memory=part) == bytes(3 * wb)  # untouched words stay zero
        with pytest.raises(FannsError, match="pass the end"):
            load(m, bytes(wb * 2), wb, first_word=255, zeroed=False, memory=part)
    with pytest.raises(FannsError, match="words of 8 bytes, not 64"):
        load(m, bytes(64), 64, memory="m64")
    with pytest.raises(FannsError, match="more than one memory"):
        load(m, bytes(8), 8)
    with pytest.raises(FannsError, match="no memory of the model is 'nope'"):
        read(m, 8, 0, 8, memory="nope")
    m.close()
