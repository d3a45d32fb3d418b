"""A Dask scheduler and worker started as separate processes on this machine, for the tests of
`--cluster` (the sweep's DSE jobs, the design fuzz's draws): the code under test reaches them by
address only, as it would a site's cluster."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dask.distributed import Client


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A Dask scheduler and one worker started as separate processes, reached by address only."""
    folder = tmp_path_factory.mktemp("dask")
    dask = str(Path(sys.executable).parent / "dask")
    info = folder / "scheduler.json"
    common = ["--no-dashboard"]
    scheduler = subprocess.Popen(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file", str(info), *common],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = None
    try:
        for _ in range(600):
            if info.exists() and info.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        worker = subprocess.Popen(
            [dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--local-directory", str(folder), *common],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        yield address
    finally:
        for proc in (worker, scheduler):
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=60)


def task_kinds(address: str) -> set[str]:
    with Client(address) as client:
        return set(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes)))
