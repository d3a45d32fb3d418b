"""Bad use of the host driver gets a clear FannsError (what is wrong, and a hint), never a
traceback: missing or foreign project folders, projects from another version, wrong query
shapes and dtypes, k or nprobe beyond the design, parameters of another design family, the
wrong backend for a project, and no pynq / no board."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

import fanns.driver
from fanns.cli import main
from fanns.errors import FannsError


@pytest.fixture(scope="module")
def hls(projects):
    return fanns.driver.open(projects.hls)


def test_project_folder_missing_or_not_a_project(tmp_path):
    with pytest.raises(FannsError, match="does not exist") as err:
        fanns.driver.open(tmp_path / "nowhere")
    assert "generate-hls" in err.value.hint
    (tmp_path / "empty").mkdir()
    with pytest.raises(FannsError, match="not a generated project"):
        fanns.driver.open(tmp_path / "empty")


@pytest.mark.parametrize("version", [None, 0, 2])
def test_project_from_another_version(projects, tmp_path, version):
    folder = tmp_path / "old"
    shutil.copytree(projects.rtl, folder)
    record = json.loads((folder / "fanns_project.json").read_text())
    record.pop("project_version")
    if version is not None:
        record["project_version"] = version
    (folder / "fanns_project.json").write_text(json.dumps(record))
    which = "no project version" if version is None else f"project version {version}"
    with pytest.raises(FannsError, match=rf"\({which}\); this driver \(fanns .*\) reads project version 1") as err:
        fanns.driver.open(folder)
    assert "regenerate" in err.value.hint


def test_corrupt_or_incomplete_projects(projects, tmp_path):
    folder = tmp_path / "p"
    shutil.copytree(projects.rtl, folder)
    (folder / "rtl" / "regmap.json").unlink()
    with pytest.raises(FannsError, match="rtl/regmap.json is missing"):
        fanns.driver.open(folder)
    shutil.rmtree(folder)
    shutil.copytree(projects.hls, folder)
    (folder / "images" / "codebook.bin").write_bytes(b"\0" * 16)
    with pytest.raises(FannsError, match="codebook.bin: size or sha256 differs"):
        fanns.driver.open(folder)


@pytest.mark.parametrize(
    "queries, match",
    [
        (np.zeros((3, 31), np.float32), r"shape \(3, 31\): this accelerator serves d = 32"),
        (np.zeros((2, 3, 32), np.float32), r"shape \(2, 3, 32\)"),
        (np.zeros((3, 32), np.complex64), "dtype complex64: expected real numbers"),
        (np.array([["a"] * 32]), "dtype <U1"),
        (np.full((2, 32), np.nan, np.float32), "NaN"),
    ],
)
def test_bad_queries(hls, queries, match):
    with pytest.raises(FannsError, match=match):
        hls.search(queries)


def test_k_and_nprobe_beyond_the_design(projects, hls):
    with pytest.raises(FannsError, match=r"k 101 is out of range: the design serves k 1..100"):
        hls.search(np.zeros((1, 32), np.float32), k=101)
    with pytest.raises(FannsError, match=r"k 0 is out of range"):
        hls.set_params(k=0)
    with pytest.raises(FannsError, match=r"k must be an integer"):
        hls.set_params(k=2.5)
    rtl = fanns.driver.open(projects.rtl)
    with pytest.raises(FannsError, match=r"nprobe 4 is out of range: the design serves nprobe 1..3"):
        rtl.set_params(nprobe=4)
    rtl.set_params(nprobe=1)  # a register of the RTL core
    with pytest.raises(FannsError, match="the HLS kernel probes a fixed nprobe = 3") as err:
        hls.set_params(nprobe=2)
    assert "RTL project" in err.value.hint
    hls.set_params(nprobe=3)


def test_graph_parameters_on_an_ivfpq_project(hls):
    with pytest.raises(FannsError, match="mc, mg: graph-search parameters, but .* is an IVF-PQ project"):
        hls.set_params(mg=2, mc=4)
    with pytest.raises(FannsError, match="unknown parameter"):
        hls.set_params(lanes=4)


def test_batch_beyond_the_io_bank(projects):
    acc = fanns.driver.open(projects.hls)
    limit = acc.iface.max_batch()
    assert 0 < limit < 1 << 32  # a 256 MiB HBM channel holds a bounded number of queries
    with pytest.raises(FannsError, match=rf"batch {limit + 1}: the I/O buffers hold 1..{limit} queries in hbm\[0\]"):
        fanns.driver.open(projects.hls, batch=limit + 1)


def test_wrong_backend_for_the_project(projects):
    with pytest.raises(FannsError, match="c-sim backend runs the HLS kernel; this is an RTL project"):
        fanns.driver.open(projects.rtl, backend="c-sim")
    with pytest.raises(FannsError, match="rtl-sim backend runs the generated RTL; this is an HLS project"):
        fanns.driver.open(projects.hls, backend="rtl-sim")
    with pytest.raises(FannsError, match="unknown backend 'fpga'"):
        fanns.driver.open(projects.hls, backend="fpga")


@pytest.mark.skipif(
    "pynq" in sys.modules or __import__("importlib").util.find_spec("pynq") is not None, reason="pynq is installed here"
)
def test_pynq_without_pynq_says_how_to_get_it(projects):
    with pytest.raises(FannsError, match="needs the pynq package and a board") as err:
        fanns.driver.open(projects.hls, backend="pynq")
    assert "pip install fanns[pynq]" in err.value.hint


def test_cli_run_reports_and_refuses(projects, tmp_path, capsys):
    q = tmp_path / "q.npy"
    np.save(q, projects.queries[:20])
    gt = tmp_path / "gt.npy"
    np.save(gt, projects.groundtruth[:20].astype(np.int32))
    assert (
        main(["run", str(projects.rtl), "--queries", str(q), "--groundtruth", str(gt), "--k", "10", "--nprobe", "2"])
        == 0
    )
    text = capsys.readouterr().out
    assert "20 queries, k = 10, nprobe = 2, backend model (rtl project)" in text and "R@10 = " in text and "QPS" in text
    assert main(["run", str(projects.hls), "--queries", str(q), "--k", "101"]) == 2
    assert "k 101 is out of range" in capsys.readouterr().err
    np.save(q, projects.queries[:20, :16])
    assert main(["run", str(projects.hls), "--queries", str(q)]) == 2
    assert "this accelerator serves d = 32" in capsys.readouterr().err


def test_generated_board_script_runs_without_a_board(projects, tmp_path):
    """PROJECT/driver/run_on_board.py exists in both projects; with --backend model it searches."""
    for kind in ("hls", "rtl"):
        folder = getattr(projects, kind)
        assert (folder / "driver" / "README.md").is_file()
    q = tmp_path / "q.npy"
    np.save(q, projects.queries[:10])
    run = subprocess.run(
        [
            sys.executable,
            str(projects.hls / "driver" / "run_on_board.py"),
            "--queries",
            str(q),
            "--backend",
            "model",
            "--k",
            "5",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(__import__("pathlib").Path(fanns.__file__).parent.parent), "PATH": ""},
    )
    assert run.returncode == 0, run.stderr
    assert "10 queries, k = 5" in run.stdout
    run = subprocess.run(
        [sys.executable, str(projects.hls / "driver" / "run_on_board.py"), "--queries", str(q)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(__import__("pathlib").Path(fanns.__file__).parent.parent), "PATH": ""},
    )
    assert run.returncode == 2 and "pip install fanns[pynq]" in run.stderr
