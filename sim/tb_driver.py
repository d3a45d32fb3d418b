"""cocotb bench that executes the host driver's operations against a generated IVF-PQ core.

Driver in the loop: the `rtl-sim` backend of `fanns.driver` (in the Python process that runs
the driver) serves a TCP socket; this bench connects to it and executes, one by one, the
operations the driver's own code issues — allocate a buffer in a bank, write or read a buffer,
write or read a 32-bit register word through a real AXI4-Lite master, wait for the done bit —
and answers each with its result. The register values, addresses and bank placement therefore
come from the driver, not from a copy in the bench; the bench only models the board: one
cocotbext-axi RAM per memory bank, behind the AXI port `rtl/ports.json` wires to that bank,
created (sized by the driver's allocations in that bank) at the first operation after the
allocations, with the given read/write latency.

Parameters (FANNS_TB_PARAMS): `host`, `port` (the driver's socket), `ports` (AXI port -> bank
"memory[channel]"), `latency`, `latencies` (AXI port -> its RAM's latency where it differs: host
memory over the link), `rates` (AXI port -> its RAM's read beats a cycle where fewer than one: the
link's share of each host port), `pause` (probability of a stall per cycle on every RAM channel).
The RAMs of `m_axi_io` and of a host-memory design's cache regions (`m_axi_cache<c>`) are written
by the core too. Several ports on one bank (a host-memory design's PQ channels all read `host[0]`)
get one RAM each, all holding the bank's bytes: the core only reads that bank, so copies answer as
one memory would (a bank a port writes may have one port only).
Protocol: one JSON object per line each way; buffer bytes base64. Ops: alloc {bank, addr, nbytes},
write {bank, addr, data}, read {bank, addr, nbytes} -> {data}, wreg {offset, word},
rreg {offset} -> {word}, wait {offset, mask, timeout} -> {cycles}, quit.
Report: the operations executed and the simulated cycles spent waiting.
"""

import base64
import json
import logging
import socket

import cocotb
from cocotb.triggers import ClockCycles
from cocotbext.axi import AxiLiteMaster

from fanns_tb import Cycles, params, report, start
from fanns_tb.axi import LatencyAxiRam, axil_bus

PAGE = 4096
POLL_CYCLES = 64


class Board:
    """The memories of the simulated board and the AXI4-Lite master of the host."""

    def __init__(self, dut, p: dict):
        self.dut, self.p = dut, p
        self.cycles = Cycles(dut)
        self.ends: dict[str, int] = {}
        self.pending: list[tuple[str, int, bytes]] = []
        self.rams: dict[str, list[LatencyAxiRam]] | None = None
        self.master = AxiLiteMaster(
            axil_bus(dut, "s_axi_control", "_"), dut.ap_clk, dut.ap_rst_n, reset_active_level=False
        )
        for iface in (self.master.write_if, self.master.read_if):
            iface.log.setLevel(logging.WARNING)

    def alloc(self, bank: str, addr: int, nbytes: int) -> None:
        if self.rams is not None:
            raise RuntimeError(f"allocation in {bank} after the memories were created")
        self.ends[bank] = max(self.ends.get(bank, 0), addr + nbytes)

    def ram(self, bank: str) -> LatencyAxiRam:
        if self.rams is None:
            self.rams = {}
            for k, (port, b) in enumerate(sorted(self.p["ports"].items())):
                size = -(-max(self.ends.get(b, PAGE), PAGE) // PAGE) * PAGE
                writes = port == "m_axi_io" or port.startswith("m_axi_cache")  # a host-memory design's cache
                if writes and list(self.p["ports"].values()).count(b) > 1:
                    raise RuntimeError(f"{port} writes bank {b}, which other AXI ports share ({self.p['ports']})")
                latency = self.p.get("latencies", {}).get(port, self.p["latency"])
                ram = LatencyAxiRam(
                    self.dut,
                    port,
                    size,
                    self.cycles,
                    read_latency=latency,
                    write_latency=latency,
                    write=writes,
                    read_rate=self.p.get("rates", {}).get(port, 1.0),
                    separator="_",
                )
                ram.pause(self.p.get("pause", 0.0), 100 + k)
                self.rams.setdefault(b, []).append(ram)
            for b, addr, data in self.pending:
                self.write(b, addr, data)
        if bank not in self.rams:
            raise RuntimeError(f"no AXI port of the core is wired to bank {bank}")
        return self.rams[bank][0]

    def write(self, bank: str, addr: int, data: bytes) -> None:
        """Write `data` into every RAM of `bank` (see the module docstring)."""
        self.ram(bank)
        for ram in self.rams[bank]:
            ram.write(addr, data)

    async def execute(self, cmd: dict) -> dict:
        op = cmd["op"]
        if op == "alloc":
            self.alloc(cmd["bank"], cmd["addr"], cmd["nbytes"])
            return {}
        if op == "write":
            data = base64.b64decode(cmd["data"])
            if self.rams is None:
                self.pending.append((cmd["bank"], cmd["addr"], data))
            else:
                self.write(cmd["bank"], cmd["addr"], data)
            return {}
        self.ram(next(iter(self.p["ports"].values())))  # the allocations are complete: create the memories
        if op == "read":
            return {"data": base64.b64encode(self.ram(cmd["bank"]).read(cmd["addr"], cmd["nbytes"])).decode()}
        if op == "wreg":
            await self.master.write_dword(cmd["offset"], cmd["word"])
            return {}
        if op == "rreg":
            return {"word": int(await self.master.read_dword(cmd["offset"]))}
        if op == "wait":
            t0 = self.cycles.now
            while not (await self.master.read_dword(cmd["offset"])) & cmd["mask"]:
                if self.cycles.now - t0 > cmd["timeout"]:
                    raise TimeoutError(f"no done bit after {cmd['timeout']} cycles")
                await ClockCycles(self.dut.ap_clk, POLL_CYCLES)
            return {"cycles": self.cycles.now - t0}
        raise ValueError(f"unknown operation {op!r}")


@cocotb.test()
async def driver_in_the_loop(dut):
    p = params()
    await start(dut)
    board = Board(dut, p)
    sock = socket.create_connection((p["host"], p["port"]))
    stream = sock.makefile("rwb")
    ops, waited = {}, 0
    try:
        while True:
            line = stream.readline()
            if not line:
                break
            cmd = json.loads(line)
            if cmd["op"] == "quit":
                break
            ops[cmd["op"]] = ops.get(cmd["op"], 0) + 1
            try:
                reply = await board.execute(cmd)
            except Exception as exc:
                stream.write((json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n").encode())
                stream.flush()
                raise
            waited += reply.get("cycles", 0)
            stream.write((json.dumps(reply) + "\n").encode())
            stream.flush()
    finally:
        report(ops=ops, waited_cycles=waited)
        stream.close()
        sock.close()
