"""The fast IVF-PQ harness without a Verilator build: the bench's structure (the project's module
instantiated with every port on a memory of its own). The memories' timing is checked compiled
(`tests/sim/test_vmodel.py`)."""

import re

import pytest

from fanns.cli import main
from fanns.errors import FannsError
from fanns.hdl.verilog import to_verilog
from fanns.sim.axi_memory import RAM_MODULE, SimMemory
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
