"""A testbench memory in RTL: one word array behind several AXI4 slave ports, with latency and
random stalls, loaded and read through a backdoor port.

Why in RTL and not a Python bus model: a graph query takes tens of thousands of cycles on four
or more AXI ports; Python slaves woken every cycle would make each query take seconds, so the
whole-accelerator benches (`sim/tb_falcon.py`) simulate the memory inside Verilator and cocotb
only loads the image, programs the registers, waits for the interrupt and reads the results.

Read ports: an AR handshake at cycle a puts the request in a queue (`queue_depth`, 64 by default); its first beat is
presented at cycle a + `latency` (or right after the previous request's last beat), then one
beat per cycle — the memory the cycle model assumes (`fanns.model.graph.qpp`, latency in
`MemorySystem.latency_cycles` minus the read master's own pipeline). `rready` low holds the beat.
Write port: W beats follow their AW in order (byte strobes honoured); the response comes
`latency` cycles after the last beat. With `stall` = p > 0 every ready/valid the memory drives
(ARREADY, RVALID, AWREADY, WREADY) drops in a cycle with probability p/256 (one 32-bit LFSR per
channel, fixed seeds), which exercises back-pressure and bubbles in every master. Addresses wrap
at the memory size; ids and responses are always 0 / OKAY.

Channels (`banks` > 1, the memory split into equal address ranges, one per memory channel): with
`shared` high, every channel moves at most one beat per cycle — a read beat presented or a write
beat taken — among all ports that want it in that cycle (round robin), as a board's memory
channel is shared by every master mapped to it (a DDR4 channel of the U250 moves 19.25 GB/s:
one 64-byte beat per cycle at 300 MHz). With `shared` low every port runs at one beat per cycle
on its own (the memory of the single-QPP cycle model's default). Writes count as the channel's
beats too (reads and writes share a DDR bus).

Metered (`metered`, one read port): the read port moves a beat only in a cycle whose `link_grant`
is high, and shows in `link_want` that it would move one: a bench puts several memories behind
one link of limited bandwidth (`meter_link`: the host memory of a design whose PQ channels each read
host memory on a port of their own, all over one PCIe link).

`latency`, `stall` and `shared` are settings, registered inside: a change takes effect one cycle
later. So no logic of a compiled bench (`fanns.tools.vmodel`) hangs combinationally on a top-level
input, which Verilator re-evaluates on every evaluation, both clock edges.

The word array itself is the Verilog module `fanns_sim_ram` (`sim/compiled/fanns_sim_ram.v`,
instantiated, its text a source of every bench: `ram_sources`), not an Amaranth `Memory`, whose
conversion grows faster than its depth (a 32,768-word memory took 125 s).
"""

from __future__ import annotations

import re

from amaranth import Cat, ClockSignal, Const, Instance, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from fanns.hdl.bus import axi4_signature
from fanns.paths import shared_dir

ADDR_BITS = 64
QUEUE_DEPTH = 64
LFSR_TAPS = 0x80200003  # x^32 + x^22 + x^2 + x + 1 (maximal length, Galois form)
RAM_MODULE = "fanns_sim_ram"


def ram_sources() -> dict[str, str]:
    """The Verilog of the word array every `SimMemory` instantiates, as bench sources (file name
    -> text): a bench with a SimMemory builds with these beside its own."""
    name = f"{RAM_MODULE}.v"
    return {name: (shared_dir("sim") / "compiled" / name).read_text()}


_ZERO_INIT = re.compile(
    r"(?P<indent>[ \t]*)(?P<mem>[\w\\$.]+)\[0\] = (?P<bits>\d+)'h0+;\n(?:[ \t]*(?P=mem)\[\d+\] = (?P=bits)'h0+;\n)+"
)


def zero_init_loops(verilog: str) -> str:
    """Replace the word-by-word zero initialisation Amaranth emits for a memory (one line per
    word: megabytes for the bench memory, minutes of Verilator compile) by a loop."""

    def loop(match: re.Match) -> str:
        n = match.group(0).count("\n")
        ind, mem, bits = match.group("indent"), match.group("mem"), match.group("bits")
        return f"{ind}for (int i = 0; i < {n}; i = i + 1) {mem}[i] = {bits}'h0;\n"

    return _ZERO_INIT.sub(loop, verilog)


class _Ram:
    """The ports of one `fanns_sim_ram`, gathered while `SimMemory` elaborates."""

    def __init__(self, data_bits: int, depth: int):
        self.data_bits, self.depth, self.abits = data_bits, depth, exact_log2(depth)
        self.reads: list[tuple[Signal, Signal, Signal]] = []
        self.waddr, self.wdata = Signal(self.abits), Signal(data_bits)
        self.wen = Signal(data_bits // 8)

    def read_port(self, name: str) -> tuple[Signal, Signal, Signal]:
        """(addr, en, data) of a new synchronous read port."""
        port = (
            Signal(self.abits, name=f"{name}_raddr"),
            Signal(name=f"{name}_ren"),
            Signal(self.data_bits, name=f"{name}_rdata"),
        )
        self.reads.append(port)
        return port

    def instance(self) -> Instance:
        addrs, ens, datas = zip(*self.reads)
        return Instance(
            RAM_MODULE,
            p_WIDTH=self.data_bits,
            p_DEPTH=self.depth,
            p_ABITS=self.abits,
            p_READS=len(self.reads),
            i_clk=ClockSignal(),
            i_raddr=Cat(*addrs),
            i_ren=Cat(*ens),
            o_rdata=Cat(*datas),
            i_waddr=self.waddr,
            i_wdata=self.wdata,
            i_wen=self.wen,
        )


def _lfsr(m: Module, seed: int, name: str) -> Signal:
    reg = Signal(32, init=seed or 1, name=name)
    m.d.sync += reg.eq(Mux(reg[0], (reg >> 1) ^ LFSR_TAPS, reg >> 1))
    return reg


class SimMemory(wiring.Component):
    """`depth` words of `data_bits` in `banks` channels; AXI4 read slaves `read_ports`, write slaves `write_ports`."""

    def __init__(
        self,
        data_bits: int,
        depth: int,
        read_ports: list[str],
        write_ports: list[str],
        banks: int = 1,
        queue_depth: int = QUEUE_DEPTH,
        seed: int = 0x1234567,
        metered: bool = False,
    ):
        """`queue_depth`: requests each port holds in flight; `seed`: of the stall LFSRs (vary it
        between instances so their stalls are not the same pattern); `metered`: the read port waits
        for `link_grant` (module docstring)."""
        if metered and len(read_ports) != 1:
            raise ValueError("a metered memory has one read port")
        self.metered = metered
        self.data_bits, self.depth, self.banks = data_bits, depth, banks
        self.queue_depth, self.seed = queue_depth, seed
        self.read_ports, self.write_ports = list(read_ports), list(write_ports)
        exact_log2(depth)
        exact_log2(banks)
        members = {
            "bd_addr": In(range(depth)),
            "bd_wdata": In(data_bits),
            "bd_we": In(1),
            "bd_rdata": Out(data_bits),
            "latency": In(16, init=1),
            "stall": In(8),
            "shared": In(1),
        }
        if metered:
            members |= {"link_want": Out(1), "link_grant": In(1)}
        members |= {p: In(axi4_signature(ADDR_BITS, data_bits, write=False)) for p in read_ports}
        members |= {p: In(axi4_signature(ADDR_BITS, data_bits, read=False)) for p in write_ports}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        ram = _Ram(self.data_bits, self.depth)
        word_shift = exact_log2(self.data_bits // 8)
        abits = ram.abits
        now = Signal(32)
        m.d.sync += now.eq(now + 1)
        # the settings, registered: no logic hangs on a top-level input of a compiled bench, whose
        # model re-evaluates such logic on every evaluation (both clock edges)
        latency, stall, shared = Signal(16, init=1), Signal(8), Signal()
        m.d.sync += [latency.eq(self.latency), stall.eq(self.stall), shared.eq(self.shared)]
        seed = self.seed

        def stalled(name: str):
            nonlocal seed
            seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
            return _lfsr(m, seed, f"lfsr_{name}")[:8] < stall

        bd_addr, bd_en, bd_data = ram.read_port("bd")
        m.d.comb += [bd_addr.eq(self.bd_addr), bd_en.eq(1), self.bd_rdata.eq(bd_data)]

        bank_shift = abits - exact_log2(self.banks)
        wants: list[tuple[Signal, Signal]] = []  # per port: (wants a beat this cycle, its channel)
        grants: list[Signal] = []

        def port_beat(name: str, want, word) -> Signal:
            """Register a port's beat request; the returned signal is high when it may move the beat."""
            bank = Signal(range(self.banks), name=f"{name}_bank")
            grant = Signal(name=f"{name}_grant")
            m.d.comb += bank.eq(word[bank_shift:] if self.banks > 1 else 0)
            wants.append((want, bank))
            grants.append(grant)
            return grant

        req = data.StructLayout({"addr": abits, "len": 8, "at": 32})
        for name in self.read_ports:
            bus = getattr(self, name)
            m.submodules[f"{name}_q"] = q = SyncFIFO(width=req.size, depth=self.queue_depth)
            ar_stall, r_stall = stalled(f"{name}_ar"), stalled(f"{name}_r")
            w = data.View(req, q.w_data)
            m.d.comb += [
                bus.arready.eq(q.w_rdy & ~ar_stall),
                q.w_en.eq(bus.arvalid & bus.arready),
                w.addr.eq(bus.araddr[word_shift:]),
                w.len.eq(bus.arlen),
                w.at.eq(now + latency - 1),
            ]
            head = data.View(req, q.r_data)
            active = Signal(name=f"{name}_active")
            cur = Signal(abits, name=f"{name}_cur")
            rem = Signal(8, name=f"{name}_rem")
            src_addr = Mux(active, cur, head.addr)
            src_rem = Mux(active, rem, head.len)
            avail = active | (q.r_rdy & (now >= head.at))
            fetch = Signal(name=f"{name}_fetch")
            want = Signal(name=f"{name}_want")
            port_addr, port_en, port_data = ram.read_port(name)
            m.d.comb += want.eq(avail & (~bus.rvalid | bus.rready) & ~r_stall)
            grant = port_beat(name, want, src_addr)
            if self.metered:
                m.d.comb += self.link_want.eq(want)
                grant = grant & self.link_grant
            m.d.comb += [
                fetch.eq(want & grant),
                port_addr.eq(src_addr),
                port_en.eq(fetch),
                bus.rdata.eq(port_data),
                bus.rid.eq(0),
                bus.rresp.eq(0),
                q.r_en.eq(fetch & ~active),
            ]
            with m.If(fetch):
                m.d.sync += [
                    bus.rvalid.eq(1),
                    bus.rlast.eq(src_rem == 0),
                    active.eq(src_rem != 0),
                    cur.eq(src_addr + 1),
                    rem.eq(src_rem - 1),
                ]
            with m.Elif(bus.rready):
                m.d.sync += bus.rvalid.eq(0)

        m.d.comb += [
            ram.waddr.eq(self.bd_addr),
            ram.wdata.eq(self.bd_wdata),
            ram.wen.eq(Mux(self.bd_we, (1 << (self.data_bits // 8)) - 1, 0)),
        ]
        for name in self.write_ports:
            bus = getattr(self, name)
            aw_l = data.StructLayout({"addr": abits, "len": 8})
            m.submodules[f"{name}_aw"] = awq = SyncFIFO(width=aw_l.size, depth=self.queue_depth)
            m.submodules[f"{name}_b"] = bq = SyncFIFO(width=32, depth=self.queue_depth)
            aw_stall, w_stall = stalled(f"{name}_aw"), stalled(f"{name}_w")
            aw = data.View(aw_l, awq.w_data)
            m.d.comb += [
                bus.awready.eq(awq.w_rdy & ~aw_stall),
                awq.w_en.eq(bus.awvalid & bus.awready),
                aw.addr.eq(bus.awaddr[word_shift:]),
                aw.len.eq(bus.awlen),
            ]
            head = data.View(aw_l, awq.r_data)
            beat = Signal(8, name=f"{name}_beat")
            w_hs = bus.wvalid & bus.wready
            w_want = Signal(name=f"{name}_want")
            w_word = Signal(abits, name=f"{name}_word")
            m.d.comb += [w_want.eq(bus.wvalid & awq.r_rdy & bq.w_rdy & ~w_stall), w_word.eq(head.addr + beat)]
            grant = port_beat(name, w_want, w_word)
            m.d.comb += [bus.wready.eq(awq.r_rdy & bq.w_rdy & ~w_stall & grant)]
            with m.If(w_hs & ~self.bd_we):
                m.d.comb += [ram.waddr.eq(head.addr + beat), ram.wdata.eq(bus.wdata), ram.wen.eq(bus.wstrb)]
            last = beat == head.len
            with m.If(w_hs):
                m.d.sync += beat.eq(Mux(last, 0, beat + 1))
            m.d.comb += [awq.r_en.eq(w_hs & last), bq.w_en.eq(w_hs & last), bq.w_data.eq(now + latency)]
            m.d.comb += [
                bus.bvalid.eq(bq.r_rdy & (now >= bq.r_data)),
                bus.bid.eq(0),
                bus.bresp.eq(0),
                bq.r_en.eq(bus.bvalid & bus.bready),
            ]
        self._arbitrate(m, wants, grants, shared)
        m.submodules.ram = ram.instance()
        return m

    def _arbitrate(self, m: Module, wants: list, grants: list, shared: Signal) -> None:
        """Per channel, grant one of the ports that want a beat, round robin from the port after
        the last one granted (every port is granted when `shared` is low)."""
        n = len(wants)
        for b in range(self.banks):
            req = Signal(n, name=f"bank{b}_req")
            last = Signal(range(n), name=f"bank{b}_last")
            m.d.comb += req.eq(Cat(*(w & (bank == b) for w, bank in wants)))
            above = Signal(n, name=f"bank{b}_above")
            m.d.comb += above.eq(req & ~((Const(2, n + 1) << last) - 1)[:n])
            pool = Signal(n, name=f"bank{b}_pool")
            m.d.comb += pool.eq(Mux(above.any(), above, req))
            onehot = Signal(n, name=f"bank{b}_onehot")
            m.d.comb += onehot.eq(pool & (~pool + 1)[:n])
            for i, (_, bank) in enumerate(wants):
                with m.If(bank == b):
                    m.d.comb += grants[i].eq(~shared | onehot[i])
                with m.If(shared & onehot[i]):
                    m.d.sync += last.eq(i)


def meter_link(m: Module, memories: list[SimMemory], rate: Signal, name: str = "link") -> None:
    """Share one link among the metered `memories`: it earns `rate` / 256 beats a cycle (0: no
    limit, every beat granted), holding at most one beat per memory and a fraction of the next (so a
    busy link loses no fraction to the cap), and grants the whole beats it holds to
    the memories that want one, round robin (from the memory after the last one granted). A memory's
    beats then come at most at the link's rate shared with the others: the PCIe link that all of a
    design's host ports cross."""
    n = len(memories)
    cap = 256 * n + 255
    tokens = Signal(range(cap + 1), name=f"{name}_tokens")
    start = Signal(range(max(n, 2)), name=f"{name}_start")
    held = Signal(range(n + 1), name=f"{name}_held")
    used = Signal(range(n + 1), name=f"{name}_used")
    grants = [Signal(name=f"{name}_grant{i}") for i in range(n)]
    m.d.comb += held.eq(tokens >> 8)
    with m.Switch(start):
        for r in range(n):
            with m.Case(r):
                before = Const(0, range(n + 1))
                for i in range(n):
                    k = (r + i) % n
                    m.d.comb += grants[k].eq((rate == 0) | (before < held))
                    with m.If(memories[k].link_want & grants[k]):
                        m.d.sync += start.eq((k + 1) % n)  # the last one granted in this order wins
                    before = before + memories[k].link_want
    m.d.comb += used.eq(sum((mem.link_want & g for mem, g in zip(memories, grants)), Const(0, range(n + 1))))
    for mem, g in zip(memories, grants):
        m.d.comb += mem.link_grant.eq(g)
    earned = Signal(range(cap + 2**16), name=f"{name}_earned")
    m.d.comb += earned.eq(tokens + rate - (used << 8))
    with m.If(rate != 0):
        m.d.sync += tokens.eq(Mux(earned > cap, cap, earned))


def connect_slave(m: Module, master, slave) -> None:
    """Wire the members `slave` has (a read or write half) to the same members of `master`."""
    for name, member in slave.signature.members.items():
        s, mst = getattr(slave, name), getattr(master, name)
        m.d.comb += s.eq(mst) if member.flow == In else mst.eq(s)
