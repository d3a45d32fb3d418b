"""Shared pytest fixtures: a per-session build folder for simulators and compiled programs, an
isolated dataset cache, and single-threaded faiss (pytest-xdist already uses every core)."""
import os

import pytest

os.environ.setdefault("FANNS_NO_PROGRESS", "1")


@pytest.fixture(scope="session")
def build_root(tmp_path_factory):
    return tmp_path_factory.mktemp("build")


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Built-ins, ground truth and trained indexes go to a per-session folder, not ~/.cache."""
    old = os.environ.get("FANNS_CACHE")
    os.environ["FANNS_CACHE"] = str(tmp_path_factory.mktemp("fanns-cache"))
    import faiss

    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(threads)
    if old is None:
        os.environ.pop("FANNS_CACHE", None)
    else:
        os.environ["FANNS_CACHE"] = old
