"""What the HLS and RTL faces of an IVF-PQ project share: the test data the hosts and `fanns sim`
check against (quantised queries, exact neighbours, the reference model's result keys; for a
host-memory design the descriptor plan the host programs replay, `fanns.codegen.ivfpq.prefetch_files`),
the design and images, and the common part of the project record.

Why one module: `fanns generate` puts both faces in one project with one copy of these files
(`fanns.codegen.ivfpq.project` checks that they are the same bytes), so they are made once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fanns.codegen.ivfpq.prefetch_files import PLAN_FILE, host_plan
from fanns.codegen.project_files import design_and_images, generator
from fanns.design.ivfpq import IvfPqDesign
from fanns.errors import FannsError
from fanns.images.ivfpq import MemoryImages
from fanns.index.ivfpq import IvfPqIndexData
from fanns.outputs import FileContent
from fanns.reference.ivfpq_streams import DesignReference

if TYPE_CHECKING:  # hls.py imports this module; TestQueries is only a type here
    from fanns.codegen.ivfpq.hls import TestQueries


def shared_files(
    design: IvfPqDesign, data: IvfPqIndexData, test: TestQueries, images: MemoryImages
) -> tuple[dict[str, FileContent], dict | None]:
    """design.yaml, `images/` and `data/`: quantised test queries, their exact neighbours and the
    reference model's keys; for a host-memory design the prefetch plan, whose summary is returned
    beside the files (None for other designs)."""
    queries, gt = np.asarray(test.queries), np.asarray(test.groundtruth)
    if queries.ndim != 2 or queries.shape[1] != design.index.d or queries.shape[0] < 1:
        raise FannsError(
            f"test queries must be [nq, {design.index.d}], got {queries.shape}",
            hint="use queries of the dataset the index was trained on",
        )
    if gt.ndim != 2 or gt.shape[0] != queries.shape[0] or gt.shape[1] < design.k:
        raise FannsError(f"ground truth must be [{queries.shape[0]}, >= {design.k}], got {gt.shape}")
    ref = DesignReference(design, data)
    q_host = ref.ref.quantize_queries(queries)
    files = design_and_images(design, images) | {
        "data/queries.bin": images.io.pack_queries(q_host),
        "data/groundtruth.bin": np.ascontiguousarray(gt[:, : design.k].astype("<u4")).tobytes(),
        "data/reference_keys.bin": np.ascontiguousarray(ref.search_keys(queries).astype("<u8")).tobytes(),
    }
    if design.stages.pq_dist.host_tier is None:
        return files, None
    plan = host_plan(design, ref, q_host, images)
    files[PLAN_FILE] = plan.to_bytes()
    return files, plan.summary()


def project_record(
    design: IvfPqDesign,
    data: IvfPqIndexData,
    test: TestQueries,
    images: MemoryImages,
    command: str,
    plan: dict | None = None,
) -> dict:
    """The fanns_project.json keys both faces write; each face adds its own (kernel or rtl). `plan`:
    a host-memory design's prefetch plan summary (`shared_files`), kept under `test`."""
    return {
        "generator": generator(command),
        "index": design.index.factory,
        "metric": data.metric,
        "nprobe": design.nprobe,
        "k": design.k,
        "format": {key: v for key, v in design.format.to_dict().items() if key != "source"},
        "io": images.manifest()["io"],
        "test": {"nq": int(np.asarray(test.queries).shape[0]), "gt_k": design.k}
        | ({"prefetch_plan": plan} if plan is not None else {}),
    }
