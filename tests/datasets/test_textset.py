"""`builtin:text-384`: corpus extraction, the LSA embedding on a small slice of real text, and the
full build (slow tier)."""

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from fanns.datasets import builtins as builtins_mod
from fanns.datasets import load_dataset, textcorpus, textset
from fanns.errors import FannsError


@pytest.fixture(scope="module")
def numpy_sentences() -> list[str]:
    """A small slice of real English: docstring sentences of three of the installed numpy's packages."""
    root = Path(np.__file__).parent
    files = sorted(p for sub in ("_core", "lib", "ma") for p in (root / sub).rglob("*.py") if "tests" not in p.parts)
    out = textcorpus.unique_sentences(d for f in files for d in textcorpus._docstrings(f.read_bytes()))
    assert len(out) > 1200
    return out[:1200]


def test_sentences_keep_prose_and_drop_code():
    text = """Title
=====

The :func:`reverse` function returns the URL of a `view <views.html>`_ given its name.

>>> reverse("home")
'/'

.. note:: this directive is not prose.

x = compute(a, b) + other[3] * 2 / 7 - 1;

Short one.  Twisted uses C{epytext} markup in L{many docstrings} of the code base!
"""
    assert list(textcorpus.sentences(text)) == [
        "The reverse function returns the URL of a view given its name.",
        "Twisted uses epytext markup in many docstrings of the code base!",
    ]


def test_unique_sentences_dedupe_case_insensitively():
    docs = ["The cache keeps every answer it computed.\n", "the cache keeps every answer it computed.\n"]
    assert textcorpus.unique_sentences(docs) == ["The cache keeps every answer it computed."]


def _add(tar: tarfile.TarFile, name: str, text: str) -> None:
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def test_documents_read_doc_folder_and_docstrings_not_tests(tmp_path):
    archive = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        _add(tar, "pkg-1.0/docs/intro.rst", "The documentation explains every option in detail.\n")
        _add(tar, "pkg-1.0/src/pkg/mod.py", '"""A module docstring that describes the whole module."""\n')
        _add(tar, "pkg-1.0/src/pkg/tests/test_mod.py", '"""A test docstring that must not be read."""\n')
        _add(tar, "pkg-1.0/README.rst", "A readme outside the documentation folder is skipped.\n")
    source = textcorpus.Source("pkg", "1.0", "0" * 64, "MIT", "docs", "src/pkg")
    assert list(textcorpus.documents(source, archive)) == [
        "The documentation explains every option in detail.\n",
        "A module docstring that describes the whole module.",
    ]


def test_fetch_checks_the_pinned_hash_and_reports_a_failed_download(tmp_path, monkeypatch):
    source = textcorpus.Source("pkg", "1.0", "0" * 64, "MIT", "docs", "pkg")
    (tmp_path / source.filename).write_bytes(b"not the pinned file")
    with pytest.raises(FannsError, match="not the pinned"):
        textcorpus.fetch(source, tmp_path)
    failed = subprocess.CompletedProcess([], 1, "", "ERROR: No matching distribution found for pkg==1.0")
    monkeypatch.setattr(textcorpus.subprocess, "run", lambda *a, **k: failed)
    with pytest.raises(FannsError, match="No matching distribution.*") as err:
        textcorpus.fetch(source, tmp_path / "empty")
    assert "pip download --no-deps --no-binary :all:" in err.value.hint


def test_pinned_sources_are_complete():
    assert len({s.project.lower() for s in textcorpus.SOURCES}) == len(textcorpus.SOURCES)
    for s in textcorpus.SOURCES:
        assert len(s.sha256) == 64 and int(s.sha256, 16) >= 0 and s.licence and s.doc_dir and s.code_dir


def test_missing_or_wrong_scikit_learn_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(FannsError, match="scikit-learn") as err:
        textset.build()
    assert "fanns[text]" in err.value.hint
    monkeypatch.undo()
    sklearn = pytest.importorskip("sklearn")
    monkeypatch.setattr(sklearn, "__version__", "0.0.1")
    with pytest.raises(FannsError, match="found 0.0.1"):
        textset.build()


def test_small_slice_is_deterministic_and_held_out(numpy_sentences, monkeypatch):
    pytest.importorskip("sklearn")
    base, queries = textset.make_text_set(numpy_sentences, 40, 32, 11)
    again = textset.make_text_set(numpy_sentences, 40, 32, 11)
    assert base.tobytes() == again[0].tobytes() and queries.tobytes() == again[1].tobytes()
    assert base.dtype == queries.dtype == np.float32
    assert queries.shape == (40, 32) and base.shape[1] == 32 and base.shape[0] > 1000
    assert np.allclose(np.linalg.norm(base, axis=1), 1, atol=1e-5)
    assert np.allclose(np.linalg.norm(queries, axis=1), 1, atol=1e-5)
    both = np.concatenate([base, queries])
    assert np.unique(both, axis=0).shape[0] == both.shape[0]
    other = textset.make_text_set(numpy_sentences, 40, 32, 12)[1]
    assert not np.array_equal(other, queries)

    seen = {}
    real = textset.embed

    def spy(base_texts, query_texts, dim, seed):
        seen["base"], seen["queries"] = list(base_texts), list(query_texts)
        return real(base_texts, query_texts, dim, seed)

    monkeypatch.setattr(textset, "embed", spy)
    textset.make_text_set(numpy_sentences, 40, 32, 11)
    assert not set(seen["queries"]) & set(seen["base"])
    assert len(seen["base"]) + len(seen["queries"]) == len(numpy_sentences)
    held = textset.held_out(len(numpy_sentences), len(seen["queries"]), 11)
    assert seen["queries"] == [numpy_sentences[i] for i in held]


def test_too_few_sentences_is_an_error(numpy_sentences):
    with pytest.raises(FannsError, match="too few"):
        textset.make_text_set(numpy_sentences[:50], 40, 32, 11)


@pytest.mark.slow
@pytest.mark.long  # the full text set
def test_full_text_set():
    pytest.importorskip("sklearn")
    ds = load_dataset("builtin:text-384")
    spec = builtins_mod.BUILTINS["text-384"]
    assert (ds.n, ds.nq, ds.d, str(ds.base.dtype), ds.metric) == (spec.n, 1000, 384, "float32", "angular")
    assert ds.n >= 100_000
    assert np.allclose(np.linalg.norm(ds.queries, axis=1), 1, atol=1e-5)
    gt = ds.groundtruth(10)
    assert gt.shape == (1000, 10) and gt.min() >= 0 and gt.max() < ds.n
