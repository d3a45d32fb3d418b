"""The explorer's grid defaults, and the training of its indexes, here or on a cluster (`--cluster`).

Why: training and filling the indexes is most of an exploration's time, and the indexes of the
grid are independent of one another, except that an OPQ index reuses the coarse quantizer of its
plain twin and the OPQ rotation of its m (`fanns.index.ivfpq_shared`). So the explorer can send
them to an existing Dask or Ray cluster (`fanns.tools.parallel.map_jobs`) in two rounds: the
rotations and the plain indexes first, then the OPQ indexes with what they reuse.

A job carries the dataset's spec and content hash, not its vectors (a 1M x 768 set is 3 GB per
job): the worker opens the dataset itself — a built-in is built in the worker's own cache, the
same bytes on every machine; a file must be readable at the same absolute path (a shared file
system) — and refuses one whose content differs. It returns the index serialized as faiss writes
it, which the explorer stores in its index cache: the exploration then goes on as if it had
trained the indexes itself, with the same files and the same results. The training rows are
chosen here for both (`training_rows`), so local and remote training see the same sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import faiss
import numpy as np

from fanns.datasets.dataset import Dataset
from fanns.datasets.loader import load_dataset
from fanns.errors import FannsError
from fanns.index.ivfpq import (
    OPQ_TRAIN_POINTS,
    PQ_CENTROIDS,
    ListFiller,
    check_opq_sample,
    factory_string,
    host_vectors,
    train_index,
)
from fanns.index.ivfpq_shared import Coarse, train_rotation, train_shared_index


def default_nlists(n: int) -> list[int]:
    """Powers of two from about sqrt(N)/4 to 4*sqrt(N), with at least 39 vectors per cell."""
    root = math.sqrt(n)
    lo = 2 ** math.ceil(math.log2(max(8.0, root / 4)))
    hi = min(2 ** math.floor(math.log2(4 * root)), 2 ** math.floor(math.log2(max(1, n // 39))))
    return [2**e for e in range(int(math.log2(lo)), int(math.log2(max(lo, hi))) + 1)]


def default_m(d: int) -> int:
    """16 sub-quantizers when d allows it, else the largest divisor of d not above 16."""
    return max(m for m in range(1, 17) if d % m == 0)


FINE_M_FROM_D = 256
"""From this dimension on, the default grid adds a finer PQ (about d/8 sub-quantizers)."""
MAX_DEFAULT_M = 128
"""The finest default m: the largest the design fuzz draws (`fanns.flow.design_fuzz.MAX_M`)."""


def default_ms(d: int) -> list[int]:
    """The m of the default grid: `default_m(d)`, and from d = 256 on also the largest divisor of d
    not above min(d/8, 128).

    Why: 16 codes of 24 to 96 dimensions each lose so much at 384-d and above that a recall goal
    needs hundreds of probes (builtin:text-384 at R@10 = 0.6: OPQ16 at nprobe about 300, the U55C
    design 3.0x faiss-cpu; with this grid IVF512,PQ48 at nprobe 4, 10.3x, as recorded in
    benchmarks/results/datasets_text384.json). Near d/8 (2 to 8 dimensions per code) recall
    comes back with few probes, and the DSE weighs the longer codes against the fewer lists. PQ
    training and encoding cost about the same for any m (256 x d per vector), so each extra m
    about doubles the exploration."""
    ms = {default_m(d)}
    if d >= FINE_M_FROM_D:
        ms.add(max(m for m in range(1, min(d // 8, MAX_DEFAULT_M) + 1) if d % m == 0))
    return sorted(ms)


def train_size_for(n: int, nlist: int) -> int:
    """64 vectors per cell (at least 10,000 for the 256-centroid PQ, at most 65,536).

    faiss's practice is 39 to 256 training points per centroid (it warns below 39 and samples
    down above 256). 64 per cell keeps the IVF k-means cost (iterations x sample x nlist x d)
    quadratic in nlist but small; the floor gives the PQ's 256 centroids 39 points each; the cap
    bounds training at large nlist (16 per cell at nlist 4096, where faiss warns: recall at
    that nlist is then slightly below what a larger sample would give — raise --train-size).
    The sample, not N, sets the training cost, so 1M or 1B base vectors train alike."""
    return min(n, max(10_000, min(65_536, 64 * nlist)))


def divisors_text(d: int) -> str:
    """The divisors of d up to 64 (the m a user may give), for a hint."""
    return ", ".join(str(m) for m in range(1, d + 1) if d % m == 0 and m <= 64)


def checked_grid(
    ds: Dataset, nlists: list[int] | None, ms: list[int] | None, opq: tuple[bool, ...]
) -> tuple[list[int], list[int]]:
    """The grid's nlists and ms (the defaults where not given), refused where the dataset cannot
    train them: at least `PQ_CENTROIDS` base vectors (a PQ sub-quantizer's centroids), m must
    divide d, nlist lie in 1..N/4, and an OPQ rotation needs d vectors."""
    if ds.n < PQ_CENTROIDS:
        raise FannsError(
            f"dataset {ds.name}: {ds.n} base vector{'s' if ds.n != 1 else ''}, fewer than the {PQ_CENTROIDS} an "
            "IVF-PQ index trains on "
            f"(every PQ sub-quantizer has {PQ_CENTROIDS} centroids)",
            hint=f"use a dataset of at least {PQ_CENTROIDS} base vectors",
        )
    nlists = sorted(set(nlists or default_nlists(ds.n)))
    ms = sorted(set(ms or default_ms(ds.d)))
    for m in ms:
        if m < 1 or ds.d % m:
            raise FannsError(
                f"m={m} does not divide the dimension d={ds.d}", hint=f"divisors of {ds.d}: {divisors_text(ds.d)}"
            )
    for nlist in nlists:
        if nlist < 1 or nlist > ds.n // 4:
            raise FannsError(
                f"nlist={nlist} does not suit {ds.n} base vectors", hint=f"use 1..{ds.n // 4} (about sqrt(N))"
            )
    if True in opq:
        check_opq_sample(min(ds.n, OPQ_TRAIN_POINTS), ds.d, ds.name)
    return nlists, ms


@lru_cache(maxsize=1)
def _order(n: int, seed: int) -> np.ndarray:
    """The seeded permutation of N, made once per exploration (every index and sample reads it)."""
    order = np.random.default_rng(seed).permutation(n)
    order.flags.writeable = False
    return order


def training_rows(n: int, seed: int, count: int) -> np.ndarray:
    """The sorted rows of the first `count` vectors of the seeded permutation of N: every index
    of one seed trains on a prefix of the same order (one sample per size, nested)."""
    return np.sort(_order(n, seed)[: min(count, n)])


@dataclass(frozen=True)
class DatasetRef:
    """How a worker opens the dataset of an exploration: its spec and its content hash."""

    spec: str
    content_hash: str

    @classmethod
    def of(cls, spec: str, ds: Dataset) -> DatasetRef:
        """A reference a worker elsewhere can follow: a file spec made absolute."""
        if not spec.startswith("builtin:"):
            spec = str(Path(spec).expanduser().resolve())
        return cls(spec, ds.content_hash())

    def open(self) -> Dataset:
        ds = load_dataset(self.spec)
        if ds.content_hash() != self.content_hash:
            raise FannsError(
                f"dataset {self.spec} on a cluster worker differs from the one explored "
                f"(content hash {ds.content_hash()} vs {self.content_hash})",
                hint="the workers must see the same files at the same path (a shared file system)",
            )
        return ds


@dataclass(frozen=True)
class RemoteTraining:
    """Train an exploration's indexes on the existing cluster at `address`, from `data`."""

    address: str
    data: DatasetRef


@dataclass(frozen=True)
class RotationJob:
    """The OPQ rotation of m sub-quantizers, as `IvfPqExplorer` trains it."""

    data: DatasetRef
    m: int
    seed: int

    def run(self) -> np.ndarray:
        ds = self.data.open()
        return rotation_for(ds, self.m, self.seed)


@dataclass(frozen=True)
class IndexJob:
    """One index of the grid, trained and filled; an OPQ index behind `rotation`; reusing `coarse`
    (the first m's plain index's of this nlist) when the exploration shares it."""

    data: DatasetRef
    nlist: int
    m: int
    opq: bool
    train_n: int
    seed: int
    rotation: np.ndarray | None = None
    coarse: Coarse | None = None

    @property
    def factory(self) -> str:
        return factory_string(self.nlist, self.m, self.opq)

    def run(self) -> np.ndarray:
        """The filled index, serialized (the bytes `faiss.write_index` writes)."""
        index = train_filled(self.data.open(), self.nlist, self.m, self.train_n, self.seed, self.rotation, self.coarse)
        return faiss.serialize_index(index)


def run_job(job: RotationJob | IndexJob) -> np.ndarray:
    """What a worker runs (a module-level function, so every backend can ship it)."""
    return job.run()


def rotation_for(ds: Dataset, m: int, seed: int) -> np.ndarray:
    """The OPQ rotation for m sub-quantizers, trained on the first `OPQ_TRAIN_POINTS` of the seeded order."""
    rows = training_rows(ds.n, seed, OPQ_TRAIN_POINTS)
    return train_rotation(host_vectors(ds.base[rows], ds.metric), m)


def train_filled(
    ds: Dataset,
    nlist: int,
    m: int,
    train_n: int,
    seed: int,
    rotation: np.ndarray | None,
    coarse: Coarse | None,
    on_phase=None,
    lists: ListFiller | None = None,
):
    """A trained and filled IVF-PQ index (with OPQ when `rotation` is given, on the shared coarse
    quantizer `coarse` when given), trained on the first `train_n` vectors of the seeded order;
    `on_phase` reports progress (`train_index`); `lists` keeps the inverted lists elsewhere than in RAM
    (`fanns.index.ivfpq_lists.ListsOnDisk`)."""
    rows = training_rows(ds.n, seed, train_n)
    train = host_vectors(ds.base[rows], ds.metric)
    if rotation is not None or coarse is not None:
        return train_shared_index(ds.base, ds.metric, nlist, m, rotation, train, seed, coarse, on_phase, lists)
    return train_index(ds.base, ds.metric, nlist, m, False, train, seed, on_phase, lists)
