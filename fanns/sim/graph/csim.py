"""In-process C simulation of a generated graph HLS project: the project's own kernel source
(`src/kernel.cpp` with `hls/falcon_qpp.h`) and `src/csim_lib.cpp`, compiled by g++ as a shared
library and called through ctypes.

Why: it runs the generated kernel itself on real queries at any run-time (l, k, mg, mc), so
tests and `fanns sim --backend csim` compare its result rows with the DST reference bit for bit
(keys and hops / visited / checks / groups). The images come from the project's folder (checked
against manifest.json) or from the caller (a test can hand it a corrupted copy).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from fanns.codegen.graph.hls import is_graph_hls_project
from fanns.codegen.project_files import read_record
from fanns.design.graph import GraphDesign, Runtime
from fanns.errors import FannsError
from fanns.images.graph import GraphImages
from fanns.sim.csim import build_library


class GraphHlsCsim:
    """The kernel of a graph HLS `project`, loaded in-process with the graph images."""

    def __init__(self, project: Path, build_dir: Path | None = None, images: GraphImages | None = None):
        self.project = Path(project)
        if not is_graph_hls_project(self.project):
            raise FannsError(f"{self.project} is not a graph HLS project", hint="run `fanns generate-graph-hls` first")
        record = read_record(self.project)
        self.design = GraphDesign.load(self.project / "design.yaml")
        self.images = images or GraphImages.read(self.project / "images")
        self.io = self.images.io
        lib = ctypes.CDLL(str(build_library(self.project, build_dir)))
        lib.fanns_graph_csim_open.restype = ctypes.c_void_p
        lib.fanns_graph_csim_open.argtypes = [
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_uint64),
            ctypes.c_uint32,
            ctypes.c_uint32,
        ]
        lib.fanns_graph_csim_error.restype = ctypes.c_char_p
        lib.fanns_graph_csim_search.restype = ctypes.c_int
        lib.fanns_graph_csim_search.argtypes = (
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32] + [ctypes.c_uint32] * 4 + [ctypes.c_void_p]
        )
        lib.fanns_graph_csim_close.argtypes = [ctypes.c_void_p]
        for name in ("fanns_graph_csim_images", "fanns_graph_csim_query_bytes", "fanns_graph_csim_result_bytes"):
            getattr(lib, name).restype = ctypes.c_uint32
        names = [a["image"] for a in record["hls"]["args"] if a["image"]]
        if (lib.fanns_graph_csim_images(), lib.fanns_graph_csim_query_bytes(), lib.fanns_graph_csim_result_bytes()) != (
            len(names),
            self.io.query_row_bytes,
            self.io.result_row_bytes,
        ):
            raise FannsError(
                f"{self.project}: the compiled kernel disagrees with its images", hint="regenerate the project"
            )
        self._data = [self.images.get(n).data for n in names]  # kept alive while the library copies them
        ptrs = (ctypes.c_char_p * len(names))(*self._data)
        sizes = (ctypes.c_uint64 * len(names))(*[len(d) for d in self._data])
        self._lib = lib
        self._handle = lib.fanns_graph_csim_open(ptrs, sizes, self.design.graph.n, self.design.graph.entry)
        if not self._handle:
            raise FannsError(f"{self.project}: cannot load the images: {lib.fanns_graph_csim_error().decode()}")

    def search(
        self, queries_fx: np.ndarray, runtime: Runtime | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Integer queries [nq, d] -> (result keys uint64 [nq, k_max], {cycles (0), hops, checks,
        visited, groups: int64 [nq]})."""
        rt = runtime or self.design.runtime
        q = np.asarray(queries_fx)
        nq = int(q.shape[0])
        out = ctypes.create_string_buffer(max(1, nq * self.io.result_row_bytes))
        if self._lib.fanns_graph_csim_search(self._handle, self.io.pack_queries(q), nq, rt.l, rt.k, rt.mg, rt.mc, out):
            raise FannsError(
                f"l={rt.l}, k={rt.k}, mg={rt.mg}, mc={rt.mc}: {self._lib.fanns_graph_csim_error().decode()}",
                hint=f"2 <= l <= {self.design.queues.l_max}, k <= min(l, {self.design.queues.k_max}), "
                f"mg <= {self.design.limits.mg_max}, mc <= {self.design.limits.mc_max}",
            )
        return self.io.unpack_results(out.raw, nq)

    def close(self) -> None:
        if self._handle:
            self._lib.fanns_graph_csim_close(self._handle)
            self._handle = None

    def __enter__(self) -> GraphHlsCsim:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
