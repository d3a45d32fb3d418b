"""What the RTL and HLS faces of a graph project share: design.yaml, the packer's images, the
quantised test queries and the DST reference's keys and statistics for them, and the common part
of the project record.

Why one module: both faces are checked against the same DST reference from the same images
(`fanns sim`), so these files are made once, here, and each face's generator
(`fanns.codegen.graph.rtl`, `fanns.codegen.graph.hls`) adds its own.
"""

from __future__ import annotations

import numpy as np

from fanns.codegen.project_files import design_and_images, generator
from fanns.design.graph import GraphDesign
from fanns.errors import FannsError
from fanns.images.graph import GraphImages, pack
from fanns.index.graph import GraphImage
from fanns.reference.graph import STATS, reference


def shared_files(
    design: GraphDesign, graph: GraphImage, queries_fx: np.ndarray, groundtruth: np.ndarray | None = None
) -> tuple[dict[str, bytes], GraphImages]:
    """The files a graph project of either face (RTL, HLS) shares: design.yaml, the packer's images,
    the quantised test queries and the DST reference's keys and statistics for them."""
    q = np.asarray(queries_fx)
    if q.ndim != 2 or q.shape[1] != design.graph.d or len(q) < 1:
        raise FannsError(f"test queries must be [nq >= 1, {design.graph.d}], got {q.shape}")
    images = pack(design, graph)
    ref = reference(design, graph, q)
    files = design_and_images(design, images) | {
        "data/queries.bin": images.io.pack_queries(q),
        "data/reference_keys.bin": np.ascontiguousarray(ref.keys.astype("<u8")).tobytes(),
        "data/reference_stats.bin": np.ascontiguousarray(
            np.stack([ref.stats[s] for s in STATS], 1).astype("<u4")
        ).tobytes(),
    }
    if groundtruth is not None:
        files["data/groundtruth.bin"] = np.ascontiguousarray(
            np.asarray(groundtruth)[:, : design.runtime.k].astype("<u4")
        ).tobytes()
    return files, images


def project_record(
    design: GraphDesign, graph: GraphImage, images: GraphImages, nq: int, groundtruth: bool, command: str
) -> dict:
    """The fanns_project.json keys both faces write; each face adds its own (hls or rtl)."""
    rt = design.runtime
    return {
        "generator": generator(command),
        "kind": "graph",
        "graph": {"kind": graph.kind, "nodes": graph.n, "max_degree": graph.max_degree, "entry": graph.entry},
        "runtime": {"l": rt.l, "k": rt.k, "mg": rt.mg, "mc": rt.mc},
        "io": images.manifest()["io"],
        "test": {"nq": nq, "stats": list(STATS), "groundtruth": groundtruth},
    }
