"""The `c-sim` backend: the project's generated HLS kernel, compiled by g++ and called in-process.

Why through the driver's buffers: the kernel is called (`fanns_csim_call` of the project's
`src/csim_lib.cpp`, built by `fanns.sim.csim.build_library`) with pointers into the
driver's own device memory, looked up from the addresses the driver wrote into the kernel's
argument registers — so the C simulation runs the same memory placement and register values a
board would get, not a second copy of them. A host-memory design's prefetch command (`mode` 2) is
run the same way: the descriptors are in the cell-list buffer (`Accelerator.prefetch`).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from fanns.driver.ivfpq.backend import RegisterDevice
from fanns.sim.csim import build_library


class CsimBackend(RegisterDevice):
    """See the module docstring. `threads`: run the dataflow processes as threads with FIFOs of
    their declared depths (slower; also checks the FIFO depths)."""

    name = "c-sim"

    def __init__(self, build_dir: Path | str | None = None, threads: bool = False):
        self.build_dir = Path(build_dir) if build_dir else None
        self.threads = threads

    def attach(self, project, iface) -> None:
        super().attach(project, iface)
        lib = ctypes.CDLL(str(build_library(project.path, self.build_dir, self.threads)))
        lib.fanns_csim_call.restype = ctypes.c_int
        lib.fanns_csim_call.argtypes = [ctypes.POINTER(ctypes.c_void_p)] + [ctypes.c_uint32] * (
            3 if iface.stepwise else 2
        )
        lib.fanns_csim_error.restype = ctypes.c_char_p
        self.lib = lib
        self.args = [a["name"] for a in project.record["args"]]

    def execute(self) -> None:
        scalars = [self.decode(n) for n in ("nq", "load", "mode")[: 3 if self.iface.stepwise else 2]]
        arrays = [self.at(name) for name in self.args]
        ptrs = (ctypes.c_void_p * len(arrays))(*(a.ctypes.data for a in arrays))
        if self.lib.fanns_csim_call(ptrs, *scalars):
            raise RuntimeError(f"C simulation of {self.project.path} failed: {self.lib.fanns_csim_error().decode()}")
