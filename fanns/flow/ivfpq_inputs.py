"""What a generator needs besides design.yaml: the trained index of the exploration and the test
queries (with exact neighbours) the generated hosts check against.

Why one place: the HLS and the RTL generators (and `fanns generate`) take the same inputs and
must refuse the same mismatches — an exploration without the design's index, a dataset that is
not the one explored — with the same clear errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.datasets.loader import resolve_dataset
from fanns.design.ivfpq import IvfPqDesign
from fanns.errors import FannsError
from fanns.index.goals import goal_entry
from fanns.index.ivfpq import IvfPqIndexData, extract, host_vectors
from fanns.index.ivfpq_lists import read_index
from fanns.model.ivfpq.workload import read_explore
from fanns.outputs import verify_files
from fanns.paths import inside


@dataclass(frozen=True)
class GenerateInputs:
    """The design, its trained index, the explorer's record of that index, and test queries."""

    design: IvfPqDesign
    data: IvfPqIndexData
    record: dict
    test: TestQueries
    dataset: str

    def hw_recall(self) -> float | None:
        """The explorer's hardware-faithful recall for the design's goal over all its queries —
        the queries a simulation of the project runs — (None if not recorded)."""
        if not self.design.goal:
            return None
        entry = goal_entry(self.record.get("goals"), self.design.goal)
        if not isinstance(entry, dict):
            return None
        return entry.get("all_queries_hw_recall") if entry.get("nprobe") == self.design.nprobe else None


def index_record(explore: dict, explore_dir: Path, design: IvfPqDesign) -> dict:
    names = [rec.get("index") for rec in explore["indexes"]]
    for rec in explore["indexes"]:
        if rec.get("index") == design.index.factory:
            return rec
    raise FannsError(
        f"{explore_dir}/explore.json has no index {design.index.factory} (the design's)",
        hint=f"explored indexes: {', '.join(map(str, names))}; pass the exploration the design was made from",
    )


def load_index(explore_dir: Path, record: dict, metric: str) -> IvfPqIndexData:
    """The trained faiss index of an explorer record, as arrays (its inverted lists read from their
    own file when the exploration kept them on disk: `lists`)."""

    where = f"{explore_dir}/explore.json: {record.get('index')}"
    rels = [record.get("path")] + ([record["lists"]] if "lists" in record else [])
    files = [inside(Path(explore_dir), rel, f"{where}: {key}") for rel, key in zip(rels, ("path", "lists"))]
    for file in files:
        if not file.is_file():
            raise FannsError(f"{file}: trained index not found", hint="re-run `fanns explore` into this folder")
    verify_files(Path(explore_dir), rels, "exploration")
    try:
        index = read_index(files[0])
    except RuntimeError:
        hint = "re-run `fanns explore` with --force"
        raise FannsError(f"{files[0]}: not a readable faiss index", hint=hint) from None
    return extract(index, metric)


def load_inputs(
    design_path: Path, explore_dir: Path, dataset: str | None = None, queries: int | None = None
) -> GenerateInputs:
    """Load and cross-check everything a generator needs (see the module docstring)."""
    design = IvfPqDesign.load(Path(design_path))
    explore = read_explore(Path(explore_dir))
    record = index_record(explore, Path(explore_dir), design)
    ds, spec = resolve_dataset(explore.get("dataset"), dataset, "fanns explore", f"{explore_dir}/explore.json")
    data = load_index(explore_dir, record, ds.metric)
    used = int(explore.get("dataset", {}).get("queries_used", ds.nq))
    nq = used if queries is None else queries
    if not 1 <= nq <= ds.nq:
        raise FannsError(f"--queries {nq}: the dataset has {ds.nq} queries", hint=f"use 1..{ds.nq}")
    test = TestQueries(
        queries=host_vectors(np.asarray(ds.queries[:nq]), ds.metric),
        groundtruth=ds.groundtruth(design.k)[:nq],
    )
    return GenerateInputs(design, data, record, test, spec)
