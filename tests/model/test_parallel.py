"""Parallel sweeps: the local process pool (default), backend errors."""

import pytest

from fanns.errors import FannsError
from fanns.tools.parallel import available, map_jobs


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
