"""In-process C simulation of a generated HLS project: the project's own kernel source, compiled
by g++ as a shared library (`src/csim_lib.cpp` + `src/kernel.cpp`) and called through ctypes.

Why: it runs the whole generated kernel — every PE, FIFO and memory reader of the project, not a
model of them — on real queries, fast enough for tests and for the `c-sim` backend of the host
driver, which uses `HlsCsim` directly. The kernel reads and writes the buffers in the layouts of
`fanns.images.ivfpq.IoLayout`, so this module only packs queries and unpacks result keys.
"""

from __future__ import annotations

import ctypes
import math
import multiprocessing
from pathlib import Path

import numpy as np

from fanns.codegen.project_files import PROJECT_FILE, read_record
from fanns.errors import FannsError
from fanns.images.ivfpq import IoLayout
from fanns.numerics import IvfPqFormat, sentinel, split_keys
from fanns.reference.ivfpq import host_queries
from fanns.sim.csim import build_library
from fanns.tools.verilator import DesignStuck


class HlsCsim:
    """The generated kernel of `project`, loaded in-process with its memory images.

    `threads=False` runs the dataflow processes one after another with unbounded FIFOs (fast,
    like Vitis C simulation); `threads=True` runs them concurrently with FIFOs of their declared
    depths, so a deadlock or data left in a FIFO fails the search (a check of the FIFO depths)."""

    def __init__(self, project: Path, build_dir: Path | None = None, threads: bool = False):
        self.project = Path(project)
        record = read_record(self.project)
        io = record["io"]
        self.io = IoLayout.from_dict(io)
        self.format = IvfPqFormat.from_dict(record["format"])
        self.metric = record["metric"]
        self.k = int(record["k"])
        self.nprobe = int(record["nprobe"])
        lib = ctypes.CDLL(str(build_library(self.project, build_dir, threads)))
        lib.fanns_csim_open.restype = ctypes.c_void_p
        lib.fanns_csim_open.argtypes = [ctypes.c_char_p]
        lib.fanns_csim_error.restype = ctypes.c_char_p
        lib.fanns_csim_search.restype = ctypes.c_int
        lib.fanns_csim_search.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_void_p]
        lib.fanns_csim_close.argtypes = [ctypes.c_void_p]
        self._stepwise = hasattr(lib, "fanns_csim_search_cells")  # projects generated before the mode lack it
        if self._stepwise:
            lib.fanns_csim_search_cells.restype = ctypes.c_int
            lib.fanns_csim_search_cells.argtypes = (
                [ctypes.c_void_p] + [ctypes.c_char_p] * 3 + [ctypes.c_uint32, ctypes.c_void_p]
            )
        for name in ("fanns_csim_query_bytes", "fanns_csim_result_bytes", "fanns_csim_k"):
            getattr(lib, name).restype = ctypes.c_uint32
        if (lib.fanns_csim_query_bytes(), lib.fanns_csim_result_bytes(), lib.fanns_csim_k()) != (
            self.io.query_beats * self.io.port_bits // 8,
            self.io.result_beats * self.io.port_bits // 8,
            self.k,
        ):
            raise FannsError(
                f"{self.project}: the compiled kernel disagrees with {PROJECT_FILE}", hint="regenerate the project"
            )
        self._lib = lib
        self._handle = lib.fanns_csim_open(str(self.project).encode())
        if not self._handle:
            raise FannsError(
                f"{self.project}: cannot load the memory images: {lib.fanns_csim_error().decode()}",
                hint="regenerate the project",
            )

    def search_keys_fx(self, q_fx: np.ndarray) -> np.ndarray:
        """Fixed-point queries [nq, d] (host-quantised) -> result keys uint64 [nq, K], ascending."""
        q_fx = np.asarray(q_fx)
        nq = int(q_fx.shape[0])
        if nq == 0:
            return np.zeros((0, self.k), dtype=np.uint64)
        out = ctypes.create_string_buffer(nq * self.io.result_beats * self.io.port_bits // 8)
        if self._lib.fanns_csim_search(self._handle, self.io.pack_queries(q_fx), nq, out):
            raise RuntimeError(f"C simulation of {self.project} failed: {self._lib.fanns_csim_error().decode()}")
        return self.io.unpack_results(out.raw, nq)

    def search_keys_cells_fx(self, q_fx: np.ndarray, cells: np.ndarray, seeds: np.ndarray | None) -> np.ndarray:
        """One step of a step-wise search (mode 1, docs/stepwise.md): host-quantised queries
        [nq, d], cell lists [nq, c <= nprobe] (-1: no cell), seed keys uint64 [nq, K] ascending
        (None: sentinels) -> result keys [nq, K], as `IvfPqReference.search_keys_cells`."""
        if not self._stepwise:
            raise FannsError(
                f"{self.project}: the kernel has no step-wise mode (generated before it existed)",
                hint="regenerate the project",
            )
        q_fx, cells = np.asarray(q_fx), np.asarray(cells)
        nq = int(q_fx.shape[0])
        if cells.ndim != 2 or cells.shape[0] != nq or cells.shape[1] > self.nprobe:
            raise ValueError(f"cells must be [nq={nq}, c <= nprobe={self.nprobe}]; got {cells.shape}")
        if nq == 0:
            return np.zeros((0, self.k), dtype=np.uint64)
        if seeds is None:
            seeds = np.full((nq, self.k), sentinel(self.format.pq_key_bits), dtype=np.uint64)
        out = ctypes.create_string_buffer(nq * self.io.result_beats * self.io.port_bits // 8)
        packed = (self.io.pack_queries(q_fx), self.io.pack_cells(cells, self.nprobe), self.io.pack_results(seeds))
        if self._lib.fanns_csim_search_cells(self._handle, *packed, nq, out):
            raise RuntimeError(f"C simulation of {self.project} failed: {self._lib.fanns_csim_error().decode()}")
        return self.io.unpack_results(out.raw, nq)

    def search_keys(self, queries: np.ndarray) -> np.ndarray:
        """Float queries [nq, d] (quantised here as the host does) -> result keys [nq, K]."""
        return self.search_keys_fx(host_queries(self.format, self.metric, queries))

    def search(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Float queries [nq, d] -> (ids int64 [nq, K], fixed-point distances uint64 [nq, K])."""
        dist, ids = split_keys(self.search_keys(queries))
        return ids.astype(np.int64), dist

    def close(self) -> None:
        if self._handle:
            self._lib.fanns_csim_close(self._handle)
            self._handle = None

    def __enter__(self) -> HlsCsim:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _search_child(project: Path, build_dir: Path | None, q_fx: np.ndarray, threads: bool, pipe) -> None:
    try:
        with HlsCsim(project, build_dir, threads) as sim:
            pipe.send(("keys", sim.search_keys_fx(q_fx)))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it as its own
        pipe.send(("error", str(exc)))


def search_keys_within(
    project: Path, build_dir: Path | None, q_fx: np.ndarray, seconds: float, threads: bool = False
) -> np.ndarray:
    """`HlsCsim.search_keys_fx` stopped after `seconds` of wall time (the compilation not counted).

    Why a child process: a C simulation that never returns (a dataflow process waiting forever in
    the sequential mode, a livelock) holds this process inside a ctypes call that no signal can
    interrupt; a forked child can be killed. Without a limit the search runs in-process."""
    if not math.isfinite(seconds):
        with HlsCsim(project, build_dir, threads) as sim:
            return sim.search_keys_fx(q_fx)
    build_library(Path(project), build_dir, threads)
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_search_child, args=(Path(project), build_dir, q_fx, threads, send))
    child.start()
    send.close()
    try:
        if not receive.poll(seconds):
            raise DesignStuck(
                f"C simulation of {project}: no result after {seconds:g} s of wall time (stopped)",
                hint="a hang is a bug of the generated kernel: report it with the project's design.yaml; "
                "raise the limit with --timeout only if the kernel is merely slow",
            )
        kind, value = receive.recv()
    finally:
        child.kill()
        child.join()
    if kind == "error":
        raise FannsError(f"C simulation of {project} failed: {value}")
    return value


def run_csim(project: Path, queries: np.ndarray, build_dir: Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Build the project's C simulation and search `queries` (float): (ids, dists)."""
    with HlsCsim(project, build_dir) as sim:
        return sim.search(queries)
