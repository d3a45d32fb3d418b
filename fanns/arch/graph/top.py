"""One Falcon query processing pipeline as a kernel: the top level `fanns generate-graph-rtl` emits for
graph designs (across-query designs instantiate it once per pipeline, as compute units).

Ports (CONTRIBUTING.md "Bus interfaces"): `s_axil` (the registers of `QppHw.regmap`: the Xilinx
RTL-kernel layout, ap_ctrl_hs at 0x00, arguments from 0x10), `m_axi_io` (read: queries; write:
results), `m_axi_list` (read: neighbour lists), `m_axi_vec<u>` (read: vectors of BFC unit u) and
`interrupt` (GIE & ISR). A project emits it as an RTL kernel (`fanns.codegen.graph.rtl.verilog`:
`ap_clk`, `ap_rst_n`, `s_axi_control_*`, `m_axi_<role>_*`).

A run (`ap_start`, or a finished run with `auto_restart` set) checks its parameters (l, k, mg, mc
within the hardware's limits, the entry below `nodes`, every address aligned to the bus beat;
otherwise `status.bad_params` and done at once), then processes queries 0 .. nq-1 one after another:
it waits until every BFC unit has finished the previous query and its Bloom filter is clear, reads
the query (its words go to every unit's distance PE), starts the controller
(`fanns.arch.graph.core.QppCore`), issues the write command of the query's result row at once (the
writer takes data only under a command; a row of more keys than one beat holds would otherwise stall
the flush), and writes the row: k keys (``dist << 32 | id``, uint64; all ones when fewer were
found), all-ones keys up to k_max, then the statistics cycles | hops << 32, checks | visited << 32,
groups (uint64 each) and zeros to the row's end (`GraphDesign.result_row_bytes`). `cycles` is the
query's latency: from its start to its k-th key leaving the result queue.
"""

from __future__ import annotations

from amaranth import Array, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.graph.core import QppCore
from fanns.arch.graph.units import BfcUnit, Dispatcher, VectorWords, wire_master
from fanns.design.graph_hw import ADDR_BITS, CSR_ADDR_BITS, QppHw
from fanns.hdl.bus import axi4_signature, axil_signature
from fanns.pe.axil_csr import AxilCsrComponent
from fanns.pe.stream_pack import StreamPackComponent

RESULT_ITEM_BITS = 64
STATS_ITEMS = 4


def broadcast(m: Module, src, payload, dsts: list, name: str) -> None:
    """Copy every item (`payload`) of stream `src` to every stream in `dsts` (a register per item;
    the next item is taken once every destination took the current one)."""
    held = Signal.like(payload, name=f"{name}_held")
    pending = Signal(len(dsts), name=f"{name}_pending")
    free = Cat(*(~pending[i] | d.ready for i, d in enumerate(dsts))).all()
    m.d.comb += src.ready.eq(free)
    for i, d in enumerate(dsts):
        m.d.comb += [d.valid.eq(pending[i]), d.payload.eq(held)]
    with m.If(src.valid & src.ready):
        m.d.sync += [held.eq(payload), pending.eq((1 << len(dsts)) - 1)]
    with m.Else():
        m.d.sync += pending.eq(Cat(*(pending[i] & ~d.ready for i, d in enumerate(dsts))))


def qpp_signature(hw: QppHw) -> wiring.Signature:
    """The ports of one QPP (module docstring), for `FalconQpp` and for the files that describe its
    interfaces without building it (the RTL kernel's packaging)."""
    ports = {
        "s_axil": In(axil_signature(CSR_ADDR_BITS)),
        "m_axi_io": Out(axi4_signature(ADDR_BITS, hw.port_bits)),
        "m_axi_list": Out(axi4_signature(ADDR_BITS, hw.port_bits, write=False)),
        "interrupt": Out(1),
    }
    ports |= {f"m_axi_vec{u}": Out(axi4_signature(ADDR_BITS, hw.port_bits, write=False)) for u in range(hw.units)}
    return wiring.Signature(ports)


class FalconQpp(wiring.Component):
    """The kernel of one QPP (see the module docstring)."""

    def __init__(self, hw: QppHw):
        self.hw = hw
        super().__init__(qpp_signature(hw))

    def elaborate(self, platform):
        hw = self.hw
        d, q, lim = hw.design, hw.design.queues, hw.design.limits
        m = Module()
        m.submodules.csr = csr = AxilCsrComponent(hw.regmap)
        wiring.connect(m, wiring.flipped(self.s_axil), csr.s_axil)
        m.submodules.io_reader = rd = hw.query_reader.instance()
        m.submodules.io_writer = wr = hw.result_writer.instance()
        wire_master(m, self.m_axi_io, rd.m_axi)
        wire_master(m, self.m_axi_io, wr.m_axi)
        m.submodules.dispatcher = disp = Dispatcher(hw)
        wire_master(m, self.m_axi_list, disp.m_axi)
        m.submodules.core = core = QppCore(hw)
        wiring.connect(m, core.cmd, disp.cmd)
        units = []
        for u in range(hw.units):
            unit = BfcUnit(hw)
            m.submodules[f"unit{u}"] = unit
            units.append(unit)
            wire_master(m, getattr(self, f"m_axi_vec{u}"), unit.m_axi)
            wiring.connect(m, getattr(disp, f"u{u}"), unit.tok)
            wiring.connect(m, unit.o, getattr(core, f"u{u}"))

        # Query words to every unit's distance PE.
        m.submodules.query_words = qw = VectorWords(hw)
        wiring.connect(m, rd.o, qw.beats)
        m.d.comb += [qw.cmd.valid.eq(1), qw.cmd.payload.dummy.eq(0)]
        broadcast(m, qw.o, qw.o.payload.data, [unit.q for unit in units], "query")

        # Latched run parameters.
        nq, qi, done_rows = Signal(32), Signal(32), Signal(32)
        q_addr, r_addr = Signal(ADDR_BITS), Signal(ADDR_BITS)
        l, k, mg, mc, entry = (
            Signal.like(core.l),
            Signal.like(core.k),
            Signal.like(core.mg),
            Signal.like(core.mc),
            Signal(32),
        )
        bases = {
            name: Signal(ADDR_BITS, name=name) for c in range(hw.channels) for name in (f"adj_addr{c}", f"vec_addr{c}")
        }
        for c in range(hw.channels):
            m.d.comb += getattr(disp, f"base{c}").eq(bases[f"adj_addr{c}"])
            for unit in units:
                m.d.comb += getattr(unit, f"base{c}").eq(bases[f"vec_addr{c}"])
        m.d.comb += [core.l.eq(l), core.k.eq(k), core.mg.eq(mg), core.mc.eq(mc), core.entry.eq(entry)]

        busy, bad, axi_err = Signal(), Signal(), Signal()
        run_cycles, cycles = Signal(64), Signal(64)
        with m.If(busy):
            m.d.sync += run_cycles.eq(run_cycles + 1)
        m.d.comb += [
            csr.ap_idle.eq(~busy),
            csr.cycles.eq(cycles),
            csr.status.eq(Cat(bad, axi_err)),
            self.interrupt.eq(csr.gie & csr.isr.any()),
        ]
        for name, value in hw.info_values().items():
            m.d.comb += getattr(csr, name).eq(value)
        errors = Cat(rd.error, disp.error, *(u.error for u in units))
        with m.If(errors.any() | (wr.done.valid & wr.done.payload.error)):
            m.d.sync += axi_err.eq(1)
        m.d.comb += wr.done.ready.eq(1)
        with m.If(wr.done.valid):
            m.d.sync += done_rows.eq(done_rows + 1)

        # Units still finishing a query: U QUERY_END tokens per query, one `qend` each.
        owed = Signal(range(2 * hw.units + 1))
        m.d.sync += owed.eq(owed + Mux(core.qe_sent, hw.units, 0) - sum(u.qend for u in units))
        all_idle = Cat(*(u.idle for u in units)).all() & (owed == 0) & ~core.busy

        align = hw.port_bytes - 1
        addrs = [csr.query_addr, csr.result_addr, *(getattr(csr, n) for n in bases)]
        params_ok = (
            (csr.l >= 2)
            & (csr.l <= q.l_max)
            & (csr.k >= 1)
            & (csr.k <= q.k_max)
            & (csr.k <= csr.l)
            & (csr.mg >= 1)
            & (csr.mg <= lim.mg_max)
            & (csr.mc >= 1)
            & (csr.mc <= lim.mc_max)
            & (csr.entry < csr.nodes)
            & Cat(*((a & align) == 0 for a in addrs)).all()
        )
        restart = Signal()  # auto_restart was set when the last run finished
        with m.FSM():
            with m.State("IDLE"):
                with m.If(csr.ap_start | restart):
                    m.d.sync += [
                        restart.eq(0),
                        nq.eq(csr.nq),
                        qi.eq(0),
                        done_rows.eq(0),
                        q_addr.eq(csr.query_addr),
                        r_addr.eq(csr.result_addr),
                        l.eq(csr.l),
                        k.eq(csr.k),
                        mg.eq(csr.mg),
                        mc.eq(csr.mc),
                        entry.eq(csr.entry),
                        *(sig.eq(getattr(csr, name)) for name, sig in bases.items()),
                        run_cycles.eq(0),
                        bad.eq(~params_ok),
                        busy.eq(1),
                    ]
                    m.next = "WAIT"
                    with m.If(~params_ok):
                        m.next = "DONE"
            with m.State("WAIT"):
                with m.If(qi == nq):
                    m.next = "WRITES"
                with m.Elif(all_idle):
                    m.d.comb += [
                        rd.cmd.valid.eq(1),
                        rd.cmd.payload.addr.eq(q_addr),
                        rd.cmd.payload.len.eq(hw.vector_bytes),
                    ]
                    with m.If(rd.cmd.ready):
                        m.d.comb += [core.start.eq(1), disp.clear.eq(1)]
                        m.d.sync += [qi.eq(qi + 1), q_addr.eq(q_addr + d.query_row_bytes)]
                        m.next = "WCMD"
            with m.State("WCMD"):
                # The row's write command goes first: the writer takes data only for a command, and
                # a row of more keys than a beat holds would otherwise stall the result queue's flush.
                m.d.comb += [
                    wr.cmd.valid.eq(1),
                    wr.cmd.payload.addr.eq(r_addr),
                    wr.cmd.payload.len.eq(d.result_row_bytes),
                ]
                with m.If(wr.cmd.ready):
                    m.d.sync += r_addr.eq(r_addr + d.result_row_bytes)
                    m.next = "RUN"
                with m.If(core.done):
                    m.next = "WCMD_DONE"
            with m.State("WCMD_DONE"):
                m.d.comb += [
                    wr.cmd.valid.eq(1),
                    wr.cmd.payload.addr.eq(r_addr),
                    wr.cmd.payload.len.eq(d.result_row_bytes),
                ]
                with m.If(wr.cmd.ready):
                    m.d.sync += r_addr.eq(r_addr + d.result_row_bytes)
                    m.next = "WAIT"
            with m.State("RUN"):
                with m.If(core.done):
                    m.next = "WAIT"
            with m.State("WRITES"):
                with m.If(done_rows == nq):
                    m.next = "DONE"
            with m.State("DONE"):
                # ap_ctrl_hs: done and ready together (the QPP takes new arguments when it is done);
                # the interrupt status bits (0 done, 1 ready) of the enabled events
                m.d.comb += [csr.ap_done_set.eq(1), csr.ap_ready_set.eq(1), csr.isr_set.eq(csr.ier)]
                m.d.sync += [busy.eq(0), cycles.eq(run_cycles), restart.eq(csr.auto_restart)]
                m.next = "IDLE"

        self._results(m, hw, core, disp, wr, k)
        return m

    def _results(self, m: Module, hw: QppHw, core: QppCore, disp: Dispatcher, wr, k) -> None:
        """Result rows (module docstring) through a word packer into the write master."""
        d = hw.design
        items = d.result_row_bytes * 8 // RESULT_ITEM_BITS
        m.submodules.result_pack = pack = StreamPackComponent(RESULT_ITEM_BITS, hw.port_bits // RESULT_ITEM_BITS)
        m.d.comb += [
            wr.i.valid.eq(pack.o.valid),
            wr.i.payload.data.eq(pack.o.payload.data),
            pack.o.ready.eq(wr.i.ready),
        ]
        stats = [Signal(RESULT_ITEM_BITS, name=f"stat{i}") for i in range(STATS_ITEMS)]
        stats_valid = Signal()
        with m.If(core.done):
            m.d.sync += [
                stats[0].eq(Cat(core.cycles, core.hops)),
                stats[1].eq(Cat(disp.checks, core.visited)),
                stats[2].eq(core.groups),
                stats[3].eq(0),
                stats_valid.eq(1),
            ]
        pos = Signal(range(items + 1))
        kmax = d.queues.k_max
        all_ones = (1 << RESULT_ITEM_BITS) - 1
        key = core.res.payload.key
        real = Mux(key == (1 << hw.key_bits) - 1, all_ones, key)
        in_keys = pos < k
        in_stats = (pos >= kmax) & (pos < kmax + STATS_ITEMS)
        stat = Array(stats)[(pos - kmax)[: (STATS_ITEMS - 1).bit_length()]]
        item = Mux(in_keys, real, Mux(pos < kmax, all_ones, Mux(in_stats, stat, 0)))
        row_open = Signal()  # a row starts with its first key (k >= 1), so nothing leaves between rows
        valid = Mux(in_keys, core.res.valid, row_open & Mux(in_stats, stats_valid, 1))
        last = pos == items - 1
        m.d.comb += [
            pack.i.valid.eq(valid),
            pack.i.payload.item.eq(item),
            pack.i.payload.last.eq(last),
            core.res.ready.eq(in_keys & pack.i.ready),
        ]
        with m.If(pack.i.valid & pack.i.ready):
            m.d.sync += [pos.eq(Mux(last, 0, pos + 1)), row_open.eq(~last)]
            with m.If(last):
                m.d.sync += stats_valid.eq(0)
