"""AXI bus signatures, the burst-splitting rule and its RTL, shared by every memory-facing component.

Bus interfaces are Amaranth signatures whose members are the lowercase AXI signal names
(`araddr`, `rvalid`, ...), in the master's view. A component exposes one as a member named by
its role (`m_axi`, `s_axil`), so the Verilog ports are `m_axi__araddr`, ... and a cocotbext-axi
model finds them with ``AxiBus.from_prefix(dut, "m_axi", bus_separator="__")`` (see
CONTRIBUTING.md, "Bus interfaces"). Transfers are INCR bursts of whole data-bus words with a
single ID (responses return in order).

`split_bursts` is the reference of how a (byte address, byte length) transfer becomes bursts:
word-aligned, at most `max_burst` beats, never crossing a 4 KiB boundary. `BurstSplitter` is the
same rule in RTL; the AXI read and write masters use it.
"""

from __future__ import annotations

from amaranth import C, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2, exact_log2

AXI_4K = 4096
AXI_MAX_BURST = 256
BURST_INCR = 0b01
RESP_OKAY = 0b00
RESP_SLVERR = 0b10
CACHE_MODIFIABLE = 0b0011  # normal non-cacheable bufferable, as Xilinx HLS m_axi masters issue


def axi4_signature(
    addr_width: int, data_width: int, id_width: int = 1, read: bool = True, write: bool = True
) -> wiring.Signature:
    """AXI4 full (master view) with the read and/or write channels."""
    members: dict = {}
    if write:
        members |= {
            "awid": Out(id_width),
            "awaddr": Out(addr_width),
            "awlen": Out(8),
            "awsize": Out(3),
            "awburst": Out(2),
            "awcache": Out(4),
            "awprot": Out(3),
            "awvalid": Out(1),
            "awready": In(1),
            "wdata": Out(data_width),
            "wstrb": Out(data_width // 8),
            "wlast": Out(1),
            "wvalid": Out(1),
            "wready": In(1),
            "bid": In(id_width),
            "bresp": In(2),
            "bvalid": In(1),
            "bready": Out(1),
        }
    if read:
        members |= {
            "arid": Out(id_width),
            "araddr": Out(addr_width),
            "arlen": Out(8),
            "arsize": Out(3),
            "arburst": Out(2),
            "arcache": Out(4),
            "arprot": Out(3),
            "arvalid": Out(1),
            "arready": In(1),
            "rid": In(id_width),
            "rdata": In(data_width),
            "rresp": In(2),
            "rlast": In(1),
            "rvalid": In(1),
            "rready": Out(1),
        }
    return wiring.Signature(members)


def axil_signature(addr_width: int, data_width: int = 32) -> wiring.Signature:
    """AXI4-Lite (master view)."""
    return wiring.Signature(
        {
            "awaddr": Out(addr_width),
            "awprot": Out(3),
            "awvalid": Out(1),
            "awready": In(1),
            "wdata": Out(data_width),
            "wstrb": Out(data_width // 8),
            "wvalid": Out(1),
            "wready": In(1),
            "bresp": In(2),
            "bvalid": In(1),
            "bready": Out(1),
            "araddr": Out(addr_width),
            "arprot": Out(3),
            "arvalid": Out(1),
            "arready": In(1),
            "rdata": In(data_width),
            "rresp": In(2),
            "rvalid": In(1),
            "rready": Out(1),
        }
    )


# -- the burst rule (reference) ----------------------------------------------------------------
def max_burst_beats(beat_bytes: int, max_burst: int) -> int:
    """Longest burst the rule issues: `max_burst`, capped so a burst fits in 4 KiB."""
    return min(max_burst, AXI_4K // beat_bytes)


def transfer_beats(addr: int, nbytes: int, beat_bytes: int) -> int:
    """Data-bus words touched by the bytes [addr, addr + nbytes)."""
    if nbytes <= 0:
        return 0
    return (addr + nbytes - 1) // beat_bytes - addr // beat_bytes + 1


def split_bursts(addr: int, nbytes: int, beat_bytes: int, max_burst: int) -> list[tuple[int, int]]:
    """(word-aligned address, beats) of each burst of a transfer, in issue order."""
    out = []
    cur = addr - addr % beat_bytes
    left = transfer_beats(addr, nbytes, beat_bytes)
    cap = max_burst_beats(beat_bytes, max_burst)
    while left:
        n = min(left, cap, (AXI_4K - cur % AXI_4K) // beat_bytes)
        out.append((cur, n))
        cur += n * beat_bytes
        left -= n
    return out


def beat_keeps(addr: int, nbytes: int, beat_bytes: int) -> list[int]:
    """Byte-enable mask of each word of a transfer: the bytes inside [addr, addr + nbytes)."""
    n = transfer_beats(addr, nbytes, beat_bytes)
    full = (1 << beat_bytes) - 1
    keeps = [full] * n
    if n:
        keeps[0] &= (full << (addr % beat_bytes)) & full
        keeps[-1] &= full >> (beat_bytes - 1 - (addr + nbytes - 1) % beat_bytes)
    return keeps


# -- the burst rule (RTL) ----------------------------------------------------------------------
def command_layout(addr_width: int, len_bits: int) -> data.StructLayout:
    """A transfer command: byte address and byte length (a length of 0 is consumed, no transfer)."""
    return data.StructLayout({"addr": addr_width, "len": len_bits})


def burst_layout(addr_width: int, beat_bytes: int, max_beats: int) -> data.StructLayout:
    """One burst: its word address, beat count, whether it opens/closes its command, and the
    byte offsets of the command's first and last valid bytes (within their words)."""
    off = exact_log2(beat_bytes)
    return data.StructLayout(
        {
            "addr": addr_width,
            "beats": ceil_log2(max_beats + 1),
            "first": 1,
            "last": 1,
            "first_off": off,
            "last_off": off,
        }
    )


def keep_mask(m: Module, beat_bytes: int, burst, first_beat, last_beat) -> Signal:
    """Byte-enable of one beat of `burst` (a `burst_layout` view), as `beat_keeps` defines it."""
    full = (1 << beat_bytes) - 1
    lo = Signal(beat_bytes)
    hi = Signal(beat_bytes)
    keep = Signal(beat_bytes)
    m.d.comb += [
        lo.eq(Mux(first_beat & burst.first, (C(full, beat_bytes) << burst.first_off)[:beat_bytes], full)),
        hi.eq(Mux(last_beat & burst.last, C(full, beat_bytes) >> ~burst.last_off, full)),
        keep.eq(lo & hi),
    ]
    return keep


class BurstSplitter(wiring.Component):
    """Turns commands into bursts by `split_bursts`; one burst per cycle, next command without a gap.

    `bursts.payload` is combinational from registers, and stable while `bursts.valid` waits for
    `bursts.ready`; a command is accepted in the cycle its last burst leaves.
    """

    def __init__(self, addr_width: int, len_bits: int, beat_bytes: int, max_burst: int):
        assert 4 <= beat_bytes <= AXI_4K // 2 and exact_log2(beat_bytes) >= 2
        self.addr_width, self.len_bits, self.beat_bytes = addr_width, len_bits, beat_bytes
        self.max_beats = max_burst_beats(beat_bytes, max_burst)
        super().__init__(
            {
                "cmd": In(stream.Signature(command_layout(addr_width, len_bits))),
                "bursts": Out(stream.Signature(burst_layout(addr_width, beat_bytes, self.max_beats))),
            }
        )

    def elaborate(self, platform):
        m = Module()
        shift = exact_log2(self.beat_bytes)
        beat_bits = self.addr_width - shift
        cmd = self.cmd.payload

        # Command state: next word index, beats left, offsets, first-burst flag.
        word = Signal(beat_bits)
        left = Signal(self.len_bits + 1)
        first_off = Signal(shift)
        last_off = Signal(shift)
        first = Signal()
        active = Signal()

        # The burst length: min(left, max_beats, words to the next 4 KiB boundary).
        page_words = AXI_4K // self.beat_bytes
        to_page = Signal(range(page_words + 1))
        m.d.comb += to_page.eq(page_words - word[: exact_log2(page_words)])
        n = Signal(range(self.max_beats + 1))
        cap = Signal(range(self.max_beats + 1))
        m.d.comb += [
            cap.eq(Mux(to_page < self.max_beats, to_page, self.max_beats)),
            n.eq(Mux(left < cap, left, cap)),
        ]
        closes = Signal()
        m.d.comb += closes.eq(left == n)
        b = self.bursts.payload
        m.d.comb += [
            self.bursts.valid.eq(active),
            b.addr.eq(word << shift),
            b.beats.eq(n),
            b.first.eq(first),
            b.last.eq(closes),
            b.first_off.eq(first_off),
            b.last_off.eq(last_off),
        ]
        leaving = Signal()
        m.d.comb += leaving.eq(self.bursts.valid & self.bursts.ready)
        with m.If(leaving):
            m.d.sync += [word.eq(word + n), left.eq(left - n), first.eq(0)]
            with m.If(closes):
                m.d.sync += active.eq(0)

        # Accept a command when idle or when the current one's last burst is leaving.
        m.d.comb += self.cmd.ready.eq(~active | (leaving & closes))
        end = Signal(self.addr_width + 1)
        m.d.comb += end.eq(cmd.addr + cmd.len - 1)
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                word.eq(cmd.addr >> shift),
                left.eq((end >> shift) - (cmd.addr >> shift) + 1),
                first_off.eq(cmd.addr),
                last_off.eq(end),
                first.eq(1),
                active.eq(cmd.len != 0),
            ]
        return m
