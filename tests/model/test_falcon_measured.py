"""Reading Falcon's measured latencies (benchmarks/falcon_latency.py): the raw float64 files of its
`plots/saved_latency/`, the kernel clock of its v++ configurations, from a checkout or a git copy
— on tiny files written here, not on Falcon's repository."""

import importlib.util
import pickle
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

from fanns.errors import FannsError

ROOT = Path(__file__).resolve().parents[2]
INTRA = "plots/saved_latency/FPGA_intra_query_v1_5_4_chan"
ACROSS = "plots/saved_latency/FPGA_inter_query_v1_3_4_chan"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the benchmark imports its sibling `record`
    try:
        spec = importlib.util.spec_from_file_location("falcon_latency", ROOT / "benchmarks" / "falcon_latency.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def _write(root: Path, path: str, data: bytes) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_bytes(data)


@pytest.fixture
def tree(tmp_path):
    intra = np.array([0.10, 0.12, 0.11, 0.30, 0.09], dtype=np.float64)
    _write(tmp_path, f"{INTRA}/latency_ms_per_batch_Deep1M_HNSW_MD64_ef64_batch_size1.double", intra.tobytes())
    _write(tmp_path, f"{INTRA}/latency_ms_per_batch_Deep1M_HNSW_MD64_ef64_batch_size2.double", intra.tobytes())
    _write(tmp_path, f"{ACROSS}/latency_ms_per_batch_SIFT10M_NSG_MD64_ef64_batch_size1.double", np.ones(3).tobytes())
    _write(tmp_path, f"{ACROSS}/notes.txt", b"not a latency file")
    _write(
        tmp_path,
        "networked_FPGA/kernel/user_krnl/FPGA_inter_query_v1_3/config_sp_FPGA_inter_query_v1_3.txt",
        b"kernel_frequency=180 # 200 MHz only for 1 or 2 channels\n[hls]\n",
    )
    return tmp_path, intra


def test_measured_files_are_found_parsed_and_summarised(bench, tree):
    root, intra = tree
    rows = bench.read_measured(bench.FalconTree(root))
    assert [(r["mode"], r["set"], r["size"], r["graph"]) for r in rows] == [
        ("intra", "Deep", "1M", "hnsw"),
        ("across", "SIFT", "10M", "nsg"),
    ]
    deep = rows[0]
    assert deep["count"] == 5 and deep["max_degree"] == 64 and deep["ef"] == 64
    assert deep["median_ms"] == pytest.approx(0.11)
    assert deep["p95_ms"] == pytest.approx(np.percentile(intra, 95))
    assert deep["max_ms"] == pytest.approx(0.30)


def test_kernel_clock_is_read_from_the_build_config_or_falls_back_to_the_thesis(bench, tree):
    t = bench.FalconTree(tree[0])
    mhz, source = bench.kernel_clock(t, "FPGA_inter_query_v1_3")
    assert mhz == 180.0 and "config_sp_FPGA_inter_query_v1_3.txt" in source
    mhz, source = bench.kernel_clock(t, "FPGA_intra_query_v1_5")
    assert mhz == 200.0 and "thesis" in source


def test_a_git_copy_is_read_at_head(bench, tree):
    root, _ = tree
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "m"], check=True)
    t = bench.FalconTree(root / ".git")
    assert t.bare and len(t.commit()) == 40
    assert [r["median_ms"] for r in bench.read_measured(t)] == pytest.approx([0.11, 1.0])
    assert bench.kernel_clock(t, "FPGA_inter_query_v1_3")[0] == 180.0


def test_missing_or_empty_copies_are_clear_errors(bench, tmp_path):
    with pytest.raises(FannsError, match="no such directory"):
        bench.FalconTree(tmp_path / "absent")
    with pytest.raises(FannsError, match="no batch-1 latency files"):
        bench.read_measured(bench.FalconTree(tmp_path))
    with pytest.raises(FannsError, match="empty or not finite"):
        bench.summarise(np.array([0.1, np.nan]))


def test_the_profile_reader_refuses_anything_but_dataframe_parts(bench):
    with pytest.raises(pickle.UnpicklingError, match="not a DataFrame part"):
        bench.read_frame(pickle.dumps(OrderedDict(a=1)))
