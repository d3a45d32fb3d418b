"""The row-sweep engine: the one datapath behind l2dist, ivf_dist, build_lut and opq.

These PEs all do the same thing: hold one vector (a query, a residual, an input to rotate),
then sweep rows (database vectors, IVF centroids, PQ codebook rows, matrix rows) against it,
`w` lanes per cycle and `words = d/w` cycles per row, reduce lane results with adder trees,
accumulate them over the words of a result, post-process each result (shift, round, saturate)
and collect results into output words. They differ only in the lane operation (squared
difference or product), where rows come from (an on-chip memory filled once, or a stream), how
results group (a whole row, or a PQ sub-space of a row) and the post-processing. `Sweep` is
that datapath, written once.

Control: FILL (memory source: accept rows*words words into the memory once after reset), then
LOAD (accept the vector's `words` words) and SWEEP (issue every row word once) alternate. The
vector lives in a rotating register file: loading shifts words in, and every consumed word
rotates the file by one, so the word a lane needs is always at its head (no wide multiplexer).
All of it runs under the PE's pipeline enable.

Pipeline (edges after a row word is issued): [memory read] -> operand/difference -> product/
square -> ceil(log2 result_lanes) tree levels -> accumulate and output register; so a result is
in the output register `depth()` edges after its last word was issued.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from amaranth import Cat, Module, Mux, Shape, Signal, Value
from amaranth.lib import data
from amaranth.lib.memory import Memory

from fanns.engines.datapath import Pipe, add_tree, adder_tree_bits, products, shape_for, squared_diffs, tree_depth

OPS = ("sqdiff", "mul")
LOGIC_FEATURES = ("sub_bits", "tree_bits", "acc_bits", "rotate_bits", "bram_mux_bits")
"""The LUT features of a PE built on the engine: `structure_features` and the RAM read multiplexer."""
SOURCES = ("memory", "stream")


@dataclass(frozen=True)
class SweepSpec:
    w: int
    words: int
    rows: int | None
    vec_range: tuple[int, int]
    row_range: tuple[int, int]
    op: str
    result_lanes: int
    result_words: int
    collect: int
    source: str
    ram_attrs: tuple[tuple[str, str], ...] = (("ram_style", "block"),)
    tag_bits: int = 0

    def __post_init__(self) -> None:
        assert self.op in OPS and self.source in SOURCES
        assert self.w % self.result_lanes == 0 and self.words % self.result_words == 0
        assert self.collect % self.per_event == 0
        assert self.rows is not None or self.source == "stream"
        assert self.rows is None or (self.rows * self.events_per_row) % self.collect == 0

    @property
    def per_event(self) -> int:
        """Results completed together (one per group of `result_lanes` lanes)."""
        return self.w // self.result_lanes

    @property
    def events_per_row(self) -> int:
        return (self.words // self.result_words) * self.per_event

    @property
    def vec_shape(self) -> Shape:
        return shape_for(*self.vec_range)

    @property
    def row_shape(self) -> Shape:
        return shape_for(*self.row_range)

    def leaf_bound(self) -> tuple[int, int]:
        """Bounds (lo, hi) of one lane result."""
        if self.op == "sqdiff":
            mag = max(abs(self.row_range[0] - self.vec_range[1]), abs(self.row_range[1] - self.vec_range[0]))
            return 0, mag * mag
        ends = [x * y for x in self.row_range for y in self.vec_range]
        return min(ends), max(ends)

    def result_bound(self) -> tuple[int, int]:
        n = self.result_lanes * self.result_words
        lo, hi = self.leaf_bound()
        return n * lo, n * hi

    def structure_features(self) -> dict[str, float]:
        """The engine's LUT-heavy datapath widths (resource features of the PEs built on it): lane
        subtractor bits (squared differences; products sit in DSPs), adder-tree output bits (one tree
        per result group, lanes' results growing one bit per level), accumulator bits (adder and
        first-word multiplexer per group), and the bits of the vector file's load/rotate multiplexer
        (absent when the vector is one word: the file is a register)."""
        leaf = shape_for(*self.leaf_bound()).width
        lo, hi = self.row_range[0] - self.vec_range[1], self.row_range[1] - self.vec_range[0]
        return {
            "sub_bits": self.w * shape_for(lo, hi).width if self.op == "sqdiff" else 0,
            "tree_bits": self.per_event * adder_tree_bits(self.result_lanes, leaf),
            "acc_bits": self.per_event * shape_for(*self.result_bound()).width,
            "rotate_bits": self.w * self.vec_shape.width if self.words > 1 else 0,
        }

    def depth(self) -> int:
        """Clock edges, the issuing edge included, until a result whose last word was issued is in
        the output register (so a consumer sees it `depth()` cycles after the issue cycle)."""
        return (1 if self.source == "memory" else 0) + 3 + tree_depth(self.result_lanes)


class Sweep:
    """Builds the engine into a PE's module; the PE connects its streams to the attributes below.

    Inputs (driven by the PE): `load_valid`, `load_word`, `load_tag`; `fill_valid`, `fill_word`
    (memory source); `row_valid`, `row_word`, `row_last` (stream source). Outputs: `load_ready`,
    `fill_ready`, `row_ready`, and the output register `out_valid`, `out_word` (`collect`
    post-processed results), `out_last` (last result of a sweep), `out_tag` (the tag given with
    the swept vector).
    """

    def __init__(self, spec: SweepSpec, post: Callable[[Value], Value], post_shape, name: str = "sweep"):
        self.spec = spec
        self.post = post
        self.post_shape = post_shape
        self.name = name
        s = spec
        vec_word = data.ArrayLayout(s.vec_shape, s.w)
        row_word = data.ArrayLayout(s.row_shape, s.w)
        self.load_valid, self.load_ready = Signal(), Signal()
        self.load_word = Signal(vec_word)
        self.load_tag = Signal(max(1, s.tag_bits))
        self.fill_valid, self.fill_ready = Signal(), Signal()
        self.fill_word = Signal(row_word)
        self.row_valid, self.row_ready, self.row_last = Signal(), Signal(), Signal()
        self.row_word = Signal(row_word)
        self.out_valid, self.out_last = Signal(), Signal()
        self.out_word = Signal(data.ArrayLayout(post_shape, s.collect))
        self.out_tag = Signal(max(1, s.tag_bits))

    def take_rows(self, m: Module, rows) -> None:
        """Take the rows from the stream `rows` (valid, ready, payload): into the memory once
        (memory source) or for every sweep (stream source; a fixed count of `rows` per sweep)."""
        if self.spec.source == "memory":
            valid, word, ready = self.fill_valid, self.fill_word, self.fill_ready
        else:
            valid, word, ready = self.row_valid, self.row_word, self.row_ready
        m.d.comb += [valid.eq(rows.valid), word.eq(rows.payload), rows.ready.eq(ready)]

    def build(self, m: Module, en: Value) -> None:
        s = self.spec
        pipe = Pipe(m, en)
        memory = s.source == "memory"
        filling = Signal(init=int(memory), name=f"{self.name}_filling")
        loading = Signal(init=1, name=f"{self.name}_loading")

        # FILL: the memory is written once, row-major, `words` words per row.
        if memory:
            depth = s.rows * s.words
            mem = Memory(shape=data.ArrayLayout(s.row_shape, s.w), depth=depth, init=[], attrs=dict(s.ram_attrs))
            m.submodules[f"{self.name}_mem"] = mem
            wport, rport = mem.write_port(), mem.read_port()
            fill_addr = Signal(range(max(2, depth)), name=f"{self.name}_fill_addr")
            m.d.comb += [
                self.fill_ready.eq(filling),
                wport.addr.eq(fill_addr),
                wport.data.eq(self.fill_word),
                wport.en.eq(self.fill_valid & filling),
            ]
            with m.If(self.fill_valid & filling):
                m.d.sync += fill_addr.eq(fill_addr + 1)
                with m.If(fill_addr == depth - 1):
                    m.d.sync += [fill_addr.eq(0), filling.eq(0)]

        # LOAD: the vector's words enter the rotating register file.
        load_k = Signal(range(max(2, s.words)), name=f"{self.name}_load_k")
        tag = Signal(max(1, s.tag_bits), name=f"{self.name}_tag")
        load = Signal(name=f"{self.name}_load")
        m.d.comb += [self.load_ready.eq(loading & ~filling & en), load.eq(self.load_valid & self.load_ready)]
        with m.If(load):
            m.d.sync += load_k.eq(load_k + 1)
            with m.If(load_k == s.words - 1):
                m.d.sync += [load_k.eq(0), loading.eq(0), tag.eq(self.load_tag)]

        # SWEEP: issue every word of every row once.
        sweeping = ~loading & ~filling
        issue = Signal(name=f"{self.name}_issue")
        k = Signal(range(max(2, s.words)), name=f"{self.name}_k")
        gw = Signal(range(max(2, s.result_words)), name=f"{self.name}_gw")
        n_ev = s.collect // s.per_event
        ev = Signal(range(max(2, n_ev)), name=f"{self.name}_ev")
        row_end, group_end, emit, last = Signal(), Signal(), Signal(), Signal()
        m.d.comb += [
            row_end.eq(k == s.words - 1),
            group_end.eq(gw == s.result_words - 1),
            emit.eq(group_end & (ev == n_ev - 1)),
        ]
        if memory:
            r = Signal(range(max(2, s.rows)), name=f"{self.name}_r")
            addr = Signal(range(max(2, depth)), name=f"{self.name}_addr")
            m.d.comb += [
                issue.eq(sweeping & en),
                last.eq(row_end & (r == s.rows - 1)),
                rport.addr.eq(addr),
                rport.en.eq(en),
            ]
            with m.If(issue):
                m.d.sync += addr.eq(Mux(last, 0, addr + 1))
                with m.If(row_end):
                    m.d.sync += r.eq(Mux(last, 0, r + 1))
            row_data = rport.data
        else:
            m.d.comb += [self.row_ready.eq(sweeping & en), issue.eq(self.row_valid & self.row_ready)]
            if s.rows is None:
                m.d.comb += last.eq(row_end & self.row_last)
            else:
                r = Signal(range(max(2, s.rows)), name=f"{self.name}_r")
                m.d.comb += last.eq(row_end & (r == s.rows - 1))
                with m.If(issue & row_end):
                    m.d.sync += r.eq(Mux(last, 0, r + 1))
            row_data = self.row_word
        with m.If(issue):
            m.d.sync += [k.eq(Mux(row_end, 0, k + 1)), gw.eq(Mux(group_end, 0, gw + 1))]
            with m.If(group_end):
                m.d.sync += ev.eq(Mux(emit, 0, ev + 1))
            with m.If(last):
                m.d.sync += loading.eq(1)

        side = Cat(issue, gw == 0, group_end, emit, last, tag)
        if memory:
            side = pipe.reg(side, name=f"{self.name}_rd_side")
        consume = side[0] & en

        # The vector file: shift on load (new word at the tail) and on consume (head to the tail).
        vec = [Signal(data.ArrayLayout(s.vec_shape, s.w), name=f"{self.name}_vec{i}") for i in range(s.words)]
        with m.If(load | consume):
            m.d.sync += [vec[i].eq(vec[i + 1]) for i in range(s.words - 1)]
            m.d.sync += vec[-1].eq(Mux(load, self.load_word, vec[0]))
        head = vec[0]

        rows_l = [row_data[i] for i in range(s.w)]
        vec_l = [head[i] for i in range(s.w)]
        if s.op == "sqdiff":
            leaves = squared_diffs(pipe, rows_l, vec_l, s.row_range, s.vec_range, name=f"{self.name}_sq")
        else:
            leaves = products(pipe, rows_l, vec_l, s.row_range, s.vec_range, name=f"{self.name}_mul")
        side = pipe.delay(side, 2, name=f"{self.name}_op_side")
        sums = [
            add_tree(pipe, leaves[g * s.result_lanes : (g + 1) * s.result_lanes], name=f"{self.name}_t{g}_")
            for g in range(s.per_event)
        ]
        side = pipe.delay(side, tree_depth(s.result_lanes), name=f"{self.name}_tree_side")
        valid, first, gend, emit_d, last_d, tag_d = side[0], side[1], side[2], side[3], side[4], side[5:]

        # Accumulate over the words of a result; collect post-processed results; output register.
        acc_shape = shape_for(*s.result_bound())
        col_new = []
        for g, partial in enumerate(sums):
            acc = Signal(acc_shape, name=f"{self.name}_acc{g}")
            total = Signal(acc_shape, name=f"{self.name}_total{g}")
            m.d.comb += total.eq(partial + Mux(first, 0, acc))
            with m.If(en & valid):
                m.d.sync += acc.eq(total)
            col_new.append(self.post(total))
        col = [Signal(self.post_shape, name=f"{self.name}_col{i}") for i in range(s.collect)]
        col_new = col[s.per_event :] + col_new
        with m.If(en):
            m.d.sync += self.out_valid.eq(valid & emit_d)
            with m.If(valid & gend):
                m.d.sync += [c.eq(v) for c, v in zip(col, col_new)]
            with m.If(valid & emit_d):
                m.d.sync += [self.out_word[i].eq(v) for i, v in enumerate(col_new)]
                m.d.sync += [self.out_last.eq(last_d), self.out_tag.eq(tag_d)]
