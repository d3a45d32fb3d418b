"""The retrieval units of every hardware option of a RAG description.

Why a module of its own: the three kinds come from three places — RAGO's CPU roofline
(`fanns.model.ivfpq.rag.retrieval.RooflineServers`), a fanns design evaluated by fanns's models
(`fanns.model.ivfpq.rag.fpga`), faiss-cpu measured here on a design's index (`fanns.model.ivfpq.rag.faiss_cpu`)
— and the pipeline sees only what they share (`fanns.model.ivfpq.rag.retrieval.Units`).
"""

from __future__ import annotations

from fanns.model.ivfpq.rag.faiss_cpu import faiss_units
from fanns.model.ivfpq.rag.fpga import design_units
from fanns.model.ivfpq.rag.retrieval import RooflineServers, Units
from fanns.model.ivfpq.rag.schema import HardwareOption, RagSpec
from fanns.progress import track


def option_units(o: HardwareOption) -> Units:
    if o.kind == "cpu":
        return RooflineServers(o.name, o.server)
    if o.kind == "fanns":
        return design_units(o.design, o.name, o.shard_vectors, o.per_host)
    return faiss_units(o.design, o.dataset, o.name, o.server, o.per_host)


def all_units(spec: RagSpec) -> dict[str, Units]:
    """Every option's units, in the description's order (designs evaluated, faiss measured)."""
    return {o.name: option_units(o) for o in track(spec.retrieval.hardware, "retrieval hardware options")}
