"""The fast IVF-PQ harness without a Verilator build: the memory timing the cycle model assumes
(`fanns.sim.axi_memory.SimMemory` in Amaranth's simulator) and the bench's structure (the
project's module instantiated with every port on a memory of its own)."""

import re

import pytest
from amaranth.sim import Simulator

from fanns.cli import main
from fanns.errors import FannsError
from fanns.sim.axi_memory import SimMemory
from fanns.sim.ivfpq.fast import BenchLayout, Port, bench_verilog, check_timing

LATENCY = 7


def _handshakes(stall: int = 0) -> dict:
    """Cycles of the AR, R, W and B handshakes of one 4-beat read and one 2-beat write."""
    mem = SimMemory(64, 1024, ["r"], ["w"])
    seen: dict[str, list[int]] = {"ar": [], "r": [], "aw": [], "w": [], "b": []}

    async def bench(ctx):
        ctx.set(mem.latency, LATENCY)
        ctx.set(mem.stall, stall)
        await ctx.tick()  # the memory's settings are registered
        r, w = mem.r, mem.w
        ctx.set(r.arlen, 3)
        ctx.set(r.arvalid, 1)
        ctx.set(r.rready, 1)
        ctx.set(w.awlen, 1)
        ctx.set(w.awvalid, 1)
        ctx.set(w.wvalid, 1)
        ctx.set(w.wstrb, 0xFF)
        ctx.set(w.bready, 1)
        for cycle in range(3 * LATENCY + 40):
            for name, bus, valid, ready in (
                ("ar", r, "arvalid", "arready"),
                ("r", r, "rvalid", "rready"),
                ("aw", w, "awvalid", "awready"),
                ("w", w, "wvalid", "wready"),
                ("b", w, "bvalid", "bready"),
            ):
                if ctx.get(getattr(bus, valid)) and ctx.get(getattr(bus, ready)):
                    seen[name].append(cycle)
            await ctx.tick()
            if seen["ar"]:
                ctx.set(r.arvalid, 0)
            if seen["aw"]:
                ctx.set(w.awvalid, 0)
            if len(seen["w"]) == 2:
                ctx.set(w.wvalid, 0)

    sim = Simulator(mem)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return seen


def test_first_beat_latency_after_the_request_then_one_per_cycle():
    seen = _handshakes()
    (ar,) = seen["ar"]
    assert seen["r"] == [ar + LATENCY + i for i in range(4)]
    assert seen["b"] == [seen["w"][-1] + LATENCY]
    assert len(seen["w"]) == 2


def test_stalls_delay_but_keep_every_beat():
    seen = _handshakes(stall=128)
    assert len(seen["r"]) == 4 and len(seen["b"]) == 1
    assert seen["r"][-1] > LATENCY + 3  # without stalls the last beat is at LATENCY + 3


def _layout(tiered: bool) -> BenchLayout:
    ports = [Port("m_axi_io", 256, True, "io", 2048), Port("m_axi_pq0", 512, False, "pq", 1024)]
    ports.append(Port("m_axi_pq1", 512, False, "pq", 1024))
    if tiered:
        ports += [Port("m_axi_hot0", 512, False, "hot", 1024), Port("m_axi_hot1", 512, False, "hot", 1024)]
    return BenchLayout(tuple(ports), {"centroids": 4096, "queries": 8192, "results": 12288}, 12)


def test_bench_instantiates_the_projects_module_with_every_port_served():
    layout = _layout(tiered=True)
    text = bench_verilog(layout, "fanns_ivfpq")
    assert re.search(r"^\s*fanns_ivfpq accelerator \(", text, re.M), "the project's module is instantiated"
    assert "module fanns_ivfpq(" not in text  # its definition comes from the project's file
    for p in layout.ports:
        for sig in ("araddr", "arvalid", "arready", "rdata", "rvalid", "rready", "rlast"):
            assert f".{p.name}_{sig}(" in text, (p.name, sig)  # the RTL kernel's port names
        assert (f".{p.name}_awvalid(" in text) == p.write
        assert f"output [15:0] {p.short}_reads;" in text
    for sig in ("awaddr", "wdata", "bvalid", "araddr", "rdata"):
        assert f".s_axi_control_{sig}(" in text
    memories = re.findall(r"^module \\fanns_ivfpq_bench\.mem_(\w+) \(", text, re.M)
    assert sorted(memories) == sorted(p.short for p in layout.ports)  # one memory per port


def test_slower_memories_are_refused():
    check_timing(1.0, "the pq memory")
    with pytest.raises(FannsError, match="one beat per cycle"):
        check_timing(0.5, "the pq memory")


def test_cli_refuses_a_harness_where_there_is_no_choice(tmp_path, capsys):
    assert main(["sim", str(tmp_path), "--backend", "csim", "--harness", "fast"]) == 2
    assert "--harness chooses between the RTL harnesses" in capsys.readouterr().err
