"""The run controller of the IVF-PQ accelerator (`fanns.arch.ivfpq.top`): parameter checks, the
index load at the first run, per-query read and write commands, cycle counters and status.

Split from the top level, which wires the stages and memory ports; the behaviour is described in
the top level's docstring.
"""

from __future__ import annotations

from amaranth import Array, Cat, Module, Signal

from fanns.arch.ivfpq.hw import ADDR_BITS, RESULT_BITS, SECTIONS, IvfPqHw
from fanns.arch.ivfpq.prefetch import DESCRIPTOR_WORDS, Prefetch


def controller(
    hw: IvfPqHw,
    m: Module,
    csr,
    interrupt,
    rd,
    wr,
    front,
    lut,
    fetch,
    res,
    merge,
    tags,
    load_strobes,
    table_cmds,
    loading,
    streams,
    pre: Prefetch | None = None,
) -> None:
    """The run controller (the top level's docstring): checks the parameters, loads the index on
    chip at the first run, issues the per-query read and write commands, counts the cycles and
    drives the status registers. `table_cmds`: per PQ reader (table command or None, error, its
    base-address register, the Fetcher's base input); `streams`: (channel, address register) of
    every image read once per query; `pre`: a host-memory design's prefetch command (`mode` 2: the
    descriptors at `cells_addr` are read as one cell list into its walker; the run ends when every
    copy is written)."""
    sections = hw.sections()
    load_total = (
        sum(hw.section_bytes(s) * 8 // hw.section_word_bits(s) for s in sections)
        + sum(tcmd is not None for tcmd, _, _, _ in table_cmds) * hw.nlist
    )
    io_align, pq_align = hw.io_beat_bytes - 1, hw.pq_beat_bytes - 1

    nq, nprobe, k = Signal(32), Signal(range(hw.nprobe + 1)), Signal(range(hw.k + 1))
    q_addr, r_addr, c_addr, s_addr = (Signal(ADDR_BITS, name=f"{n}_addr") for n in ("q", "r", "c", "s"))
    step = Signal()  # a step-wise run: per query its query, cell list and seeds are read
    part = Signal(range(3))  # which of them the next read command fetches
    bases = [Signal(ADDR_BITS, name=reg.replace("_addr", "_base")) for _, _, reg, _ in table_cmds]  # one per PQ reader
    loaded, bad, axi_err, busy = Signal(), Signal(), Signal(), Signal()
    run_cycles, cycles, load_cycles = Signal(64), Signal(64), Signal(64)
    load_count = Signal(range(load_total + 1))
    m.d.comb += [
        front.nprobe.eq(nprobe),
        front.mode.eq(step),
        merge.mode.eq(step),
        res.k.eq(k),
        res.nq.eq(nq),
        res.now.eq(run_cycles),
        csr.ap_idle.eq(~busy),
        interrupt.eq(csr.gie & csr.isr.any()),
        csr.cycles.eq(cycles),
        csr.status.eq(Cat(loaded, bad, axi_err)),
        csr.load_cycles.eq(load_cycles),
        csr.first_cycles.eq(res.first),
        csr.last_cycles.eq(res.latest),
        csr.max_nprobe.eq(hw.nprobe),
        csr.max_k.eq(hw.k),
        csr.dim.eq(hw.d),
        csr.cells.eq(hw.nlist),
    ]
    for (_, _, _, port), base in zip(table_cmds, bases):
        m.d.comb += port.eq(base)
    with m.If(busy):
        m.d.sync += run_cycles.eq(run_cycles + 1)
    # Every source counts the words it put on chip this cycle (the I/O router: one per splitter).
    m.d.sync += load_count.eq(load_count + sum(load_strobes))
    errors = [rd.error, *(err for _, err, _, _ in table_cmds), *(ch.error for ch, _ in streams)]
    errors += [] if pre is None else pre.errors
    if hw.lut_fetched:  # latched as the run starts, like the streamed channels' bases
        errors.append(lut.lutc_error)
        with m.If(~busy):
            m.d.sync += lut.lutc_base.eq(csr.lutc_addr)
    running = Signal()  # the RUN state: streamed-centroid channels read their image per query
    for ch, reg in streams:
        base = Signal(ADDR_BITS, name=reg.replace("_addr", "_base"))
        m.d.comb += [ch.base.eq(base), ch.nq.eq(nq), ch.run.eq(running), ch.clear.eq(res.clear)]
        with m.If(~busy):  # latched as the run starts
            m.d.sync += base.eq(getattr(csr, reg))
    with m.If(Cat(*errors).any() | (wr.done.valid & wr.done.payload.error)):
        m.d.sync += axi_err.eq(1)
    m.d.comb += wr.done.ready.eq(1)

    addr_regs = {s: getattr(csr, hw.section_address_register(s)) for s in sections}
    aligned = [(csr.query_addr & io_align) == 0, (csr.result_addr & io_align) == 0]
    aligned += [(a & io_align) == 0 for a in addr_regs.values()]
    aligned += [(getattr(csr, reg) & pq_align) == 0 for _, _, reg, _ in table_cmds]
    aligned += [(getattr(csr, reg) & io_align) == 0 for _, reg in streams]
    aligned += [(csr.lutc_addr & io_align) == 0] if hw.lut_fetched else []
    aligned += [(csr.mode == 0) | (((csr.cells_addr | csr.seeds_addr) & io_align) == 0)]
    params_ok = (csr.nprobe >= 1) & (csr.nprobe <= hw.nprobe) & (csr.k >= 1) & (csr.k <= hw.k) & Cat(*aligned).all()

    sec = Signal(range(len(sections) + 1))
    tables_sent = Signal(len(table_cmds))
    reads, writes, dones = Signal(32), Signal(32), Signal(32)
    m.d.comb += res.clear.eq(0)
    restart = Signal()  # auto_restart was set when the last run finished
    sent = Signal()  # a prefetch run's descriptor read was issued
    prefetch = Signal()  # this run is a prefetch (`mode` 2 of a host-memory design)

    def next_run(is_prefetch) -> None:
        if pre is None:
            m.next = "RUN"
            return
        with m.If(is_prefetch):
            m.next = "PREFETCH"
        with m.Else():
            m.next = "RUN"

    with m.FSM():
        with m.State("IDLE"):
            with m.If(csr.ap_start | restart):
                m.d.sync += [
                    restart.eq(0),
                    nq.eq(csr.nq),
                    nprobe.eq(csr.nprobe),
                    k.eq(csr.k),
                    q_addr.eq(csr.query_addr),
                    r_addr.eq(csr.result_addr),
                    c_addr.eq(csr.cells_addr),
                    s_addr.eq(csr.seeds_addr),
                    step.eq(csr.mode != 0 if pre is None else csr.mode == 1),
                    part.eq(0),
                    *(b.eq(getattr(csr, reg)) for (_, _, reg, _), b in zip(table_cmds, bases)),
                    run_cycles.eq(0),
                    sec.eq(0),
                    tables_sent.eq(0),
                    reads.eq(0),
                    writes.eq(0),
                    dones.eq(0),
                    bad.eq(~params_ok),
                    busy.eq(params_ok),
                ]
                m.d.comb += res.clear.eq(1)
                if pre is not None:
                    m.d.comb += pre.walker.clear.eq(1)
                    m.d.sync += [sent.eq(0), prefetch.eq(csr.mode == 2)]
                with m.If(~params_ok):
                    m.next = "DONE"
                with m.Elif(loaded):
                    next_run(csr.mode == 2)
                with m.Else():
                    m.d.sync += loading.eq(1)
                    m.next = "LOAD"
        with m.State("LOAD"):
            roms_sent = sec == len(sections)
            m.d.comb += [
                rd.cmd.valid.eq(~roms_sent & tags.w_rdy),
                rd.cmd.payload.addr.eq(Array(addr_regs[s] for s in sections)[sec]),
                rd.cmd.payload.len.eq(Array(hw.section_bytes(s) for s in sections)[sec]),
                tags.w_data.eq(Array(SECTIONS.index(s) for s in sections)[sec]),
                tags.w_en.eq(rd.cmd.valid & rd.cmd.ready),
            ]
            with m.If(rd.cmd.valid & rd.cmd.ready):
                m.d.sync += sec.eq(sec + 1)
            for c, (tcmd, _, _, _) in enumerate(table_cmds):
                if tcmd is None:
                    continue
                m.d.comb += [
                    tcmd.valid.eq(~tables_sent[c]),
                    tcmd.payload.addr.eq(bases[c]),
                    tcmd.payload.len.eq(hw.table_bytes()),
                ]
                with m.If(tcmd.valid & tcmd.ready):
                    m.d.sync += tables_sent[c].eq(1)
            with m.If(load_count == load_total):
                m.d.sync += [loaded.eq(1), loading.eq(0), load_cycles.eq(run_cycles)]
                next_run(prefetch)
        with m.State("RUN"):
            m.d.comb += [
                running.eq(1),
                rd.cmd.valid.eq((reads != nq) & tags.w_rdy),
                rd.cmd.payload.addr.eq(Array([q_addr, c_addr, s_addr])[part]),
                rd.cmd.payload.len.eq(Array([hw.d * hw.elem_bits // 8, hw.cell_stride, k * (RESULT_BITS // 8)])[part]),
                tags.w_data.eq(Array(SECTIONS.index(s) for s in ("query", "cells", "seeds"))[part]),
                tags.w_en.eq(rd.cmd.valid & rd.cmd.ready),
                wr.cmd.valid.eq(writes != nq),
                wr.cmd.payload.addr.eq(r_addr),
                wr.cmd.payload.len.eq(k * (RESULT_BITS // 8)),
            ]
            with m.If(rd.cmd.valid & rd.cmd.ready):
                with m.Switch(part):
                    with m.Case(0):
                        m.d.sync += q_addr.eq(q_addr + hw.query_stride)
                    with m.Case(1):
                        m.d.sync += c_addr.eq(c_addr + hw.cell_stride)
                    with m.Case(2):
                        m.d.sync += s_addr.eq(s_addr + hw.result_stride)
                with m.If(~step | (part == 2)):
                    m.d.sync += [reads.eq(reads + 1), part.eq(0)]
                with m.Else():
                    m.d.sync += part.eq(part + 1)
            with m.If(wr.cmd.valid & wr.cmd.ready):
                m.d.sync += [writes.eq(writes + 1), r_addr.eq(r_addr + hw.result_stride)]
            with m.If(wr.done.valid):
                m.d.sync += dones.eq(dones + 1)
            with m.If((dones == nq) | ((dones == nq - 1) & wr.done.valid)):
                m.next = "DONE"
        if pre is not None:
            with m.State("PREFETCH"):
                m.d.comb += [
                    pre.active.eq(1),
                    rd.cmd.valid.eq(~sent & (nq != 0) & tags.w_rdy),
                    rd.cmd.payload.addr.eq(c_addr),
                    rd.cmd.payload.len.eq(nq * DESCRIPTOR_WORDS * 4),
                    tags.w_data.eq(SECTIONS.index("cells")),
                    tags.w_en.eq(rd.cmd.valid & rd.cmd.ready),
                ]
                with m.If(rd.cmd.valid & rd.cmd.ready):
                    m.d.sync += sent.eq(1)
                with m.If((sent | (nq == 0)) & (pre.walker.taken == nq) & pre.quiet):
                    m.next = "DONE"
        with m.State("DONE"):
            # ap_ctrl_hs: done and ready together (the core takes new arguments when it is done);
            # the interrupt status bits (0 done, 1 ready) of the enabled events
            m.d.comb += [csr.ap_done_set.eq(1), csr.ap_ready_set.eq(1), csr.isr_set.eq(csr.ier)]
            m.d.sync += [busy.eq(0), cycles.eq(run_cycles), restart.eq(csr.auto_restart)]
            m.next = "IDLE"
