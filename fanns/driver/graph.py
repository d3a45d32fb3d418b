"""The host driver of a graph (Falcon) project: one search API over the DST reference model, the C
simulation of the HLS face and the RTL simulation of the RTL face.

    with fanns.driver.open("graph_project", backend="rtl-sim") as acc:   # a face, or a folder of faces
        acc.set_params(l=64, k=10, mg=4, mc=2)
        ids, distances = acc.search(queries)

Why its own session: a graph project holds no index to load and no number format of IVF-PQ; the
queries are quantised by the graph's format (`GraphDesign.fmt`), the run-time parameters (l, k,
mg, mc) are the kernel's arguments, and each backend runs what the project ships: `model` the DST
reference on the project's images, `c-sim` the HLS face's kernel (`fanns.sim.graph.csim`),
`rtl-sim` the RTL face's kernel Verilog in its bench (`fanns.sim.graph.rtl`: it programs the
kernel's register map — ap_ctrl_hs at 0x00, arguments from 0x10 — exactly as the board's host
does); `pynq` the project's kernel on a board (`fanns.driver.graph_pynq`: the same registers and
buffers as the RTL bench, an xclbin on Alveo or the block design's .bit on Zynq, one IP per
compute unit). A graph project's XRT host (`make run`, Alveo) is the other way to a board.

Results: ids int64 [nq, k] and squared-L2 distances float32 [nq, k] in the dataset's units
(the integer distance / scale**2), nearest first; a slot the search did not fill holds id -1 and
distance +inf.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from fanns.choices import DRIVER_BACKENDS
from fanns.codegen.graph.rtl import TOP, is_across, is_graph_project, read_project
from fanns.codegen.project_files import read_record
from fanns.datasets.cache import cache_root
from fanns.design.graph import Runtime
from fanns.driver.graph_pynq import GraphPynq
from fanns.errors import FannsError
from fanns.images.graph import split_keys, unpack
from fanns.reference.graph import reference
from fanns.sim.graph.across_rtl import FalconAcrossRtl, bank_words
from fanns.sim.graph.csim import GraphHlsCsim
from fanns.sim.graph.rtl import FalconRtl, memory_words

FACE_OF = {"c-sim": "hls", "rtl-sim": "rtl"}


def project_face(path: Path) -> str:
    """The face of a single-face graph project: "rtl" or "hls"."""
    return "rtl" if "rtl" in read_record(path) else "hls"


def is_graph_folder(path: Path, faces: tuple[str, ...]) -> bool:
    """Whether `path` is a graph project, or a folder whose `faces` subfolders hold graph projects."""
    path = Path(path)
    return is_graph_project(path) or any(is_graph_project(path / f) for f in faces)


class GraphAccelerator:
    """A graph project's search behind one backend (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        backend: str,
        batch: int | None = None,
        build_dir: Path | None = None,
        latency: int = 100,
        **board,
    ):
        """`build_dir`, `latency`: the simulators'; `board`: the pynq backend's (bitstream, device, ip,
        timeout: `fanns.driver.graph_pynq.GraphPynq`)."""
        self.path, self.backend = Path(path), backend
        self.face = project_face(self.path)
        if backend not in DRIVER_BACKENDS:
            raise FannsError(
                f"unknown backend {backend!r} for the graph project {self.path}",
                hint=f"choose one of {', '.join(DRIVER_BACKENDS)}",
            )
        if board and backend != "pynq":
            raise FannsError(
                f"options {', '.join(sorted(board))} are the pynq backend's", hint="drop them, or use backend pynq"
            )
        need = FACE_OF.get(backend)
        if need is not None and need != self.face:
            raise FannsError(
                f"the {backend} backend runs the {need.upper()} face; {self.path} is the {self.face.upper()} face",
                hint=f"open the {need} face, or use backend model or {'c-sim' if self.face == 'hls' else 'rtl-sim'}",
            )
        self.data = read_project(self.path)
        self.design = self.data.design
        self.runtime = self.design.runtime
        self.batch = batch or (1024 if backend == "pynq" else 64)
        self.build_dir = Path(build_dir) if build_dir else cache_root() / "sim-builds"
        self.latency = latency
        self._graph = unpack(self.data.images, self.design) if backend == "model" else None
        self._csim = GraphHlsCsim(self.path, self.build_dir) if backend == "c-sim" else None
        self._rtl: FalconRtl | FalconAcrossRtl | None = None
        self._board = (
            GraphPynq(self.path, self.face, self.design, self.data.images, self.batch, **board)
            if backend == "pynq"
            else None
        )
        self._seconds, self._queries, self._runs, self._cycles = 0.0, 0, 0, 0

    @property
    def K(self) -> int:  # noqa: N802 - the design's largest k
        return self.design.queues.k_max

    def set_params(self, k: int | None = None, l: int | None = None, mg: int | None = None, mc: int | None = None):  # noqa: E741
        """The run-time parameters of the next searches (default: the design's), within the
        hardware's limits."""
        rt = self.runtime
        new = Runtime(l=l or rt.l, k=k or rt.k, mg=mg or rt.mg, mc=mc or rt.mc)
        self.runtime = self.design.check_runtime(new, "l, k, mg, mc =")

    def quantize(self, queries) -> np.ndarray:
        """Float queries [nq, d] of the dataset -> the integer queries the device takes."""
        q = np.asarray(queries)
        d = self.design.graph.d
        if q.ndim != 2 or q.shape[1] != d or len(q) < 1 or not np.all(np.isfinite(q)):
            raise FannsError(f"queries must be finite [nq >= 1, {d}], got {q.shape}", hint="pass the dataset's queries")
        return self.design.fmt.quantize(q.astype(np.float32))

    def _rtl_sim(self, nq: int) -> FalconRtl | FalconAcrossRtl:
        """The RTL bench, built once for batches of up to `nq` queries."""
        images = self.data.images
        if is_across(self.design):
            words = bank_words(images, nq)
            if not isinstance(self._rtl, FalconAcrossRtl) or self._rtl.bank_words < words:
                self._rtl = FalconAcrossRtl(self.design, self.build_dir / f"graph-driver-across-{words}", words)
        else:
            words = memory_words(images, nq)
            if not isinstance(self._rtl, FalconRtl) or self._rtl.depth < words:
                kernel = (self.path / "rtl" / f"{TOP}.v").read_text()  # the Verilog the board runs
                self._rtl = FalconRtl(self.design, self.build_dir / f"graph-driver-{words}", words, kernel=kernel)
        return self._rtl

    def _batch_keys(self, q_fx: np.ndarray) -> np.ndarray:
        rt = self.runtime
        if self.backend == "model":
            return reference(self.design, self._graph, q_fx, rt).keys
        if self.backend == "c-sim":
            return self._csim.search(q_fx, rt)[0]
        if self.backend == "pynq":
            keys, cycles = self._board.run(q_fx, rt)
            self._cycles += cycles
            return keys
        sim = self._rtl_sim(self.batch)
        run = sim.run(self.data.images, q_fx, rt, latency=self.latency)
        status = run.status if isinstance(run.status, list) else [run.status]
        if run.timed_out or any(status):
            raise FannsError(
                f"the RTL simulation of {self.path} ended with status {status}"
                + (" (no interrupt before the timeout)" if run.timed_out else ""),
                hint="check the run-time parameters against rtl/regmap.md",
            )
        self._cycles += sum(run.run_cycles) if is_across(self.design) else run.cycles
        return run.keys

    def search_keys(self, queries) -> np.ndarray:
        """The result keys uint64 [nq, k_max] of float queries, in batches of `batch`."""
        q_fx = self.quantize(queries)
        start, out = time.perf_counter(), []
        for first in range(0, len(q_fx), self.batch):
            out.append(self._batch_keys(q_fx[first : first + self.batch]))
            self._runs += 1
        self._seconds += time.perf_counter() - start
        self._queries += len(q_fx)
        return np.concatenate(out)

    def search(self, queries, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [nq, k], distances float32 [nq, k]) at the run-time parameters (k: at most theirs)."""
        k = k or self.runtime.k
        if not 1 <= k <= self.runtime.k:
            raise FannsError(f"k {k}: the search returns 1..{self.runtime.k} results", hint="set_params(k=...) first")
        ids, dists = split_keys(self.search_keys(queries), k)
        distances = np.where(ids < 0, np.inf, dists / float(self.design.fmt.scale) ** 2).astype(np.float32)
        return ids, distances

    def stats(self) -> dict:
        """What the searches so far cost: queries, device runs, host wall time, device cycles (rtl-sim,
        and pynq on the RTL face: the sum over compute units)."""
        return {
            "backend": self.backend,
            "project": f"graph {self.face}",
            "queries": self._queries,
            "runs": self._runs,
            "seconds": self._seconds,
            "qps": self._queries / self._seconds if self._seconds else 0.0,
            "cycles": self._cycles,
            "runtime": {"l": self.runtime.l, "k": self.runtime.k, "mg": self.runtime.mg, "mc": self.runtime.mc},
        }

    def close(self) -> None:
        if self._board is not None:
            self._board.close()
            self._board = None
        if self._csim is not None:
            self._csim.close()
            self._csim = None

    def __enter__(self) -> GraphAccelerator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
