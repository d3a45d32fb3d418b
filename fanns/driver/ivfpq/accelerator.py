"""`Accelerator`: one search API over every backend (board, RTL simulation, C simulation, model).

A session: `load()` allocates every buffer in its bank, writes the memory images, programs the
buffer addresses and runs the index load; `search(queries, k)` quantises the queries on the host
(as `fanns.reference.ivfpq.host_queries`), splits them into batches of the I/O buffers' size,
and per batch writes the query buffer, programs `nq` (and nprobe, k where the device has them),
starts the device, waits for done, checks the status and reads the result keys back.

Step-wise search (docs/stepwise.md; the `mode` register of the HLS kernel and of the RTL core):
`search_steps(queries, steps)` yields the top-k over the cells scanned so far after each step of
host-given cells, so the caller can stop early; `search_step_keys` is one step on keys the caller
keeps (to interleave the steps of different queries). The kept state is the K result keys, on the
host: each step sends them back to the device as its seed keys.

Lookahead prefetch (docs/host_tier.md): `prefetch(drafts, budget_bytes)` copies, from host
memory into the card's cache, the lists of the cells the design's own IVF stage finds nearest to
the draft queries (the question before the LLM rewrites it), whole lists nearest first within the
budget, while the host waits for the final queries; `search` then reads cached lists from HBM and
the others from host memory, with the same results. `stats()["host_tier"]` counts the bytes of
each. On a project of a host-memory design (`stages.pq_dist.host_tier`) every backend that runs
the device (c-sim, rtl-sim, pynq) gets the same calls from here: the driver plans the copies
(`fanns.driver.ivfpq.host_tier.HostTierMirror`), writes their descriptors into the cell-list
buffer and runs the device's prefetch command (`mode` 2), as many runs as the buffer needs; the
mirror of the device's location table tells which probed lists each search finds cached. The
design's pinned lists are copied the same way right after the index load. The model backend
opened with `cache_bytes` emulates the tier itself (in list bytes, the pinned lists too).

Results: ids int64 [nq, k] and distances float32 [nq, k], nearest first. A result key is
``(dist << 32) | id`` (`fanns.numerics`); the fixed-point PQ distance is converted to the
dataset's units — squared L2 between the (normalised, for angular data) query and the vector's
PQ reconstruction — by ``dist * 2**lut_shift / scale**2`` (`IvfPqFormat.dist_to_float`; exact up
to the LUT's floor rounding). Slots the device could not fill (fewer codes scanned than k) hold
the sentinel key: id -1 and distance +inf, as faiss does.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

import numpy as np

from fanns.driver.ivfpq.backend import Backend
from fanns.driver.ivfpq.host_tier import PREFETCH_MODE, HostTierMirror
from fanns.driver.ivfpq.plan import Buffer, Interface
from fanns.driver.ivfpq.project import Project
from fanns.errors import FannsError
from fanns.index.ivfpq import host_vectors
from fanns.index.ivfpq_format import check_query_range
from fanns.numerics import ID_BITS, sentinel, split_keys
from fanns.reference.ivfpq import host_queries

GRAPH_PARAMS = ("mg", "mc", "ef")
PAD_ID = (1 << ID_BITS) - 1
TIMEOUT = 600.0
"""Seconds a run may take before the driver gives up (a simulator is slow)."""


def keys_to_results(keys: np.ndarray, fmt) -> tuple[np.ndarray, np.ndarray]:
    """Result keys uint64 [nq, k] -> (ids int64, distances float32) (see the module docstring)."""
    dist, ids = split_keys(keys)
    pad = ids == PAD_ID
    ids = np.where(pad, -1, ids.astype(np.int64))
    distances = np.where(pad, np.inf, fmt.dist_to_float(dist)).astype(np.float32)
    return ids, distances


class Accelerator:
    """A generated accelerator behind one backend (see the module docstring)."""

    def __init__(self, project: Project, backend: Backend, batch: int | None = None):
        self.project, self.backend = project, backend
        self.iface = Interface(project)
        backend.attach(project, self.iface)
        limit = self.iface.max_batch()
        if limit < 1:
            raise FannsError(
                f"the images leave no room for I/O buffers in {self.iface.banks['queries']}",
                hint="regenerate the design with fewer images in the I/O channel",
            )
        if batch is not None and not 1 <= batch <= limit:
            raise FannsError(
                f"batch {batch}: the I/O buffers hold 1..{limit} queries in {self.iface.banks['queries']}",
                hint=f"use a batch of 1..{limit}",
            )
        self.batch = min(batch or backend.default_batch, limit)
        self.nprobe, self.k = project.nprobe, project.k
        self.buffers: dict[str, Buffer] = {}
        self.addresses: dict[str, int] = {}
        self.loaded = False
        self._calls: list[tuple[int, float]] = []  # (queries, seconds) of every search call
        self._cycles: dict[str, int] = {}
        self._run_cycles = 0
        self._runs = 0
        self._clipped = np.zeros(2)  # (query elements clipped, query elements) over every search call
        emulated = getattr(backend, "host_tier", False)  # the model backend keeps its own tier
        host_tier = project.design.stages.pq_dist.host_tier is not None
        self.mirror = HostTierMirror(project) if host_tier and not emulated else None

    # -- parameters ------------------------------------------------------------------------------
    @property
    def K(self) -> int:  # noqa: N802 - the design's K
        return self.project.k

    def set_params(self, nprobe: int | None = None, k: int | None = None, **graph: int) -> None:
        """Run-time parameters: nprobe (1..the design's; an HLS kernel probes exactly the design's),
        k (1..K). Graph parameters (mg, mc, ef) exist only for graph designs."""
        unknown = sorted(set(graph) - set(GRAPH_PARAMS))
        if unknown:
            raise FannsError(f"unknown parameter(s) {', '.join(unknown)}", hint="IVF-PQ designs take nprobe and k")
        if graph:
            raise FannsError(
                f"{', '.join(sorted(graph))}: graph-search parameters, but {self.project.path} is an IVF-PQ project",
                hint="IVF-PQ designs take nprobe and k; mg, mc and ef apply to graph (Falcon) designs",
            )
        if nprobe is not None:
            nprobe = self._int("nprobe", nprobe, self.project.nprobe)
            if nprobe != self.project.nprobe and not self.iface.runtime_nprobe:
                raise FannsError(
                    f"nprobe {nprobe}: the HLS kernel probes a fixed nprobe = {self.project.nprobe}",
                    hint=(
                        "regenerate the HLS project with another nprobe, or "
                        "use the RTL project (nprobe is a register there)"
                    ),
                )
            self.nprobe = nprobe
        if k is not None:
            self.k = self._int("k", k, self.project.k)

    @staticmethod
    def _int(name: str, value, most: int) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise FannsError(f"{name} must be an integer, got {value!r}")
        if not 1 <= value <= most:
            raise FannsError(
                f"{name} {value} is out of range: the design serves {name} 1..{most}",
                hint=f"use {name} <= {most}, or generate a design with a larger {name}",
            )
        return int(value)

    # -- session -----------------------------------------------------------------------------------
    def plan(self) -> list[tuple[Buffer, str]]:
        """Every buffer of the session with the register holding its address, in allocation order."""
        bufs = self.iface.image_buffers() + self.iface.io_buffers(self.batch)
        return [(b, self.iface.address_register(b.name)) for b in bufs]

    def _write(self, name: str, value: int) -> None:
        for off, word in self.iface.encode(name, value):
            self.backend.write_register(off, word)

    def _read(self, name: str) -> int:
        words = {off: self.backend.read_register(off) for off in self.iface.read_words(name)}
        return self.iface.decode(words, name)

    def _run(self, nq: int, load: bool, mode: int = 0) -> None:
        for name, value in self.iface.run_values(nq, self.nprobe, self.k, load, mode).items():
            self._write(name, value)
        ctrl = self.iface.control_offset
        if self.iface.clear_word is not None:
            self.backend.write_register(ctrl, self.iface.clear_word)
        self.backend.write_register(ctrl, self.iface.start_word)
        self.backend.wait(ctrl, self.iface.done_mask, TIMEOUT)
        if self.iface.kind == "rtl":
            err = self.iface.status_error(self._read("status"))
            if err:
                raise FannsError(
                    f"{self.backend.name}: {err}", hint="check nprobe, k and the buffer addresses against rtl/regmap.md"
                )
        self._runs += 1
        for name in self.iface.cycle_registers if self.backend.has_cycles else ():
            self._cycles[name] = self._read(name)
        if "cycles" in self._cycles:
            self._run_cycles += self._cycles["cycles"]

    def load(self) -> Accelerator:
        """Place every buffer in its bank, write the images, program the addresses, load the index."""
        if self.loaded:
            return self
        plan = self.plan()
        for buf, _ in plan:  # every allocation first: a simulator sizes its memories from them
            self.buffers[buf.name], self.addresses[buf.name] = buf, self.backend.allocate(buf)
        for buf, reg in plan:
            if buf.image is not None:
                self.backend.write_buffer(buf, self.project.images.get(buf.image).data)
            self._write(reg, self.addresses[buf.name])
        self._run(0, load=True)
        if self.mirror is not None:  # the index load emptied the device's location table: place the pinned lists
            self._send(self.mirror.loaded())
        self.loaded = True
        return self

    def check_queries(self, queries) -> np.ndarray:
        """Queries as a float array [nq, d], or a clear error."""
        q = np.asarray(queries)
        if q.dtype.kind not in "fiu":
            raise FannsError(
                f"queries of dtype {q.dtype}: expected real numbers",
                hint="pass float32 vectors (integer vectors such as SIFT's uint8 work too)",
            )
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != self.project.d:
            raise FannsError(
                f"queries of shape {q.shape}: this accelerator serves d = {self.project.d}",
                hint=f"pass an array [nq, {self.project.d}]",
            )
        if q.dtype.kind == "f" and not np.isfinite(q).all():
            raise FannsError("queries contain NaN or infinity")
        # the device saturates what its number format cannot hold: refuse queries it would answer
        # as different ones, and count the few clipped elements it tolerates (stats()["clipped"])
        frac = check_query_range(self.project.format, host_vectors(q, self.project.metric), "queries")
        self._clipped += (frac * q.size, q.size)
        return q

    def search_keys(self, queries, k: int | None = None) -> np.ndarray:
        """Result keys uint64 [nq, k] of float queries [nq, d] (ascending)."""
        q = self.check_queries(queries)
        k = self.k if k is None else self._int("k", k, self.project.k)
        if not self.loaded:
            self.load()
        start = time.perf_counter()
        q_host = host_queries(self.project.format, self.project.metric, q)
        io = self.project.io
        beat = io.port_bits // 8
        stride = io.result_beats * beat
        out = np.empty((q_host.shape[0], k), dtype=np.uint64)
        saved, self.k = self.k, k
        try:
            for first in range(0, q_host.shape[0], self.batch):
                part = q_host[first : first + self.batch]
                nq = part.shape[0]
                self.backend.write_buffer(self.buffers["queries"], io.pack_queries(part))
                if self.mirror is not None:
                    self.mirror.searched(self.mirror.cells(part, self.nprobe))
                self._run(nq, load=False)
                raw = self.backend.read_buffer(self.buffers["results"], nq * stride)
                rows = np.frombuffer(raw, dtype=np.uint8).reshape(nq, stride)[:, : 8 * k]
                out[first : first + nq] = np.ascontiguousarray(rows).view("<u8")
        finally:
            self.k = saved
        self._calls.append((q_host.shape[0], time.perf_counter() - start))
        return out

    # -- lookahead prefetch (docs/host_tier.md) ----------------------------------------------------
    def prefetch(self, drafts, budget_bytes: int, depth: int | None = None) -> int:
        """Prefetch for draft queries [nq, d]: the lists of each draft's `depth` nearest cells
        (default: all of them, ranked), interleaved rank by rank, whole lists within `budget_bytes`
        (TeleRAG's b_p = link bandwidth x the time the LLM leaves); returns the bytes copied."""
        emulated = getattr(self.backend, "host_tier", False)
        if not emulated and self.mirror is None:
            raise FannsError(
                f"{self.backend.name}: no host-memory tier to prefetch into",
                hint=(
                    "generate the project for a host-memory design (stages.pq_dist.host_tier, which the DSE "
                    "chooses for an index larger than the board), or emulate one with the model backend: "
                    "fanns.driver.open(path, backend='model', cache_bytes=N) (docs/host_tier.md)"
                ),
            )
        q = self.check_queries(drafts)
        nlist = self.project.design.index.nlist
        budget = self._count_arg("budget_bytes", budget_bytes)
        depth = nlist if depth is None else self._int("depth", depth, nlist)
        if not self.loaded:
            self.load()
        q_host = host_queries(self.project.format, self.project.metric, q)
        if emulated:
            return self.backend.prefetch(q_host, budget, depth)
        desc = self.mirror.prefetch(q_host, budget, depth)
        self._send(desc)
        return self.mirror.sent(desc)

    def _send(self, desc: np.ndarray) -> None:
        """Run the device's prefetch command on descriptors [n, 4], as many runs as the cell-list
        buffer needs."""
        per_run = self.buffers["cells"].nbytes // desc.itemsize // desc.shape[1]
        for first in range(0, desc.shape[0], per_run):
            part = np.ascontiguousarray(desc[first : first + per_run], dtype="<u4")
            self.backend.write_buffer(self.buffers["cells"], part.tobytes())
            self._run(part.shape[0], load=False, mode=PREFETCH_MODE)

    @staticmethod
    def _count_arg(name: str, value) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise FannsError(f"{name} must be an integer >= 0, got {value!r}")
        return int(value)

    # -- step-wise search (docs/stepwise.md) ------------------------------------------------------
    def _check_stepwise(self) -> None:
        if not self.iface.stepwise:
            what = "RTL core" if self.iface.kind == "rtl" else "HLS kernel"
            raise FannsError(
                f"{self.backend.name}: this {what} (generated before the mode) has no step-wise mode "
                "(cell lists from the host, seed keys)",
                hint="regenerate the project, whose device then has it; docs/stepwise.md",
            )

    def _check_cells(self, cells, nq: int, scanned: np.ndarray | None) -> np.ndarray:
        """One step's cell lists as int64 [nq, c] (-1: none), or a clear error; marks them in
        `scanned` [nq, nlist] (a cell scanned twice for a query would repeat its keys)."""
        if not isinstance(cells, np.ndarray) and any(np.ndim(row) != 1 for row in cells):
            raise FannsError("a step's cells must be one list of cell ids per query")
        if not isinstance(cells, np.ndarray):  # per-query lists of any lengths: pad with -1
            width = max((len(row) for row in cells), default=0)
            cells = np.array([list(row) + [-1] * (width - len(row)) for row in cells], dtype=np.int64).reshape(
                -1, width
            )
        if cells.ndim != 2 or cells.shape[0] != nq or cells.dtype.kind not in "iu":
            raise FannsError(
                f"a step's cells of shape {cells.shape} ({cells.dtype}): expected integers [nq = {nq}, c]",
                hint="one row of cell ids per query, padded with -1",
            )
        nlist = self.project.design.index.nlist
        cells = cells.astype(np.int64)
        if cells.size and (cells.min() < -1 or cells.max() >= nlist):
            raise FannsError(
                f"cell ids {cells.min()}..{cells.max()}: the index has cells 0..{nlist - 1} (-1 pads a row)"
            )
        rows, cols = np.nonzero(cells >= 0)
        mark = np.zeros((nq, nlist), dtype=np.int64) if scanned is None else scanned.astype(np.int64)
        np.add.at(mark, (rows, cells[rows, cols]), 1)
        if (mark > 1).any():
            q, cell = np.argwhere(mark > 1)[0]
            raise FannsError(
                f"query {q} scans cell {cell} twice (within a step or across its steps)",
                hint="each cell of a query is scanned once: its keys are in the kept top-K already",
            )
        if scanned is not None:
            scanned |= mark > 0
        return cells

    def _step_keys(self, q_host: np.ndarray, cells: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Runs of mode 1: the device's cell lists hold nprobe slots, so a wider step is several
        runs, each seeded by the one before; batches of the I/O buffers' size."""
        io, nprobe = self.project.io, self.project.nprobe
        stride = io.result_beats * io.port_bits // 8
        keys = seeds.copy()
        for at in range(0, max(cells.shape[1], 1), nprobe):
            part_cells = cells[:, at : at + nprobe]
            for first in range(0, q_host.shape[0], self.batch):
                rows = slice(first, first + self.batch)
                nq = q_host[rows].shape[0]
                self.backend.write_buffer(self.buffers["queries"], io.pack_queries(q_host[rows]))
                self.backend.write_buffer(self.buffers["cells"], io.pack_cells(part_cells[rows], nprobe))
                self.backend.write_buffer(self.buffers["seeds"], io.pack_results(keys[rows]))
                if self.mirror is not None:
                    self.mirror.searched(part_cells[rows])
                self._run(nq, load=False, mode=1)
                raw = self.backend.read_buffer(self.buffers["results"], nq * stride)
                keys[rows] = io.unpack_results(raw, nq)
        return keys

    def search_step_keys(self, queries, cells, seed_keys: np.ndarray | None = None) -> np.ndarray:
        """One step: the K smallest keys uint64 [nq, K] of `seed_keys` (the K keys an earlier step
        returned for each query, ascending; None: the first step) and of every code in the
        queries' `cells` ([nq, c] ids, -1 padding, or per-query lists). The caller keeps the keys
        and scans each cell of a query once (not checked across calls: see `search_steps`)."""
        self._check_stepwise()
        q = self.check_queries(queries)
        return self._step(q, self._check_cells(cells, q.shape[0], None), seed_keys)

    def _step(self, q: np.ndarray, cells: np.ndarray, seed_keys: np.ndarray | None) -> np.ndarray:
        fill = sentinel(self.project.format.pq_key_bits)
        seeds = np.full((q.shape[0], self.project.k), fill, dtype=np.uint64)
        if seed_keys is not None:
            seeds = np.asarray(seed_keys)
            if seeds.shape != (q.shape[0], self.project.k) or seeds.dtype != np.uint64:
                raise FannsError(
                    f"seed keys of shape {seeds.shape} ({seeds.dtype}): "
                    f"expected uint64 [{q.shape[0]}, {self.project.k}]",
                    hint="pass back the keys an earlier step returned",
                )
            if (seeds[:, 1:] < seeds[:, :-1]).any():
                raise FannsError("seed keys must be ascending per query", hint="pass back a step's keys unchanged")
        if not self.loaded:
            self.load()
        start = time.perf_counter()
        keys = self._step_keys(host_queries(self.project.format, self.project.metric, q), cells, seeds)
        self._calls.append((q.shape[0], time.perf_counter() - start))
        return keys

    def search_steps(self, queries, steps: Iterable, k: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Step-wise search: for each step of `steps` (cell lists as `search_step_keys` takes
        them, taken one at a time, so a step may be chosen after the last result), yields
        (ids int64 [nq, k], distances float32 [nq, k]): the k nearest over every cell scanned so
        far. Early stop: stop iterating. A cell scanned twice for a query is refused."""
        self._check_stepwise()
        q = self.check_queries(queries)
        k = self.k if k is None else self._int("k", k, self.project.k)
        scanned = np.zeros((q.shape[0], self.project.design.index.nlist), dtype=bool)
        keys = None
        for cells in steps:
            keys = self._step(q, self._check_cells(cells, q.shape[0], scanned), keys)
            yield keys_to_results(keys[:, :k], self.project.format)

    def search(self, queries, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [nq, k], distances float32 [nq, k]) of float queries [nq, d]; k defaults to
        the one `set_params` chose (else the design's K)."""
        return keys_to_results(self.search_keys(queries, k), self.project.format)

    def stats(self) -> dict:
        """Runs and queries so far, device cycles (from the cycle registers, where the device has
        them), measured QPS and per-call latency percentiles (host wall clock), and the fraction of
        query elements the number format clipped (at most `fanns.index.ivfpq_format.MAX_CLIPPED`, else refused)."""
        queries = sum(n for n, _ in self._calls)
        seconds = sum(s for _, s in self._calls)
        lat = np.array([s for _, s in self._calls]) if self._calls else None
        out = {
            "backend": self.backend.name,
            "project": self.project.kind,
            "batch": self.batch,
            "runs": self._runs,
            "calls": len(self._calls),
            "queries": queries,
            "qps": queries / seconds if seconds > 0 else None,
            "latency_ms": None
            if lat is None
            else {p: float(np.percentile(lat, int(p[1:])) * 1e3) for p in ("p50", "p95", "p99")},
            "cycles": None,
            "clipped": float(self._clipped[0] / self._clipped[1]) if self._clipped[1] else 0.0,
        }
        tier = self.mirror.stats() if self.mirror is not None else getattr(self.backend, "tier_stats", lambda: None)()
        if tier is not None:
            out["host_tier"] = tier
        if self._cycles:
            # total: cycles of every run; run_cycles: the last run's; the other registers as the device names them
            out["cycles"] = {
                "total": self._run_cycles,
                **{"run_cycles" if k == "cycles" else k: v for k, v in sorted(self._cycles.items())},
            }
        return out

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> Accelerator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
