"""Device memory images of a graph design — the one packer of the graph HLS kernel and RTL.

Why one module: the HLS kernel, the RTL pipeline, the XRT host, the C-simulation library and
the cocotb bench all read the same bytes, so the layout of docs/graph_architecture.md exists
once: the graph channels come from `GraphImage.pack` (node i in channel i % C at row i // C:
adjacency rows ``[degree u32][max_degree ids u32, padded with 0xFFFFFFFF]`` aligned to 64 bytes,
vector rows of d little-endian elements aligned to 64 bytes) and the host I/O buffers from
`GraphIo`: queries as rows of `query_row_bytes`, results as rows of `result_row_bytes` holding
k_max uint64 keys ``dist << 32 | id`` (all ones where fewer were found) and then the statistics
``cycles | hops << 32``, ``checks | visited << 32``, ``groups`` (uint64 each, zeros after).

`write` puts every image and `manifest.json` (sizes, sha256, layouts) into a folder; `read`
checks them back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fanns.design.graph import RESULT_STATS, GraphDesign
from fanns.errors import FannsError
from fanns.images.base import Image, ImageSet, read_images, read_manifest
from fanns.index.graph import GraphImage

MANIFEST_VERSION = 1
KEY_BYTES = 8
MISSING_KEY = np.uint64(2**64 - 1)


@dataclass(frozen=True)
class GraphIo:
    """Host buffers: queries in, result rows out (see the module docstring)."""

    d: int
    elem_bytes: int
    signed: bool
    k_max: int
    query_row_bytes: int
    result_row_bytes: int

    @classmethod
    def of(cls, design: GraphDesign) -> GraphIo:
        g = design.graph
        return cls(g.d, g.elem_bytes, g.signed, design.queues.k_max, design.query_row_bytes, design.result_row_bytes)

    def pack_queries(self, q_fx: np.ndarray) -> bytes:
        q_fx = np.asarray(q_fx)
        if q_fx.ndim != 2 or q_fx.shape[1] != self.d:
            raise FannsError(f"queries must be [nq, {self.d}], got shape {q_fx.shape}")
        dtype = np.dtype(f"<{'i' if self.signed else 'u'}{self.elem_bytes}")
        buf = np.zeros((len(q_fx), self.query_row_bytes), dtype=np.uint8)
        buf[:, : self.d * self.elem_bytes] = (
            np.ascontiguousarray(q_fx.astype(dtype)).view(np.uint8).reshape(len(q_fx), -1)
        )
        return buf.tobytes()

    def unpack_results(self, raw: bytes, nq: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Result rows as (keys uint64 [nq, k_max], {statistic: int64 [nq]})."""
        rows = np.frombuffer(raw, dtype=np.uint8, count=nq * self.result_row_bytes).reshape(nq, self.result_row_bytes)
        keys = np.ascontiguousarray(rows[:, : self.k_max * KEY_BYTES]).view("<u8").reshape(nq, self.k_max)
        words = (
            np.ascontiguousarray(rows[:, self.k_max * KEY_BYTES : self.k_max * KEY_BYTES + 24])
            .view("<u4")
            .reshape(nq, 6)
        )
        stats = dict(zip(RESULT_STATS, (words[:, 0], words[:, 1], words[:, 2], words[:, 3], words[:, 4])))
        return keys, {k: v.astype(np.int64) for k, v in stats.items()}

    def to_dict(self) -> dict:
        return {
            "d": self.d,
            "elem_bytes": self.elem_bytes,
            "signed": self.signed,
            "k_max": self.k_max,
            "query_row_bytes": self.query_row_bytes,
            "result_row_bytes": self.result_row_bytes,
            "key_bytes": KEY_BYTES,
            "stats": list(RESULT_STATS),
        }


def split_keys(keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first k result keys as (ids, dists), int64, -1 where the key is missing."""
    keys = np.asarray(keys, dtype=np.uint64)[:, :k]
    missing = keys == MISSING_KEY
    ids = np.where(missing, -1, (keys & np.uint64(0xFFFFFFFF)).astype(np.int64))
    dists = np.where(missing, -1, (keys >> np.uint64(32)).astype(np.int64))
    return ids, dists


@dataclass(frozen=True)
class GraphImages(ImageSet):
    """The graph channels' images of one design and its I/O layout."""

    io: GraphIo
    info: dict = field(default_factory=dict)

    def manifest(self) -> dict:
        return {
            "version": MANIFEST_VERSION,
            "kind": "graph",
            "io": self.io.to_dict(),
            "info": self.info,
            "images": [img.record() for img in self.images],
        }

    @classmethod
    def read(cls, folder: Path) -> GraphImages:
        folder = Path(folder)
        man = read_manifest(folder)
        if man.get("version") != MANIFEST_VERSION or man.get("kind") != "graph":
            raise FannsError(f"{folder}/manifest.json is not a graph manifest of version {MANIFEST_VERSION}")
        images = read_images(folder, man)
        io = {k: v for k, v in man["io"].items() if k in GraphIo.__dataclass_fields__}
        return cls(tuple(images), GraphIo(**io), man.get("info", {}))

    def channel_images(self) -> list[dict[str, np.ndarray]]:
        """Per graph channel {"adjacency", "vectors"} as uint8 arrays (the `GraphImage.pack` form)."""
        out = []
        c = 0
        while True:
            try:
                adj, vec = self.get(f"adjacency_{c}"), self.get(f"vectors_{c}")
            except KeyError:
                return out
            out.append(
                {
                    "adjacency": np.frombuffer(adj.data, dtype=np.uint8),
                    "vectors": np.frombuffer(vec.data, dtype=np.uint8),
                }
            )
            c += 1


def check_graph(design: GraphDesign, graph: GraphImage) -> None:
    """The graph must be the one the design was made for (shape, entry, number format)."""
    g = design.graph
    got = (graph.kind, graph.n, graph.fmt.d, graph.max_degree, graph.entry, graph.fmt.vec_bits, graph.fmt.signed)
    want = (g.kind, g.n, g.d, g.max_degree, g.entry, g.vec_bits, g.signed)
    if got != want:
        names = ("kind", "n", "d", "max_degree", "entry", "vec_bits", "signed")
        diff = ", ".join(f"{n}: graph {a!r} vs design {b!r}" for n, a, b in zip(names, got, want) if a != b)
        raise FannsError(
            f"the graph does not match the design ({diff})",
            hint="use the graph the design was made for, or rerun the DSE",
        )


def pack(design: GraphDesign, graph: GraphImage) -> GraphImages:
    """The images of `graph` for `design` (one adjacency and one vector image per graph channel)."""
    check_graph(design, graph)
    mem = design.memory
    images = []
    for c, part in enumerate(graph.pack(design.channels)):
        layout = {
            "nodes": int((graph.n - c + design.channels - 1) // design.channels),
            "first_node": c,
            "stride": design.channels,
        }
        images.append(
            Image(
                f"adjacency_{c}",
                "graph",
                mem.kind,
                mem.channels[c],
                part["adjacency"].tobytes(),
                {**layout, "row_bytes": design.adjacency_row_bytes},
            )
        )
        images.append(
            Image(
                f"vectors_{c}",
                "graph",
                mem.kind,
                mem.channels[c],
                part["vectors"].tobytes(),
                {**layout, "row_bytes": design.vector_row_bytes},
            )
        )
    info = {
        "nodes": graph.n,
        "entry": graph.entry,
        "max_degree": graph.max_degree,
        "d": graph.fmt.d,
        "channels": design.channels,
    }
    return GraphImages(tuple(images), GraphIo.of(design), info)


def unpack(images: GraphImages, design: GraphDesign) -> GraphImage:
    """The graph back from its images (the inverse of `pack`, for tests and tools)."""
    g = design.graph
    return GraphImage.unpack(images.channel_images(), g.n, g.max_degree, g.entry, g.fmt, g.kind)
