"""Shared pytest fixtures: a per-session build folder for simulators and compiled programs, an
isolated dataset cache, single-threaded faiss (pytest-xdist already uses every core), and small
synthetic graphs for the graph explorer and the Falcon model."""

import os
from pathlib import Path

import numpy as np
import pytest

from fanns.tools import modelcache, verilogcache
from tests.tiers import long_not_slow

os.environ.setdefault("FANNS_NO_PROGRESS", "1")
TESTS = Path(__file__).resolve().parent


def _shared_setup(item: pytest.Item) -> str | None:
    """The costly setup `item` shares with other tests: its parameters of module/class fixtures
    (by the file defining the fixture, so a module importing another's fixture names the same
    setup), else the files defining the module/class fixtures it uses (its own module for a
    conftest's or a plugin's); None for a test with none."""
    info = getattr(item, "_fixtureinfo", None)  # pytest's own record of the item's fixtures
    defs = info.name2fixturedefs if info is not None else {}
    shared = [defs[n][-1] for n in item.fixturenames if n in defs and defs[n][-1].scope in ("module", "class")]
    spec = getattr(item, "callspec", None)

    def where(fixture) -> str:
        path = Path(fixture.func.__code__.co_filename)
        own = path.is_relative_to(TESTS) and path.name != "conftest.py"  # else one instance per test module
        return str((path if own else item.path).relative_to(TESTS))

    def param(name: str) -> str:  # the value names the setup, also where a test narrows it (indirect)
        value = spec.params[name]
        return str(value) if isinstance(value, (str, int, float, bool)) else str(spec.indices[name])

    params = [f"{where(f)}:{f.argname}={param(f.argname)}" for f in shared if spec and f.argname in spec.indices]
    return ",".join(sorted(set(params or map(where, shared)))) or None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """One xdist group per costly shared setup (`_shared_setup`), so `pytest -n N --dist loadgroup`
    (the Makefile's slow tier) does it on one worker instead of on every worker its tests were
    dealt to — a design test_rtl generates and builds is also test_rtl_fast's, whose tests then
    find the build in that worker's content-keyed build folder. Without --dist loadgroup the mark
    does nothing. A test marked `long` but not `slow` is refused: CI's `-m "slow and not long"`
    keeps the long tier out only if it is part of the slow one (`tests/tiers.py`)."""
    long_only = long_not_slow(items)
    if long_only:
        raise pytest.UsageError(
            f"tests marked long but not slow: {', '.join(long_only)}; the long tier is part of the slow "
            "one (CI runs -m 'slow and not long'): mark them @pytest.mark.slow too"
        )
    for item in items:
        group = _shared_setup(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist groups a test by the `@group` it appends to the test's node id; pytest 9.2's
    node id ignores it (xdist 3.8), which would silently run every shared setup on every worker and
    double the slow tier, so `--dist loadgroup` stops there with what to install."""
    if config.getoption("dist", "no") == "loadgroup" and pytest.version_tuple[:2] >= (9, 2):
        raise pytest.UsageError(
            f"pytest {pytest.__version__} drops pytest-xdist's test groups (--dist loadgroup): "
            "install the pinned test tools (pyproject.toml's test extra) with `make install`"
        )


@pytest.fixture(scope="session")
def build_root(tmp_path_factory):
    return tmp_path_factory.mktemp("build")


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Built-ins, ground truth and trained indexes go to a per-session folder, not ~/.cache; the
    compiled simulators and converted Verilog stay in the user's caches (`fanns.tools.modelcache`,
    `fanns.tools.verilogcache`: kept by content, so a second session reuses them, and another's
    never changes what a test simulates)."""
    os.environ.setdefault(modelcache.ROOT_ENV, str(modelcache.models_root()))
    os.environ.setdefault(verilogcache.ROOT_ENV, str(verilogcache.modules_root()))
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
