"""ann-benchmarks HDF5 files: ``train`` (base), ``test`` (queries), ``neighbors``, ``distances``
and the file attribute ``distance`` (``euclidean`` / ``angular`` / ``dot``). A file without the
attribute is read as euclidean, the ann-benchmarks default, and the reader says so (`Hdf5Content.assumed`:
with whether the base vectors have unit length, where euclidean and angular rank neighbours alike).

Uncompressed contiguous datasets are memory-mapped straight from the file (h5py reports their
byte offset); chunked or compressed ones are read into memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from fanns.datasets.formats import NPY_DTYPES, atomic_path, map_file
from fanns.errors import FannsError

METRICS = {"euclidean": "l2", "l2": "l2", "angular": "angular", "cosine": "angular", "dot": "ip", "ip": "ip"}
ATTR_OF_METRIC = {"l2": "euclidean", "angular": "angular", "ip": "dot"}


@dataclass
class Hdf5Content:
    train: np.ndarray
    test: np.ndarray
    metric: str
    neighbors: np.ndarray | None
    distances: np.ndarray | None
    assumed: str | None = None
    """Why the metric is what it is, when the file did not say (no ``distance`` attribute)."""


UNIT_SAMPLE = 1000
"""Base vectors whose length `assumed_text` checks (the first ones: a look, not a proof)."""


def assumed_text(path: Path, train: np.ndarray) -> str:
    """The message of a file without a ``distance`` attribute: the metric assumed, why, and how
    much it matters for these vectors."""
    norms = np.linalg.norm(np.asarray(train[:UNIT_SAMPLE], dtype=np.float64), axis=1)
    unit = bool(np.all(np.abs(norms - 1.0) < 1e-3))
    why = (
        "its base vectors have unit length, so euclidean and angular rank neighbours alike"
        if unit
        else f"its base vectors do not have unit length (the first {norms.size}: {norms.min():.3g}-{norms.max():.3g}), "
        "so an angular or inner-product set read as euclidean finds other neighbours"
    )
    return (
        f"{path}: no 'distance' attribute, read as euclidean (the ann-benchmarks default); {why}. If the set is "
        f"angular or inner product, set it: h5py.File('{path}', 'r+').attrs['distance'] = 'angular' (or 'dot')"
    )


def _array(path: Path, ds, name: str) -> np.ndarray:
    if ds.ndim != 2 or 0 in ds.shape:
        raise FannsError(f"{path}: dataset {name!r} has shape {ds.shape}, expected a non-empty 2-D array")
    if ds.dtype.kind == "f" and ds.dtype != np.float32:
        return np.asarray(ds[()], dtype=np.float32)
    if np.dtype(ds.dtype) not in NPY_DTYPES:
        raise FannsError(f"{path}: dataset {name!r} has unsupported dtype {ds.dtype}", hint="use float32 or uint8")
    offset = ds.id.get_offset()
    if offset is not None and ds.chunks is None and ds.compression is None:
        return map_file(path, ds.dtype.newbyteorder("="), ds.shape, offset)
    return np.asarray(ds[()])


def read_hdf5(path: str | Path) -> Hdf5Content:

    path = Path(path)
    if not path.is_file():
        raise FannsError(f"{path}: no such file", hint="check the path")
    if path.stat().st_size == 0:
        raise FannsError(f"{path}: the file is empty", hint="re-create or re-download it")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise FannsError(
            f"{path}: not a readable HDF5 file ({exc})", hint="the file is truncated or corrupted"
        ) from None
    with f:
        for key in ("train", "test"):
            if key not in f:
                raise FannsError(
                    f"{path}: missing dataset {key!r} (found: {', '.join(sorted(f.keys())) or 'none'})",
                    hint="an ann-benchmarks file holds 'train' (base vectors) and 'test' (queries)",
                )
        given = "distance" in f.attrs
        raw_metric = f.attrs["distance"] if given else "euclidean"
        if isinstance(raw_metric, bytes):
            raw_metric = raw_metric.decode()
        metric = METRICS.get(str(raw_metric).lower())
        if metric is None:
            raise FannsError(
                f"{path}: unsupported distance attribute {raw_metric!r}",
                hint=f"supported: {', '.join(sorted(METRICS))}",
            )
        try:
            train = _array(path, f["train"], "train")
            test = _array(path, f["test"], "test")
            neighbors = np.asarray(f["neighbors"][()]) if "neighbors" in f else None
            distances = np.asarray(f["distances"][()]) if "distances" in f else None
        except OSError as exc:
            raise FannsError(
                f"{path}: cannot read the data ({exc})", hint="the file is truncated or corrupted"
            ) from None
    if neighbors is not None and (neighbors.ndim != 2 or neighbors.dtype.kind not in "iu"):
        raise FannsError(f"{path}: 'neighbors' must be a 2-D integer array, found {neighbors.dtype} {neighbors.shape}")
    return Hdf5Content(train, test, metric, neighbors, distances, None if given else assumed_text(path, train))


def write_hdf5(
    path: str | Path,
    train: np.ndarray,
    test: np.ndarray,
    metric: str = "l2",
    neighbors: np.ndarray | None = None,
    distances: np.ndarray | None = None,
) -> None:
    """Write an ann-benchmarks style file (atomic)."""

    if metric not in ATTR_OF_METRIC:
        raise FannsError(f"unknown metric {metric!r}", hint="use l2, angular or ip")
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["distance"] = ATTR_OF_METRIC[metric]
            f.create_dataset("train", data=np.asarray(train))
            f.create_dataset("test", data=np.asarray(test))
            if neighbors is not None:
                f.create_dataset("neighbors", data=np.asarray(neighbors, dtype=np.int32))
            if distances is not None:
                f.create_dataset("distances", data=np.asarray(distances, dtype=np.float32))
