"""The `c-sim` backend: the project's generated HLS kernel, compiled by g++ and called in-process.

Why through the driver's buffers: the kernel is called (`fanns_csim_call` of the project's
`src/csim_lib.cpp`, built by `fanns.sim.csim.build_library`) with pointers into the
driver's own device memory, looked up from the addresses the driver wrote into the kernel's
argument registers — so the C simulation runs the same memory placement and register values a
board would get, not a second copy of them.

Host-memory tier (docs/host_tier.md, a design with `stages.pq_dist.host_tier`): `prefetch` ranks
the drafts' cells by the design's own IVF stage (the reference's `probe`), plans the copies on the
driver's side (`fanns.model.ivfpq.prefetch_plan.CachePlan`: the ring, its descriptors and the
mirrored location table) and runs them in one kernel call of mode 2; an index load empties the
table. `tier_stats` counts from the mirror which probed lists the searches found cached.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from fanns.driver.ivfpq.backend import RegisterDevice
from fanns.driver.ivfpq.model import index_from_images
from fanns.images.ivfpq import TABLE_WORDS, cache_list_beats
from fanns.model.ivfpq.prefetch import interleave
from fanns.model.ivfpq.prefetch_plan import FROM_HOST, CachePlan
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.csim import build_library

PREFETCH_MODE = 2
"""The kernel's `mode` of the prefetch command (docs/host_tier.md)."""


class CsimBackend(RegisterDevice):
    """See the module docstring. `threads`: run the dataflow processes as threads with FIFOs of
    their declared depths (slower; also checks the FIFO depths)."""

    name = "c-sim"

    def __init__(self, build_dir: Path | str | None = None, threads: bool = False):
        self.build_dir = Path(build_dir) if build_dir else None
        self.threads = threads

    @property
    def host_tier(self) -> bool:
        """Whether the project's lists live in host memory with a prefetched cache."""
        return self.project.design.stages.pq_dist.host_tier is not None

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
        self.reference: DesignReference | None = None
        if self.host_tier:
            pq = project.design.stages.pq_dist
            info = project.images.info["host_tier"]
            self.plan = CachePlan(
                info["cache_beats"], cache_list_beats(project.images), pq.channels * pq.port_bits // 8
            )
            codes = project.images.by_use("pq_codes")
            nlist = project.design.index.nlist
            beats = [
                np.frombuffer(img.data[: nlist * TABLE_WORDS * 4], dtype="<u4").reshape(nlist, -1)[:, 1]
                for img in codes
            ]
            self.list_bytes = np.sum(beats, axis=0).astype(np.int64) * (pq.port_bits // 8)  # every channel's share
            self.tier = {"prefetched_bytes": 0, "hbm_bytes": 0, "host_bytes": 0, "cells": 0, "cached_cells": 0}

    def _reference(self) -> DesignReference:
        """The design's reference over the project's own index: its IVF stage ranks cells."""
        if self.reference is None:
            p = self.project
            self.reference = DesignReference(p.design, index_from_images(p.images, p.design, p.metric))
        return self.reference

    def _call(self, arrays: list, scalars: list[int]) -> None:
        ptrs = (ctypes.c_void_p * len(arrays))(*(None if a is None else a.ctypes.data for a in arrays))
        if self.lib.fanns_csim_call(ptrs, *scalars):
            raise RuntimeError(f"C simulation of {self.project.path} failed: {self.lib.fanns_csim_error().decode()}")

    def prefetch(self, q_host: np.ndarray, budget: int, depth: int) -> int:
        """Copy the lists of the drafts' `depth` nearest cells into the cache within `budget` bytes:
        the plan's descriptors in one mode-2 call; the bytes copied from host memory."""
        ref = self._reference()
        ranked = ref.probe(ref.ref.rotate(np.asarray(q_host, dtype=np.int64)), min(depth, ref.design.index.nlist))
        desc = self.plan.prefetch(interleave(ranked), budget)
        beat = self.project.io.port_bits // 8
        words = np.zeros(-(-desc.size * 4 // beat) * beat // 4 or beat // 4, dtype="<u4")
        words[: desc.size] = desc.ravel()
        io = {"queries", "results", "cells", "seeds"}
        arrays = [words if n == "cells" else None if n in io else self.at(n) for n in self.args]
        self._call(arrays, [desc.shape[0], 0, PREFETCH_MODE])
        sent = int(self.list_bytes[desc[desc[:, 1] == FROM_HOST, 0]].sum())
        self.tier["prefetched_bytes"] += sent
        return sent

    def tier_stats(self) -> dict | None:
        """The host tier's counts so far (None without it), from the mirrored location table."""
        if not self.host_tier:
            return None
        hit = self.tier["cached_cells"] / self.tier["cells"] if self.tier["cells"] else None
        cache = self.project.design.stages.pq_dist.host_tier.cache_bytes
        return {"cache_bytes": cache, **self.tier, "cell_hit_rate": hit}

    def _count(self, nq: int, mode: int) -> None:
        """Which probed lists the run reads from the cache (the mirror), before it runs."""
        io = self.project.io
        if mode:
            cells = io.unpack_cells(self.at("cells"), nq, self.project.nprobe).astype(np.int64)
        else:
            ref = self._reference()
            beat = io.port_bits // 8
            q_fx = io.unpack_queries(self.at("queries")[: nq * io.query_beats * beat].tobytes(), nq)
            cells = ref.probe(ref.ref.rotate(q_fx), self.project.nprobe)
        real = cells[(cells >= 0) & (cells < self.project.design.index.nlist)]
        hit = self.plan.cached(real)
        nbytes = self.list_bytes[real]
        self.tier["cells"] += int(real.size)
        self.tier["cached_cells"] += int(hit.sum())
        self.tier["hbm_bytes"] += int(nbytes[hit].sum())
        self.tier["host_bytes"] += int(nbytes[~hit].sum())

    def execute(self) -> None:
        scalars = [self.decode(n) for n in ("nq", "load", "mode")[: 3 if self.iface.stepwise else 2]]
        if self.host_tier and scalars[1]:
            self.plan.reset()  # the kernel's index load empties its location table
        if self.host_tier and scalars[0]:
            self._count(scalars[0], scalars[2] if len(scalars) > 2 else 0)
        self._call([self.at(name) for name in self.args], scalars)
