"""The I/O router of the IVF-PQ top level at load (issue 17, the u250 hang), in Amaranth's simulator.

Sections of different word widths leave through different beat splitters: with 128-bit IVF words
and 256-bit codebook words from 512-bit beats, the IVF section's last pieces and the codebook's
first words go on chip in the same cycles. The router must report every ROM word it puts on
chip (the controller's load counter waits for all of them); it reported one per cycle at most,
so the load never finished. Here the router alone is driven with back-to-back beats and every
destination ready: the words it reports equal the words the destinations took, and both equal
the sections' word counts.
"""

from types import SimpleNamespace

from amaranth import Elaboratable, Module, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.sim import Simulator

from fanns.arch.ivfpq.front import cell_list_layout
from fanns.arch.ivfpq.hw import SECTIONS, IvfPqHw
from fanns.arch.ivfpq.seed_merge import seed_layout
from fanns.arch.ivfpq.top import TAG_BITS, IvfPqAccelerator
from fanns.boards import load_board
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design


class Router(Elaboratable):
    """`IvfPqAccelerator._router` with a plain beat stream for the I/O reader and streams for its targets."""

    def __init__(self, hw: IvfPqHw):
        self.hw = hw
        port, vb, st = hw.io_port_bits, hw.vec_bits, hw.stages
        beat = data.StructLayout({"data": port, "keep": port // 8, "last": 1})
        self.rd = SimpleNamespace(o=stream.Signature(beat).create())
        self.front = SimpleNamespace(
            ivf_fill=stream.Signature(unsigned(st.ivf_dist.lanes * vb)).create(),
            q=stream.Signature(unsigned(hw.src_lanes * vb)).create(),
            cell_list=stream.Signature(cell_list_layout()).create(),
        )
        self.seeds = stream.Signature(seed_layout()).create()
        lut_bits = unsigned(st.build_lut.lanes * vb)
        self.lut = SimpleNamespace(
            codebook_fill=stream.Signature(lut_bits).create(), lutc_fill=stream.Signature(lut_bits).create()
        )
        self.tag_w_en, self.tag_w_data = Signal(), Signal(TAG_BITS)
        self.rom_words = None

    def targets(self) -> list:
        return [
            self.front.ivf_fill,
            self.front.q,
            self.front.cell_list,
            self.seeds,
            self.lut.codebook_fill,
            self.lut.lutc_fill,
        ]

    def elaborate(self, platform):
        m = Module()
        tags, self.rom_words = IvfPqAccelerator._router(self, m, self.rd, self.front, self.lut, None, self.seeds)
        m.d.comb += [tags.w_en.eq(self.tag_w_en), tags.w_data.eq(self.tag_w_data)]
        m.d.comb += [t.ready.eq(1) for t in self.targets()]
        return m


def test_router_counts_every_rom_word_of_sections_of_different_widths():
    data_, fmt = random_index(nlist=12, n=900, d=32, m=8, empty=2), random_format(32, 8)
    design = pinned_design(data_, fmt, board="u250", nprobe=3, k=10, ivf=(1, 8, "bram"), lut=(1, 16, "bram"))
    hw = IvfPqHw.from_design(design, load_board("u250"))
    assert [hw.section_word_bits(s) for s in ("ivf", "codebook", "lutc")] == [128, 256, 256]
    dut = Router(hw)
    beat_bytes = hw.io_port_bits // 8
    sections = ["ivf", "codebook", "lutc"]
    beats = []
    for s in sections:
        n = hw.section_bytes(s) // beat_bytes
        beats += [(SECTIONS.index(s), i, i == n - 1) for i in range(n)]
    words = sum(hw.section_bytes(s) * 8 // hw.section_word_bits(s) for s in sections)
    seen = {"reported": 0, "taken": 0, "most_per_cycle": 0}

    async def bench(ctx):
        for s in sections:  # the controller queues one tag per section command
            ctx.set(dut.tag_w_en, 1)
            ctx.set(dut.tag_w_data, SECTIONS.index(s))
            await ctx.tick()
        ctx.set(dut.tag_w_en, 0)
        i = 0
        for _ in range(words + len(beats) + 20):  # a splitter emits one word per cycle
            if i < len(beats):
                _, j, last = beats[i]
                ctx.set(dut.rd.o.valid, 1)
                ctx.set(dut.rd.o.payload.data, j)
                ctx.set(dut.rd.o.payload.keep, (1 << beat_bytes) - 1)
                ctx.set(dut.rd.o.payload.last, last)
            else:
                ctx.set(dut.rd.o.valid, 0)
            took = sum(ctx.get(t.valid) for t in dut.targets())
            seen["taken"] += took
            seen["most_per_cycle"] = max(seen["most_per_cycle"], took)
            seen["reported"] += ctx.get(dut.rom_words)
            advance = i < len(beats) and ctx.get(dut.rd.o.ready)
            await ctx.tick()
            i += int(advance)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert seen["taken"] == words
    assert seen["most_per_cycle"] == 2  # the 128- and 256-bit splitters emit together
    assert seen["reported"] == words
