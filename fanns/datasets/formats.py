"""Readers and writers for the vector file formats of the ANN benchmarks.

* TEXMEX ``.fvecs`` / ``.bvecs`` / ``.ivecs``: every record is ``int32 d`` followed by ``d``
  elements (float32 / uint8 / int32), little endian.
* big-ann-benchmarks ``.fbin`` / ``.u8bin`` / ``.i8bin`` / ``.ibin``: a header ``uint32 n,
  uint32 d`` followed by ``n * d`` elements (float32 / uint8 / int8 / int32). A big-ann ground
  truth file (``n, k``, then ``n*k`` int32 ids, then ``n*k`` float32 distances) is also accepted
  by the ``.ibin`` reader, which then returns the ids.
* ``.npy``: a 2-D array of one of the element types above, or of float64 / float16, read as
  float32 (in memory: the HDF5 reader does the same for its float datasets).

Every reader memory-maps the file (read-only) and checks its structure before returning it, so
a truncated, corrupted or mislabelled file produces a `FannsError` naming the file and what is
wrong, never a crash or silently wrong vectors. Content checks that need the data itself (the
dimension field of every record, non-finite floats, integers stored in a float file) look at
every record for the per-record dimension and at a bounded sample (the first and last
`SNIFF_RECORDS` records) for the element values, so opening a billion-vector file stays cheap.
Writers are atomic (a temporary file renamed into place).
"""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np

from fanns.errors import FannsError
from fanns.outputs import atomic_path

VECS_DTYPES = {".fvecs": np.dtype("<f4"), ".bvecs": np.dtype("u1"), ".ivecs": np.dtype("<i4")}
BIN_DTYPES = {".fbin": np.dtype("<f4"), ".u8bin": np.dtype("u1"), ".i8bin": np.dtype("i1"), ".ibin": np.dtype("<i4")}
NPY_DTYPES = (np.dtype("float32"), np.dtype("uint8"), np.dtype("int8"), np.dtype("int32"), np.dtype("int64"))
EXTENSIONS = tuple(VECS_DTYPES) + tuple(BIN_DTYPES) + (".npy",)

MAX_DIM = 1 << 16
"""Largest dimension accepted in a file header; larger values mean a corrupt or foreign file."""
SNIFF_RECORDS = 4096
"""Records at each end of a file whose values are checked (finite floats, plausible types)."""


def _fail(path: Path, what: str, hint: str | None = None) -> FannsError:
    return FannsError(f"{path}: {what}", hint=hint)


def map_file(path: Path, dtype, shape: tuple[int, ...], offset: int = 0) -> np.memmap:
    """`path` memory-mapped read-only as an array of `shape`; a mapping the system refuses (the
    process's address space is limited, e.g. by `ulimit -v`, or the system has no room for it)
    is a `FannsError` saying how large it is and what to change, not a traceback."""
    try:
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)
    except (OSError, MemoryError, ValueError) as exc:
        size = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
        raise _fail(
            path,
            f"cannot map its {size / 2**30:,.1f} GiB of {'x'.join(map(str, shape))} elements into memory ({exc})",
            hint="the process's address space is limited (`ulimit -v`): raise the limit",
        ) from None


def extension(path: Path) -> str:
    return path.suffix.lower()


def read_vectors(path: str | Path) -> np.ndarray:
    """Read a 2-D array of vectors from any supported format (memory-mapped where possible)."""
    path = Path(path)
    ext = extension(path)
    if ext not in EXTENSIONS:
        raise FannsError(
            f"{path}: unsupported file type {ext or '(no extension)'!r}",
            hint=f"use one of {', '.join(EXTENSIONS)}",
        )
    if not path.is_file():
        raise FannsError(f"{path}: no such file", hint="check the path")
    size = path.stat().st_size
    if size == 0:
        raise _fail(path, "the file is empty", hint="re-create or re-download it")
    if ext in VECS_DTYPES:
        return _read_vecs(path, size, VECS_DTYPES[ext])
    if ext in BIN_DTYPES:
        return _read_bin(path, size, BIN_DTYPES[ext])
    return _read_npy(path)


# -- TEXMEX .fvecs / .bvecs / .ivecs ---------------------------------------------------------------
def _read_vecs(path: Path, size: int, dtype: np.dtype) -> np.ndarray:
    if size < 4:
        raise _fail(path, f"truncated record: the file has {size} bytes, fewer than one 4-byte dimension field")
    d = int(np.fromfile(path, dtype="<i4", count=1)[0])
    if not 0 < d <= MAX_DIM:
        raise _fail(
            path,
            f"the first record declares dimension {d}, which is not a plausible vector dimension",
            hint=f"the file is not a {path.suffix} file, or it is corrupted",
        )
    rec = 4 + d * dtype.itemsize
    n_full, tail = divmod(size, rec)
    raw = map_file(path, "u1", (n_full, rec)) if n_full else np.zeros((0, rec), "u1")
    dims = raw[:, :4].copy().view("<i4").ravel() if n_full else np.zeros(0, "<i4")
    bad = np.flatnonzero(dims != d)
    if bad.size or tail:
        _diagnose_vecs(path, size, d, dtype, dims, bad, tail, rec)
    if n_full == 0:
        raise _fail(path, "the file holds no complete record")
    data = raw[:, 4:].view(dtype) if dtype.itemsize == 1 else _vecs_view(path, n_full, d, dtype)
    _sniff_values(path, data)
    return data


def _vecs_view(path: Path, n: int, d: int, dtype: np.dtype) -> np.ndarray:
    """4-byte element files: map records as (n, d+1) words and drop the dimension column."""
    words = map_file(path, dtype, (n, d + 1))
    return words[:, 1:]


def _diagnose_vecs(path, size, d, dtype, dims, bad, tail, rec) -> None:
    # Is it a different element width (e.g. an .fvecs file named .bvecs)?
    for ext, other in VECS_DTYPES.items():
        if other.itemsize == dtype.itemsize:
            continue
        orec = 4 + d * other.itemsize
        if size % orec == 0:
            n = size // orec
            words = map_file(path, "u1", (n, orec))
            if np.all(words[:, :4].copy().view("<i4") == d):
                raise _fail(
                    path,
                    f"wrong element type for the extension: the records are {d} elements of "
                    f"{other.itemsize} bytes (like {ext}), not {dtype.itemsize} byte(s) as {path.suffix} requires",
                    hint=f"rename the file to the extension that matches its contents (e.g. {ext})",
                )
    if bad.size:
        i = int(bad[0])
        raise _fail(
            path,
            f"inconsistent dimension between records: record {i} declares {int(dims[i])}, record 0 declares {d}",
            hint="all vectors of a file must have the same dimension; the file may be corrupted",
        )
    raise _fail(
        path,
        f"truncated record: {size // rec} complete records of {rec} bytes, then {tail} stray bytes",
        hint="the file was cut short (an interrupted download or copy); re-create it",
    )


# -- big-ann .fbin / .u8bin / .i8bin / .ibin ------------------------------------------------------
def _read_bin(path: Path, size: int, dtype: np.dtype) -> np.ndarray:
    if size < 8:
        raise _fail(path, f"truncated header: {size} bytes, the header needs 8 (n, d)")
    n, d = (int(v) for v in np.fromfile(path, dtype="<u4", count=2))
    if n == 0:
        raise _fail(path, "the header declares 0 vectors", hint="the file is empty of data; re-create it")
    if not 0 < d <= MAX_DIM:
        raise _fail(path, f"the header declares dimension {d}", hint=f"not a {path.suffix} file, or it is corrupted")
    need = 8 + n * d * dtype.itemsize
    if size < need:
        raise _fail(
            path,
            f"truncated record: the header declares {n} x {d} elements ({need} bytes) but the file has {size} bytes",
            hint="the file was cut short; re-create it",
        )
    if size != need:
        if dtype == np.dtype("<i4") and size == 8 + 2 * n * d * 4:
            pass  # big-ann ground truth: ids, then float distances (returned: the ids)
        else:
            for ext, other in BIN_DTYPES.items():
                if other.itemsize != dtype.itemsize and size == 8 + n * d * other.itemsize:
                    raise _fail(
                        path,
                        f"wrong element type for the extension: {n} x {d} elements fill the file only "
                        f"as {other.itemsize}-byte elements (like {ext})",
                        hint=f"rename the file to the extension that matches its contents (e.g. {ext})",
                    )
            raise _fail(
                path,
                f"the header declares {n} x {d} elements ({need} bytes) but the file has {size} bytes",
                hint="the file is corrupted or not in big-ann format",
            )
    data = map_file(path, dtype, (n, d), offset=8)
    _sniff_values(path, data)
    return data


# -- .npy ---------------------------------------------------------------------------------------
def _read_npy(path: Path) -> np.ndarray:
    try:
        data = np.load(path, mmap_mode="r", allow_pickle=False)
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            reader(f)
            data_offset = f.tell()
    except Exception as exc:  # numpy raises many types on a garbled header (ValueError, SyntaxError, ...)
        if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
            raise _fail(
                path,
                f"cannot map its data into memory ({exc})",
                hint="the process's address space is limited (`ulimit -v`): raise the limit",
            ) from None
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _fail(path, f"not a readable .npy file ({msg})", hint="the file is truncated or corrupted") from None
    if path.stat().st_size != data_offset + data.nbytes:
        raise _fail(
            path,
            f"the header describes {data.nbytes} bytes of data but the file holds {path.stat().st_size - data_offset}",
            hint="the header or the data is corrupted",
        )
    if data.ndim != 2 or 0 in data.shape:
        raise _fail(path, f"expected a non-empty 2-D array of vectors, found shape {data.shape}")
    if data.dtype.kind == "f" and data.dtype != np.float32:  # as the HDF5 reader does
        with np.errstate(over="ignore"):  # beyond float32 becomes infinite: refused as non-finite
            data = np.asarray(data, dtype=np.float32)
    if data.dtype not in NPY_DTYPES:
        raise _fail(
            path,
            f"wrong dtype {data.dtype} for vectors",
            hint="store float32 (float64 and float16 are read as float32), uint8, int8, int32 or int64 arrays",
        )
    _sniff_values(path, data)
    return data


# -- value checks -------------------------------------------------------------------------------
def _sniff_values(path: Path, data: np.ndarray) -> None:
    n = data.shape[0]
    head = np.asarray(data[:SNIFF_RECORDS])
    tail = np.asarray(data[max(SNIFF_RECORDS, n - SNIFF_RECORDS) :])
    for part in (head, tail):
        if part.size == 0 or part.dtype.kind != "f":
            continue
        if not np.all(np.isfinite(part)):
            raise _fail(
                path,
                "non-finite values (NaN or infinity) in the vectors",
                hint="the file is corrupted, or it holds integers and needs an integer extension",
            )
        nz = np.abs(part[part != 0])
        if nz.size and np.all(nz < np.finfo(np.float32).tiny):
            raise _fail(
                path,
                "wrong element type for the extension: every value is a subnormal float, "
                "which is what 32-bit integers look like when read as floats",
                hint="if the file holds integers (e.g. ids), give it an integer extension (.ivecs / .ibin)",
            )


# -- writers ------------------------------------------------------------------------------------
def save_npy(path: str | Path, array: np.ndarray) -> None:
    """Atomically write `array` as .npy (readers never see a half-written file)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, np.ascontiguousarray(array), allow_pickle=False)


def write_vectors(path: str | Path, data: np.ndarray) -> None:
    """Write a 2-D array in the format given by the extension of `path` (atomic)."""
    path = Path(path)
    ext = extension(path)
    data = np.asarray(data)
    if data.ndim != 2:
        raise FannsError(f"{path}: can only write 2-D arrays, got shape {data.shape}")
    if ext == ".npy":
        save_npy(path, data)
        return
    dtype = VECS_DTYPES.get(ext) or BIN_DTYPES.get(ext)
    if dtype is None:
        raise FannsError(f"{path}: unsupported file type {ext!r}", hint=f"use one of {', '.join(EXTENSIONS)}")
    conv = data.astype(dtype)
    if dtype.kind in "iu" and not np.array_equal(conv.astype(np.float64), data.astype(np.float64)):
        raise FannsError(f"{path}: the values do not fit the element type {dtype} of {ext}")
    n, d = conv.shape
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            if ext in VECS_DTYPES:
                rec = np.empty((n, 4 + d * dtype.itemsize), dtype="u1")
                rec[:, :4] = np.full((n, 1), d, dtype="<i4").view("u1")
                rec[:, 4:] = np.ascontiguousarray(conv).view("u1").reshape(n, -1)
                rec.tofile(f)
            else:
                np.array([n, d], dtype="<u4").tofile(f)
                np.ascontiguousarray(conv).tofile(f)
