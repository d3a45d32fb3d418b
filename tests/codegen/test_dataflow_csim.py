"""The two C-simulation modes of hls/fanns_hls.h on a region whose correctness depends on a FIFO
depth: sequential (unbounded FIFOs, always completes) and threaded (declared depths: completes
exactly when the depth suffices, reports the deadlock otherwise, and reports leftover data)."""

import subprocess
from pathlib import Path

import pytest

from fanns.tools.csim import compile_program

SRC = Path(__file__).parent / "csrc" / "dataflow_check.cpp"


@pytest.fixture(scope="module")
def programs(build_root):
    return {
        "seq": compile_program([SRC], build_root / "dataflow_seq"),
        "threads": compile_program([SRC], build_root / "dataflow_threads", defines={"FANNS_CSIM_THREADS": 1}),
    }


def run(exe, depth, n, extra=0):
    p = subprocess.run([str(exe), str(depth), str(n), str(extra)], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.strip()


def test_threaded_region_completes_when_the_depth_suffices(programs):
    for n in (1, 5, 64):
        assert run(programs["threads"], n, n) == (0, f"sum {n * (n - 1) // 2}")
        assert run(programs["threads"], n + 7, n) == (0, f"sum {n * (n - 1) // 2}")


def test_threaded_region_reports_deadlock_of_a_too_shallow_fifo(programs):
    for depth, n in ((1, 2), (7, 8), (31, 100)):
        rc, out = run(programs["threads"], depth, n)
        assert rc == 1 and "deadlock" in out and "FIFO" in out, out
        assert " a" in out or " b" in out  # names the FIFO a process waits on


def test_threaded_region_reports_leftover_data(programs):
    rc, out = run(programs["threads"], 16, 4, extra=3)
    assert rc == 1 and out.startswith("leftover:") and "a(3)" in out


def test_sequential_mode_ignores_depths(programs):
    assert run(programs["seq"], 1, 100) == (0, f"sum {100 * 99 // 2}")
