"""What a driver backend provides: device memory and a register file, nothing more.

Why so little: everything that decides *what* to write (buffer sizes and banks, register values
and their encoding, the start/done protocol) lives in `fanns.driver.ivfpq.plan` and
`fanns.driver.ivfpq.accelerator`, shared by every backend. A backend only executes: allocate a buffer
in a bank (returning its device address), copy bytes to/from a buffer, write/read a 32-bit
register word, and wait until the device reports done.

`RegisterDevice` is the common base of the backends that emulate the device in-process (the
model and the C simulation): a register file whose start bit runs the emulated device on the
buffers the written addresses point to.
"""

from __future__ import annotations

import time

import numpy as np

from fanns.driver.ivfpq.plan import PAGE, Buffer, Interface
from fanns.driver.ivfpq.project import Project
from fanns.driver.project import Bank
from fanns.errors import FannsError


class Backend:
    """Interface of a backend (see the module docstring). `name` is its `open(backend=...)` name."""

    name = ""
    default_batch = 1024
    """I/O buffer size in queries unless the caller chooses (a simulator wants small batches)."""
    has_cycles = False
    """Whether the device's cycle registers count real (simulated or hardware) clock cycles."""

    def attach(self, project: Project, iface: Interface) -> None:
        """Called once by the accelerator before any other call."""
        self.project, self.iface = project, iface

    def allocate(self, buf: Buffer) -> int:
        """Allocate `buf` in `buf.bank`; return its device address."""
        raise NotImplementedError

    def write_buffer(self, buf: Buffer, data: bytes) -> None:
        """Copy `data` to the start of `buf` and make it visible to the device."""
        raise NotImplementedError

    def read_buffer(self, buf: Buffer, nbytes: int) -> bytes:
        """The first `nbytes` of `buf` as the device wrote them."""
        raise NotImplementedError

    def write_register(self, offset: int, word: int) -> None:
        raise NotImplementedError

    def read_register(self, offset: int) -> int:
        raise NotImplementedError

    def wait(self, offset: int, mask: int, timeout: float) -> None:
        """Poll the word at `offset` until `mask` is set (the device's done bit)."""
        end = time.monotonic() + timeout
        while not self.read_register(offset) & mask:
            if time.monotonic() > end:
                raise FannsError(
                    f"{self.name}: the device did not finish within {timeout:g} s",
                    hint="check the device (or raise the timeout)",
                )
            time.sleep(1e-4)

    def close(self) -> None:
        """Release the device."""


class BumpAllocator:
    """Addresses of buffers within each bank: page aligned, one after another from one page up
    (address 0 stays unused, so a forgotten address register points nowhere valid)."""

    def __init__(self, iface: Interface):
        self.iface = iface
        self.next: dict[Bank, int] = {}

    def allocate(self, buf: Buffer) -> int:
        addr = self.next.get(buf.bank, PAGE)
        end = addr + buf.alloc_bytes
        cap = self.iface.bank_capacity(buf.bank)
        if end > cap:
            raise FannsError(
                f"buffer {buf.name} ({buf.nbytes:,} bytes) does not fit in {buf.bank} ({cap:,} bytes)",
                hint="use a smaller batch",
            )
        self.next[buf.bank] = end
        return addr


class RegisterDevice(Backend):
    """An in-process device: host arrays as device memory, a register file, and `execute()`
    (the device's run) on a write of the start bit. Subclasses implement `execute`."""

    def attach(self, project: Project, iface: Interface) -> None:
        super().attach(project, iface)
        self.alloc = BumpAllocator(iface)
        self.memory: dict[tuple[Bank, int], np.ndarray] = {}  # (bank, address) -> bytes
        self.addresses: dict[str, int] = {}
        self.words: dict[int, int] = {}
        self.done = False

    def allocate(self, buf: Buffer) -> int:
        addr = self.alloc.allocate(buf)
        self.memory[(buf.bank, addr)] = np.zeros(buf.alloc_bytes // 8, dtype=np.uint64)  # 8-byte aligned
        self.addresses[buf.name] = addr
        return addr

    def _array(self, buf: Buffer) -> np.ndarray:
        return self.memory[(buf.bank, self.addresses[buf.name])].view(np.uint8)

    def at(self, name: str) -> np.ndarray:
        """The device memory a buffer-address register points to (as the device would follow it)."""
        bank = self.iface.banks[name]
        addr = self.decode(self.iface.address_register(name))
        if (bank, addr) not in self.memory:
            raise RuntimeError(
                f"{self.name}: register {self.iface.address_register(name)} = 0x{addr:x} is no buffer in {bank}"
            )
        return self.memory[(bank, addr)].view(np.uint8)

    def write_buffer(self, buf: Buffer, data: bytes) -> None:
        self._array(buf)[: len(data)] = np.frombuffer(data, dtype=np.uint8)

    def read_buffer(self, buf: Buffer, nbytes: int) -> bytes:
        return self._array(buf)[:nbytes].tobytes()

    def decode(self, name: str) -> int:
        return self.iface.decode(self.words, name)

    def write_register(self, offset: int, word: int) -> None:
        ctrl = self.iface.control_offset
        if offset != ctrl:
            self.words[offset] = word
            return
        if self.iface.clear_word is not None and word & self.iface.clear_word:
            self.done = False
        if word & self.iface.start_word:
            self.done = False
            self.execute()
            self.done = True

    def read_register(self, offset: int) -> int:
        if offset == self.iface.control_offset:
            word = self.iface.done_mask if self.done else 0
            if self.iface.clear_word is None:
                self.done = False  # HLS: ap_done clears on read
            return word | (1 << self.iface.regmap["ap_idle"].bit)
        return self.words.get(offset, 0)

    def execute(self) -> None:
        raise NotImplementedError
