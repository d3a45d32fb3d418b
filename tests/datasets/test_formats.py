"""Readers and writers: round-trip, and corrupted files give a FannsError (never a crash or garbage)."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fanns.datasets.formats import BIN_DTYPES, EXTENSIONS, VECS_DTYPES, read_vectors, write_vectors
from fanns.errors import FannsError

DTYPE_OF = {**VECS_DTYPES, **BIN_DTYPES}
FILE_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _random_array(rng: np.random.Generator, ext: str, n: int, d: int) -> np.ndarray:
    dtype = DTYPE_OF.get(ext, np.dtype("float32"))
    if dtype.kind == "f":
        return rng.standard_normal((n, d)).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 100000), (n, d), endpoint=True).astype(dtype)


@FILE_SETTINGS
@given(ext=st.sampled_from(EXTENSIONS), n=st.integers(1, 40), d=st.integers(1, 33), seed=st.integers(0, 2**31))
def test_round_trip(tmp_path: Path, ext, n, d, seed):
    data = _random_array(np.random.default_rng(seed), ext, n, d)
    path = tmp_path / f"x{ext}"
    write_vectors(path, data)
    back = read_vectors(path)
    assert back.shape == data.shape
    assert np.array_equal(np.asarray(back), data)


@FILE_SETTINGS
@given(
    ext=st.sampled_from(EXTENSIONS),
    n=st.integers(1, 20),
    d=st.integers(1, 17),
    seed=st.integers(0, 2**31),
    cut=st.floats(0, 1, exclude_max=True),
)
def test_truncation_is_an_error_or_a_clean_prefix(tmp_path: Path, ext, n, d, seed, cut):
    data = _random_array(np.random.default_rng(seed), ext, n, d)
    path = tmp_path / f"x{ext}"
    write_vectors(path, data)
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * cut)])
    try:
        back = np.asarray(read_vectors(path))
    except FannsError:
        return
    # A TEXMEX file cut exactly between records is a valid shorter file: it must be a prefix.
    assert ext in VECS_DTYPES
    assert back.shape[1] == d and back.shape[0] < n
    assert np.array_equal(back, data[: back.shape[0]])


@FILE_SETTINGS
@given(ext=st.sampled_from(EXTENSIONS), blob=st.binary(min_size=0, max_size=600))
def test_garbage_gives_fanns_error_or_well_formed_array(tmp_path: Path, ext, blob):
    path = tmp_path / f"g{ext}"
    path.write_bytes(blob)
    try:
        back = read_vectors(path)
    except FannsError as exc:
        assert str(path) in str(exc)
        return
    assert back.ndim == 2 and back.shape[0] >= 1 and back.shape[1] >= 1
    if back.dtype.kind == "f":
        assert np.all(np.isfinite(back))


@FILE_SETTINGS
@given(ext=st.sampled_from(EXTENSIONS), seed=st.integers(0, 2**31), pos=st.integers(0, 7), value=st.integers(0, 255))
def test_header_corruption(tmp_path: Path, ext, seed, pos, value):
    data = _random_array(np.random.default_rng(seed), ext, 5, 6)
    path = tmp_path / f"h{ext}"
    write_vectors(path, data)
    raw = bytearray(path.read_bytes())
    if ext == ".npy":
        pos = 8 + pos  # inside the header length / dict
    elif ext in VECS_DTYPES:
        pos = pos % 4  # the dimension field of the first record
    raw[pos] = value
    path.write_bytes(bytes(raw))
    try:
        back = np.asarray(read_vectors(path))
    except FannsError:
        return
    if ext in VECS_DTYPES and back.shape != data.shape:
        # A new dimension whose record size divides the file into consistent records (e.g. one
        # record of 46 bytes in a 50-byte .bvecs of 5 x 6) is another valid file: it must read
        # exactly as its bytes say, every record declaring the dimension the reader returned.
        n, d = back.shape
        rec = 4 + d * data.dtype.itemsize
        assert n * rec == len(raw)
        records = np.frombuffer(bytes(raw), dtype="u1").reshape(n, rec)
        assert np.all(records[:, :4].copy().view("<i4") == d)
        assert np.array_equal(back, records[:, 4:].copy().view(data.dtype))
        return
    # Still readable: then it is exactly the original data (the byte was unchanged or irrelevant).
    assert back.shape == data.shape and np.array_equal(back, data)


def _expect(path: Path, *words: str) -> None:
    with pytest.raises(FannsError) as info:
        read_vectors(path)
    msg = str(info.value)
    assert str(path) in msg
    for w in words:
        assert w in msg, msg


def test_empty_file(tmp_path):
    for ext in EXTENSIONS:
        p = tmp_path / f"e{ext}"
        p.write_bytes(b"")
        _expect(p, "empty")


def test_inconsistent_dimension(tmp_path):
    p = tmp_path / "a.fvecs"
    write_vectors(p, np.ones((4, 8), np.float32))
    raw = bytearray(p.read_bytes())
    rec = 4 + 8 * 4
    raw[2 * rec : 2 * rec + 4] = np.array([7], "<i4").tobytes()
    p.write_bytes(bytes(raw))
    _expect(p, "inconsistent dimension", "record 2")


def test_truncated_record(tmp_path):
    p = tmp_path / "a.bvecs"
    write_vectors(p, np.ones((4, 8), np.uint8))
    p.write_bytes(p.read_bytes()[:-3])
    _expect(p, "truncated record")
    q = tmp_path / "a.fbin"
    write_vectors(q, np.ones((4, 8), np.float32))
    q.write_bytes(q.read_bytes()[:-1])
    _expect(q, "truncated record")


def test_wrong_dtype_for_extension(tmp_path):
    f = tmp_path / "x.fvecs"
    write_vectors(f, np.arange(40, dtype=np.float32).reshape(5, 8) + 0.5)
    b = tmp_path / "x.bvecs"
    b.write_bytes(f.read_bytes())
    _expect(b, "wrong element type", ".fvecs")
    fb = tmp_path / "x.fbin"
    write_vectors(fb, np.ones((6, 5), np.float32))
    ub = tmp_path / "x.u8bin"
    ub.write_bytes(fb.read_bytes())
    _expect(ub, "wrong element type")
    iv = tmp_path / "gt.ivecs"
    write_vectors(iv, np.arange(50, dtype=np.int32).reshape(5, 10))
    fv = tmp_path / "gt.fvecs"
    fv.write_bytes(iv.read_bytes())
    _expect(fv, "wrong element type", "integers")
    npy = tmp_path / "x.npy"
    np.save(npy, np.ones((3, 4), dtype=np.complex64))
    _expect(npy, "wrong dtype")


def test_nan_rejected(tmp_path):
    p = tmp_path / "n.fbin"
    a = np.ones((3, 4), np.float32)
    a[1, 2] = np.nan
    write_vectors(p, a)
    _expect(p, "non-finite")


def test_large_files_are_memory_mapped(tmp_path):
    for ext in (".fvecs", ".bvecs", ".fbin", ".u8bin", ".npy"):
        p = tmp_path / f"m{ext}"
        write_vectors(p, _random_array(np.random.default_rng(0), ext, 10, 4))
        arr = read_vectors(p)
        assert isinstance(arr, np.memmap) or isinstance(arr.base, np.memmap), ext


def test_bigann_groundtruth_layout(tmp_path):
    ids = np.arange(12, dtype=np.int32).reshape(3, 4)
    dist = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    p = tmp_path / "gt.ibin"
    with open(p, "wb") as f:
        np.array([3, 4], "<u4").tofile(f)
        ids.tofile(f)
        dist.tofile(f)
    assert np.array_equal(read_vectors(p), ids)


def test_write_rejects_values_out_of_range(tmp_path):
    with pytest.raises(FannsError):
        write_vectors(tmp_path / "x.bvecs", np.array([[300, 1]]))
    with pytest.raises(FannsError):
        write_vectors(tmp_path / "x.txt", np.zeros((2, 2)))
