"""AXI4-Lite host accesses driven pin by pin: a few awaited edges per access and nothing between
accesses, so a bench whose memories are in RTL (`sim/tb_falcon.py`) runs
no Python while the design works (cocotbext-axi's master watches its channels every cycle)."""

from __future__ import annotations

from cocotb.triggers import RisingEdge

from fanns.hdl.regmap import RegMap


def axil_idle(dut) -> None:
    """Drive every master-side valid/ready of `s_axil` low."""
    for sig in ("awvalid", "wvalid", "arvalid", "bready", "rready"):
        getattr(dut, f"s_axil__{sig}").value = 0


async def axil_write(dut, addr: int, value: int) -> int:
    """One AXI4-Lite write; returns BRESP."""
    dut.s_axil__awaddr.value = addr
    dut.s_axil__awvalid.value = 1
    dut.s_axil__wdata.value = value & 0xFFFFFFFF
    dut.s_axil__wstrb.value = 0xF
    dut.s_axil__wvalid.value = 1
    dut.s_axil__bready.value = 1
    aw = w = False
    while not (aw and w):
        await RisingEdge(dut.clk)
        aw = aw or bool(int(dut.s_axil__awready.value))
        w = w or bool(int(dut.s_axil__wready.value))
        if aw:
            dut.s_axil__awvalid.value = 0
        if w:
            dut.s_axil__wvalid.value = 0
    while True:
        if int(dut.s_axil__bvalid.value):
            resp = int(dut.s_axil__bresp.value)
            await RisingEdge(dut.clk)
            dut.s_axil__bready.value = 0
            return resp
        await RisingEdge(dut.clk)


async def axil_read(dut, addr: int) -> int:
    """One AXI4-Lite read; returns RDATA."""
    dut.s_axil__araddr.value = addr
    dut.s_axil__arvalid.value = 1
    dut.s_axil__rready.value = 1
    while True:
        await RisingEdge(dut.clk)
        if int(dut.s_axil__arready.value):
            dut.s_axil__arvalid.value = 0
            break
    while not int(dut.s_axil__rvalid.value):
        await RisingEdge(dut.clk)
    value = int(dut.s_axil__rdata.value)
    await RisingEdge(dut.clk)
    dut.s_axil__rready.value = 0
    return value


async def write_reg(dut, offsets: dict, name: str, value: int, base: int = 0) -> int:
    """Write a register of `width` bits at (offset, width) = offsets[name], 32 bits at a time;
    returns the number of responses that were not OKAY."""
    off, width = offsets[name]
    off += base
    bad = 0
    for i in range(0, width, 32):
        bad += await axil_write(dut, off + i // 8, (value >> i) & 0xFFFFFFFF) != 0
    return bad


class PinCsr:
    """Registers by name (the generated register-map JSON gives the words), through `axil_write` /
    `axil_read`; the same interface as `tb_ivfpq.Csr` over cocotbext-axi's master."""

    def __init__(self, dut, regmap: RegMap):
        self.dut, self.regmap = dut, regmap

    async def write_word(self, offset: int, value: int) -> None:
        if await axil_write(self.dut, offset, value):
            raise RuntimeError(f"AXI4-Lite write to {offset:#x} was not OKAY")

    async def read_word(self, offset: int) -> int:
        return await axil_read(self.dut, offset)

    async def write(self, name: str, value: int) -> None:
        for offset, wbit, rbit, bits in self.regmap[name].word_slices():
            await self.write_word(offset, ((value >> rbit) & ((1 << bits) - 1)) << wbit)

    async def read(self, name: str) -> int:
        out = 0
        for offset, wbit, rbit, bits in self.regmap[name].word_slices():
            out |= ((await self.read_word(offset) >> wbit) & ((1 << bits) - 1)) << rbit
        return out
