"""Shared pytest fixtures: a per-session build folder for simulators and compiled programs, an
isolated dataset cache, single-threaded faiss (pytest-xdist already uses every core), and small
synthetic graphs for the graph explorer and the Falcon model."""

import os

import numpy as np
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


def clustered(n: int, d: int, seed: int, clusters: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian clusters (a base set and queries from the same distribution), float32."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((clusters, d)) * 1.5
    base = centers[rng.integers(0, clusters, n)] + rng.standard_normal((n, d))
    queries = centers[rng.integers(0, clusters, 200)] + rng.standard_normal((200, d))
    return base.astype(np.float32), queries.astype(np.float32)


@pytest.fixture(scope="session")
def synthetic():
    from fanns.index.graph import build_graph

    base, queries = clustered(3000, 32, seed=0)
    graphs = {kind: build_graph(base, kind, max_degree=16) for kind in ("hnsw", "nsg")}
    return {"base": base, "queries": queries, "graphs": graphs}
