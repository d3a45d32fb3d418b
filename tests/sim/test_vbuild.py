"""How a whole design's simulator is built (`fanns.tools.vbuild`): the modules a design converted
by `fanns.hdl.modules` shares counted by instance, shared large modules made Verilator hierarchical
blocks (escaped names made plain identifiers), the expanded sizes the cost model reads, the choice
of a build by expected build and run time; and, built, a hierarchical model that moves every word
on the cycle the flattened one does."""

import re

import numpy as np
import pytest
from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.errors import FannsError
from fanns.hdl.modules import ModuleLibrary
from fanns.hdl.verilog import instance_counts, to_verilog, verilog_modules
from fanns.pe.stream_fifo import stream_fifo
from fanns.tools import vbuild
from fanns.tools.vbuild import BuildOptions, hier_blocks, mark_blocks, prepare_sources
from fanns.tools.verilator import lint
from fanns.tools.vmodel import ModelBuild

WIDTH, STAGES = 16, 3


class Chain(wiring.Component):
    """`STAGES` identical FIFOs in a row and one of another depth after them, each a part of its
    own (`stream_fifo`) as a design's PEs and FIFOs are."""

    def __init__(self):
        super().__init__({"i": In(stream.Signature(WIDTH)), "o": Out(stream.Signature(WIDTH))})

    def elaborate(self, platform):
        m = Module()
        fifos = [stream_fifo(WIDTH, 8) for _ in range(STAGES)] + [stream_fifo(WIDTH, 4)]
        for n, f in enumerate(fifos):
            m.submodules[f"fifo{n}"] = f
        wiring.connect(m, wiring.flipped(self.i), fifos[0].i)
        for a, b in zip(fifos, fifos[1:]):
            wiring.connect(m, a.o, b.i)
        wiring.connect(m, fifos[-1].o, wiring.flipped(self.o))
        return m


@pytest.fixture(scope="module")
def verilog():
    with ModuleLibrary(to_verilog) as parts:
        top = to_verilog(Chain(), "chain")
    return top + parts.verilog()


def test_the_instances_of_a_shared_part_are_counted(verilog, tmp_path):
    modules = verilog_modules(verilog)
    fifos = [n for n in modules if n.startswith("fanns_stream_fifo_")]
    assert len(fifos) == 2  # the depth-8 FIFO and the depth-4 one, each converted once
    counts = instance_counts(verilog)
    assert sorted(counts[n] for n in fifos) == [1, STAGES] and counts["chain"] == 1
    (tmp_path / "chain.v").write_text(verilog)
    _, text = lint([tmp_path / "chain.v"], "chain")  # -Wall's warnings at most; no error
    assert not re.search(r"%Error(?!: Exiting due to \d+ warning)", text), text


def test_shared_large_modules_become_plain_named_hierarchical_blocks(verilog, monkeypatch):
    assert hier_blocks(verilog) == []  # FIFOs are far below the thresholds
    monkeypatch.setattr(vbuild, "HIER_MIN_BYTES", 100)
    monkeypatch.setattr(vbuild, "HIER_MIN_SAVED", 100)
    (block,) = hier_blocks(verilog)  # the depth-8 FIFO; its memory inside it is not a block of its own
    assert instance_counts(verilog)[block] == STAGES
    escaped = "\\chain.fifo"  # a module Amaranth names by its path gets a plain name
    assert vbuild.plain_name(escaped) == "hier_chain_fifo" and vbuild.plain_name(block) == block
    named = re.sub(rf"(?<![\w\\]){block}(?![\w.])", lambda _: escaped + " ", verilog)  # definition and instances
    marked = mark_blocks(named, [escaped])
    plain = vbuild.plain_name(escaped)
    assert f"module {plain} (" in marked and escaped + " " not in marked
    assert marked.count(f"  {plain} ") == STAGES and marked.count("/*verilator hier_block*/") == 1
    prepared = prepare_sources({"chain.v": verilog, "notes.vlt": "`verilator_config\n"}, hierarchical=True)
    assert prepared.blocks == 1 and prepared.sources["notes.vlt"] == "`verilator_config\n"
    assert prepared.compiled_bytes < prepared.evaluated_bytes  # the block's module counted once


def test_a_short_simulation_chooses_a_cheaper_build_than_a_long_one(verilog, monkeypatch):
    """With costs of the measured kind (compile time grows with the optimisation, run time
    shrinks; a hierarchical block compiles once and costs run time): few cycles choose the
    hierarchical -O1 build (-O0 runs more than `RUN_LIMIT` times slower than the baseline), many
    the flattened -O2; a design without a block worth it never builds hierarchically."""
    monkeypatch.setattr(vbuild, "COMPILE_S_PER_MB", {"-O0": 20.0, "-O1": 30.0, "-O2": 50.0})
    monkeypatch.setattr(vbuild, "RUN_S_PER_MCYCLE_MB", {"-O0": 40.0, "-O1": 15.0, "-O2": 12.0})
    sources = {"chain.v": verilog}
    none, _ = vbuild.choose_options(sources, cycles=1_000)
    assert none == BuildOptions("-O1", hierarchical=False)
    monkeypatch.setattr(vbuild, "HIER_MIN_BYTES", 100)
    monkeypatch.setattr(vbuild, "HIER_MIN_SAVED", 100)
    short, prepared = vbuild.choose_options(sources, cycles=1_000)
    assert short == BuildOptions("-O1", hierarchical=True) and prepared.blocks == 1
    long, prepared = vbuild.choose_options(sources, cycles=10**10)
    assert long == BuildOptions("-O2", hierarchical=False) and prepared.blocks == 0
    flat, _ = vbuild.choose_options(sources, cycles=1_000, hierarchical=False)
    assert not flat.hierarchical


def test_a_split_build_passes_verilator_its_split_options():
    """`BuildOptions.split` (measured by benchmarks/sim_build.py, not weighed by `choose_options`:
    it compiled the 784-d design in 2.2x the time) is Verilator's two split options and says so."""
    split = BuildOptions("-O1", split=1000)
    assert split.verilator_flags() == ["--output-split", "1000", "--output-split-cfuncs", "1000"]
    assert "split every 1,000 statements" in split.describe(5) and BuildOptions().verilator_flags() == []
    assert all(not c.split for c in vbuild.CANDIDATES)
    with pytest.raises(FannsError, match="split -1"):
        BuildOptions(split=-1)


@pytest.mark.slow
def test_a_hierarchical_model_moves_every_word_on_the_cycle_the_flattened_one_does(verilog, tmp_path, monkeypatch):
    monkeypatch.setattr(vbuild, "HIER_MIN_BYTES", 100)
    monkeypatch.setattr(vbuild, "HIER_MIN_SAVED", 100)
    rng = np.random.default_rng(11)
    valid, ready, words = (rng.random(400) < 0.7), (rng.random(400) < 0.6), rng.integers(0, 1 << WIDTH, 400)
    seen = {}
    for hierarchical in (False, True):
        build = ModelBuild({"chain.v": verilog}, "chain", tmp_path, options=BuildOptions("-O0", "-O0", hierarchical))
        assert build.blocks == (1 if hierarchical else 0)
        m = build.open()
        m.poke("rst", 1)
        m.step(2)
        m.poke("rst", 0)
        out, sent = [], 0
        for cycle in range(400):
            m.poke("i__valid", int(valid[cycle]))
            m.poke("i__payload", int(words[sent]))
            m.poke("o__ready", int(ready[cycle]))
            if m.peek("o__valid") and ready[cycle]:
                out.append((cycle, m.peek("o__payload")))
            sent += int(valid[cycle] and m.peek("i__ready"))
            m.step()
        m.close()
        seen[hierarchical] = out
    assert len(seen[False]) > 100 and seen[True] == seen[False]
    assert [w for _, w in seen[False]] == [int(w) for w in words[: len(seen[False])]]
