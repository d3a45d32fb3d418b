"""Parallel jobs: the local process pool (default), backend errors, cluster addresses."""

import pytest

from fanns.errors import FannsError
from fanns.tools.parallel import available, cluster_backend, map_jobs


def square(x: int) -> int:
    return x * x


def test_process_pool_keeps_item_order():
    assert map_jobs(square, range(7), workers=2) == [x * x for x in range(7)]
    assert map_jobs(square, []) == []


def test_backend_errors():
    with pytest.raises(FannsError, match="unknown parallel backend"):
        map_jobs(square, [1], backend="slurm")
    for backend in ("dask", "ray"):
        if not available(backend):
            with pytest.raises(FannsError, match="not installed"):
                map_jobs(square, [1], backend=backend)


@pytest.mark.parametrize(
    "address, backend",
    [("tcp://127.0.0.1:8786", "dask"), ("tls://sched.example:8786", "dask"), ("ray://head:10001", "ray")],
)
def test_cluster_addresses_name_their_backend(address, backend):
    assert cluster_backend(address) == backend


@pytest.mark.parametrize(
    "address, message",
    [
        ("127.0.0.1:8786", "not a scheduler address"),
        ("tcp://127.0.0.1", "not a scheduler address"),
        ("http://127.0.0.1:80", "not a scheduler address"),
        ("tcp://:8786", "not a scheduler address"),
        ("tcp://127.0.0.1:0", "bad host or port"),
        ("tcp://bad\nhost:8786", "bad host or port"),
    ],
)
def test_bad_cluster_addresses_are_refused(address, message):
    with pytest.raises(FannsError, match=message):
        cluster_backend(address)
    with pytest.raises(FannsError, match=message):
        map_jobs(square, [1], cluster=address)
