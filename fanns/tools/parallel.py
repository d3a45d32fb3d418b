"""Run independent jobs (index training, DSE and scale-out sweeps over datasets and boards) in
parallel on an existing engine: a local process pool by default (`concurrent.futures`), Dask or
Ray when installed and asked for — started here for the run, or an existing cluster reached by
its scheduler's address (`--cluster tcp://HOST:8786` for Dask, `ray://HOST:10001` for Ray), so a
site's own cluster does the work. No scheduling of our own: each backend's own map.

`fn` and the items must be picklable (a module-level function); results come back in item order.
Jobs on a cluster run in the workers' processes, possibly on other machines: they get their
inputs through the pickled items and return their results, and read no file of this machine.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

from fanns.errors import FannsError
from fanns.progress import track

BACKENDS = ("process", "dask", "ray")
CLUSTER_SCHEMES = {"tcp": "dask", "tls": "dask", "ws": "dask", "wss": "dask", "ray": "ray"}
CONNECT_TIMEOUT_S = 10


def available(backend: str) -> bool:
    module = {"process": "concurrent.futures", "dask": "dask.distributed", "ray": "ray"}[backend]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (dask) is missing
        return False


def cluster_backend(address: str) -> str:
    """The backend of a scheduler address (`tcp://HOST:PORT` Dask, `ray://HOST:PORT` Ray); a
    FannsError naming the address otherwise. Used where `--cluster` enters."""
    scheme, sep, rest = address.partition("://")
    host, colon, port = rest.rpartition(":")
    if not sep or scheme not in CLUSTER_SCHEMES or not colon or not host or not port.isdigit():
        raise FannsError(
            f"--cluster {address!r}: not a scheduler address",
            hint="give tcp://HOST:PORT for a Dask scheduler (as `dask scheduler` prints it) or ray://HOST:PORT for Ray",
        )
    if not 0 < int(port) < 65536 or any(c.isspace() or not c.isprintable() for c in host):
        raise FannsError(f"--cluster {address!r}: bad host or port", hint="e.g. tcp://127.0.0.1:8786")
    return CLUSTER_SCHEMES[scheme]


def check_cluster(address: str) -> str:
    """Check a `--cluster` address where it enters — its form, its backend installed, and for Dask
    a scheduler answering there — so a run fails before its long work; returns the backend."""
    backend = cluster_backend(address)
    _check_installed(backend)
    if backend == "dask":
        _dask_client(address).close()
    return backend


def _check_installed(backend: str) -> None:
    if not available(backend):
        extra = "distributed" if backend == "dask" else backend
        raise FannsError(
            f"the {backend} backend is not installed",
            hint=f"pip install {extra}, or use the default process pool",
        )


def map_jobs(
    fn: Callable,
    items: Iterable,
    backend: str = "process",
    workers: int | None = None,
    cluster: str | None = None,
    label: str | None = None,
) -> list:
    """[fn(item) for item in items], computed by `backend` with at most `workers` processes, or by
    the existing cluster whose scheduler is at `cluster` (its backend follows from the address).
    `label`: show a progress bar of finished jobs."""
    items = list(items)
    if cluster is not None:
        backend = cluster_backend(cluster)
    if backend not in BACKENDS:
        raise FannsError(f"unknown parallel backend {backend!r}", hint=f"one of {', '.join(BACKENDS)}")
    _check_installed(backend)
    if not items:
        return []
    if backend == "process":
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return _collect(pool.map(fn, items), len(items), label)
    if backend == "dask":
        return _dask(fn, items, workers, cluster, label)
    return _ray(fn, items, workers, cluster, label)


def _collect(results: Iterable, total: int, label: str | None) -> list:
    return list(track(results, label, total=total) if label else results)


def _dask(fn: Callable, items: list, workers: int | None, cluster: str | None, label: str | None) -> list:
    if cluster is None:
        from dask.distributed import Client, LocalCluster  # optional dependency

        with LocalCluster(n_workers=workers, processes=True) as local, Client(local) as client:
            return _collect(client.gather(client.map(fn, items, pure=False)), len(items), label)
    with _dask_client(cluster) as client:
        futures = client.map(fn, items, pure=False)
        return _collect((f.result() for f in futures), len(items), label)


def _dask_client(address: str):
    from dask.distributed import Client  # optional dependency

    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise FannsError(
            f"--cluster {address}: no Dask scheduler answered ({exc})",
            hint="start one (`dask scheduler`, then `dask worker ADDRESS` on each machine) or check the address",
        ) from None


def _ray(fn: Callable, items: list, workers: int | None, cluster: str | None, label: str | None) -> list:
    import ray  # optional dependency

    started = not ray.is_initialized()
    if started:
        ray.init(address=cluster, num_cpus=None if cluster else workers)
    try:
        remote = ray.remote(fn)
        refs = [remote.remote(item) for item in items]
        return _collect((ray.get(ref) for ref in refs), len(items), label)
    finally:
        if started:
            ray.shutdown()
