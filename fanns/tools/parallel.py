"""Run independent jobs (index training, DSE and scale-out sweeps over datasets and boards) in
parallel on an existing engine: a local process pool by default (`concurrent.futures`), Dask or
Ray when installed and asked for. No scheduling of our own: each backend's own map.

`fn` and the items must be picklable (a module-level function); results come back in item order.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

from fanns.errors import FannsError

BACKENDS = ("process", "dask", "ray")


def available(backend: str) -> bool:
    module = {"process": "concurrent.futures", "dask": "dask.distributed", "ray": "ray"}[backend]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (dask) is missing
        return False


def map_jobs(fn: Callable, items: Iterable, backend: str = "process", workers: int | None = None) -> list:
    """[fn(item) for item in items], computed by `backend` with at most `workers` processes."""
    items = list(items)
    if backend not in BACKENDS:
        raise FannsError(f"unknown parallel backend {backend!r}", hint=f"one of {', '.join(BACKENDS)}")
    if not available(backend):
        raise FannsError(
            f"the {backend} backend is not installed", hint=f"pip install {backend}, or use the default process pool"
        )
    if not items:
        return []
    if backend == "process":
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(fn, items))
    if backend == "dask":
        from dask.distributed import Client, LocalCluster  # optional dependency

        with LocalCluster(n_workers=workers, processes=True) as cluster, Client(cluster) as client:
            return client.gather(client.map(fn, items, pure=False))
    import ray  # optional dependency

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=workers)
    try:
        remote = ray.remote(fn)
        return ray.get([remote.remote(item) for item in items])
    finally:
        if started:
            ray.shutdown()
