"""The fast IVF-PQ harness without a Verilator build: the bench's structure (the project's module
instantiated with every port on a memory of its own). The memories' timing is checked compiled
(`tests/sim/test_vmodel.py`)."""

import re

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from fanns.cli import main
from fanns.errors import FannsError
from fanns.hdl.verilog import to_verilog
from fanns.sim.axi_memory import RAM_MODULE, SimMemory, meter_link
from fanns.sim.ivfpq.fast import BenchLayout, Port, bench_verilog, check_timing


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


def test_a_memorys_verilog_does_not_grow_with_its_depth():
    """The word array is one instance of `fanns_sim_ram` whatever its depth: an Amaranth memory
    was converted word by word (32,768 words of 512 bits: 125 s), which kept the benches of
    designs with large images from being built."""
    small, large = (to_verilog(SimMemory(512, depth, ["r"], ["w"]), "mem") for depth in (1024, 1 << 20))
    assert len(large) - len(small) < 1000  # wider addresses only (one line a word: megabytes)
    assert re.search(rf"^\s*{RAM_MODULE} #\(", large, re.M)
    assert not re.search(r"reg \[511:0\] \S+ \[\d+:0\]", large)  # no word array of its own


def test_slower_memories_are_refused():
    check_timing(1.0, "the pq memory")
    with pytest.raises(FannsError, match="one beat per cycle"):
        check_timing(0.5, "the pq memory")


def test_cli_refuses_a_harness_where_there_is_no_choice(tmp_path, capsys):
    assert main(["sim", str(tmp_path), "--backend", "csim", "--harness", "fast"]) == 2
    assert "--harness chooses between the RTL harnesses" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--backend", "csim", "--trace", "w.vcd"], "--trace writes RTL waveforms"),
        (["--trace", "waves.txt"], "not a .vcd file in an existing folder"),
        (["--trace", "no/such/folder/w.vcd"], "not a .vcd file in an existing folder"),
        (["--trace", "kept.vcd"], "kept.vcd already exists"),
    ],
)
def test_cli_refuses_a_trace_it_cannot_write(tmp_path, capsys, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "kept.vcd").write_text("a user's waveform")
    assert main(["sim", str(project), *extra]) == 2
    assert message in capsys.readouterr().err
    assert (tmp_path / "kept.vcd").read_text() == "a user's waveform"


class _Metered:
    """What `meter_link` sees of a metered SimMemory: its want and grant."""

    def __init__(self, i: int):
        self.link_want, self.link_grant = Signal(name=f"want{i}"), Signal(name=f"grant{i}")


def _metered_beats(rate: int, wants: list[int], cycles: int = 2048) -> list[int]:
    """Beats each of len(wants) memories moves in `cycles` on one link of `rate` / 256 beats a cycle,
    memory i wanting a beat every cycle (1) or never (0)."""
    m = Module()
    mems = [_Metered(i) for i in range(len(wants))]
    rate_sig = Signal(16)
    meter_link(m, mems, rate_sig)
    counts = [0] * len(wants)
    sim = Simulator(m)
    sim.add_clock(1e-8)

    async def bench(ctx):
        ctx.set(rate_sig, rate)
        for mem, w in zip(mems, wants):
            ctx.set(mem.link_want, w)
        for _ in range(cycles):
            for i, mem in enumerate(mems):
                counts[i] += ctx.get(mem.link_want & mem.link_grant)
            await ctx.tick()

    sim.add_testbench(bench)
    sim.run()
    return counts


def test_a_metered_link_is_shared_by_its_memories_at_its_rate():
    """`meter_link`: one memory alone gets the link's rate (57/256 beats a cycle: no fraction lost to
    the cap); three share it evenly; a link faster than a beat a cycle gives each memory at most one
    a cycle; rate 0 is no limit; a memory that wants nothing leaves its share to the others."""
    assert _metered_beats(57, [1]) == [pytest.approx(2048 * 57 / 256, abs=2)]
    three = _metered_beats(96, [1, 1, 1])
    assert sum(three) == pytest.approx(2048 * 96 / 256, abs=2) and max(three) - min(three) <= 1
    assert _metered_beats(2 * 256 + 100, [1, 1]) == [pytest.approx(2048, abs=1)] * 2  # the first cycle earns
    assert _metered_beats(0, [1, 1]) == [2048, 2048]
    assert _metered_beats(128, [1, 0, 1]) == [pytest.approx(512, abs=1), 0, pytest.approx(512, abs=1)]
