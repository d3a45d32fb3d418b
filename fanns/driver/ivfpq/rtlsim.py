"""The `rtl-sim` backend: the project's generated RTL under Verilator + cocotb, driven live by the
driver (driver in the loop).

How: the backend builds the project's Verilog once (cached by content, like `fanns sim`), then
starts the simulation (`sim/tb_driver.py`) in a background thread and serves it a TCP socket on
localhost. Every backend call of the driver — allocate in a bank, write/read a buffer,
write/read a register word, wait for done — becomes one request the bench executes against the
core through AXI4-Lite and AXI memory models, so the simulated core is programmed by exactly the
values and placements the driver computes (`fanns.driver.ivfpq.plan`). The simulation ends at
`close()`. Device time passes only while the bench executes requests (register accesses take
their AXI4-Lite cycles; `wait` polls the done bit every 64 cycles), which the core's own cycle
registers do not depend on.

Host-memory tier (a design with `stages.pq_dist.host_tier`, docs/host_tier.md): the bench's RAM of
host memory (`m_axi_pq<c>`, bank `host[0]`) answers with the board file's host-link latency, the
cache regions (`m_axi_cache<c>`) are written as well as read; the prefetch command's runs come from
`Accelerator.prefetch` like every other run.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
from pathlib import Path

from fanns.codegen.ivfpq.rtl import TOP
from fanns.datasets.cache import cache_root
from fanns.driver.ivfpq.backend import Backend, BumpAllocator
from fanns.driver.ivfpq.plan import Buffer
from fanns.errors import FannsError
from fanns.model.ivfpq import skew as skew_model
from fanns.sim.ivfpq.rtl import CXX_OPT
from fanns.tools.verilator import RtlSim

ACCEPT_TIMEOUT = 600.0
"""Seconds to wait for the simulator to connect (it starts a Verilated model and cocotb)."""
WAIT_CYCLES = 50_000_000
"""Simulated cycles a run may take before the bench gives up."""


class RtlSimBackend(Backend):
    """See the module docstring. `latency`: memory read/write latency in cycles (the performance
    model's 100 by default); `pause`: probability of a random stall per cycle on every memory channel."""

    name = "rtl-sim"
    default_batch = 16
    has_cycles = True

    def __init__(self, build_dir: Path | str | None = None, latency: int = 100, pause: float = 0.0):
        self.build_dir, self.latency, self.pause = build_dir, latency, pause
        self._thread = None
        self._conn = None
        self._reported = False
        self.report: dict = {}

    def attach(self, project, iface) -> None:

        super().attach(project, iface)
        self.alloc = BumpAllocator(iface)
        text = (project.path / "rtl" / f"{TOP}.v").read_text()
        tag = hashlib.sha256(text.encode()).hexdigest()[:16]
        root = Path(self.build_dir) if self.build_dir else cache_root() / "sim-builds"
        self.sim = RtlSim({f"{TOP}.v": text}, TOP, root / f"ivfpq_{tag}", cxx_opt=CXX_OPT)
        self.sim.build()
        self.ports = {
            name: f"{p['memory']}[{p['channel']}]"
            for name, p in project.ports["ports"].items()
            if name.startswith("m_axi")
        }
        self.latencies = {}  # ports whose memory answers after other than `latency` cycles
        self.rates = {}  # ports whose memory moves fewer than a beat a cycle
        if project.design.stages.pq_dist.host_tier is not None:
            d = project.design
            st = d.stages.pq_dist
            board = d.target_board()
            link = skew_model.host_tier(board, d.clock_mhz, st.pes, st.channels, st.port_bits)
            share = skew_model.host_bandwidth(board, d.clock_mhz, st.channels, st.port_bits) / st.channels
            host = [name for name in self.ports if name.rstrip("0123456789") == "m_axi_pq"]
            self.latencies = {name: round(link.latency_cycles) for name in host}
            self.rates = {name: min(1.0, share / (d.clock_mhz * 1e6) / (st.port_bits / 8)) for name in host}

    # -- the simulation and its socket -------------------------------------------------------------
    def _start(self) -> None:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(1.0)
        params = {
            "host": "127.0.0.1",
            "port": server.getsockname()[1],
            "ports": self.ports,
            "latency": self.latency,
            "latencies": self.latencies,
            "rates": self.rates,
            "pause": self.pause,
        }
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self.report = self.sim.run("tb_driver", params)
            except BaseException as exc:  # noqa: BLE001 - handed to the driver's thread
                self._error = exc

        self._thread = threading.Thread(target=run, name="fanns-rtl-sim", daemon=True)
        self._thread.start()
        waited = 0.0
        try:
            while True:
                try:
                    conn, _ = server.accept()
                    break
                except TimeoutError:
                    waited += 1.0
                    if not self._thread.is_alive() or waited > ACCEPT_TIMEOUT:
                        raise self._failure("the simulation did not connect") from self._error
        finally:
            server.close()
        conn.settimeout(None)
        self._conn = conn
        self._stream = conn.makefile("rwb")

    def _failure(self, what: str) -> RuntimeError:
        return RuntimeError(f"rtl-sim: {what}" + (f": {self._error}" if self._error else ""))

    def _call(self, **cmd) -> dict:
        if self._conn is None:
            self._start()
        self._stream.write((json.dumps(cmd) + "\n").encode())
        self._stream.flush()
        line = self._stream.readline()
        if not line:
            self._thread.join(timeout=60)
            raise self._failure(f"the simulation ended during {cmd['op']}")
        reply = json.loads(line)
        if "error" in reply:
            self._reported = True
            raise RuntimeError(f"rtl-sim: {cmd['op']} failed in the bench: {reply['error']}")
        return reply

    # -- backend operations --------------------------------------------------------------------------
    def allocate(self, buf: Buffer) -> int:
        addr = self.alloc.allocate(buf)
        self._addr = getattr(self, "_addr", {})
        self._addr[buf.name] = addr
        self._call(op="alloc", bank=str(buf.bank), addr=addr, nbytes=buf.alloc_bytes)
        return addr

    def write_buffer(self, buf: Buffer, data: bytes) -> None:
        self._call(op="write", bank=str(buf.bank), addr=self._addr[buf.name], data=base64.b64encode(data).decode())

    def read_buffer(self, buf: Buffer, nbytes: int) -> bytes:
        return base64.b64decode(
            self._call(op="read", bank=str(buf.bank), addr=self._addr[buf.name], nbytes=nbytes)["data"]
        )

    def write_register(self, offset: int, word: int) -> None:
        self._call(op="wreg", offset=offset, word=word)

    def read_register(self, offset: int) -> int:
        return int(self._call(op="rreg", offset=offset)["word"])

    def wait(self, offset: int, mask: int, timeout: float) -> None:
        self._call(op="wait", offset=offset, mask=mask, timeout=WAIT_CYCLES)

    def close(self) -> None:
        if self._conn is None:
            return
        try:
            self._stream.write(b'{"op": "quit"}\n')
            self._stream.flush()
        except OSError:
            pass
        self._thread.join(timeout=120)
        self._stream.close()
        self._conn.close()
        self._conn = None
        if self._error is not None and not self._reported:  # a failure already raised is not raised again
            raise FannsError(
                f"rtl-sim: the simulation failed: {self._error}", hint="see the simulation log in the build folder"
            )
