"""Hostile project folders and run inputs (issue 18): `fanns sim` checks a project (its face, its
memory images against the manifest, its data files) before any simulator starts; `fanns run`
checks ground truth against the index; a board file passed by path is the board every later step
uses; a design space without any configuration says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import fanns.driver
from fanns.cli import main
from fanns.errors import FannsError
from fanns.flow.ivfpq_inputs import load_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.workload import read_explore
from fanns.numerics import IvfPqFormat
from tests.hostile.inputs import board_data, dataset_folder, refused, replaced, write_yaml

EXPLORE = ["--recall", "R@10=0.5", "--nlist", "8", "--m", "4", "--no-opq"]


def _design(root: Path, ex: Path, board: str = "u55c") -> Path:
    rec = read_explore(ex)["indexes"][0]
    design = pinned_design(load_index(ex, rec, "l2"), IvfPqFormat.from_dict(rec["format"]), nprobe=2, k=10, board=board)
    path = root / f"design-{Path(board).stem}.yaml"
    design.save(path)
    return path


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    """An exploration of a 2,000 x 16 dataset, a pinned design, and its HLS and RTL projects."""
    root = tmp_path_factory.mktemp("projects")
    ds = dataset_folder(root / "ds")
    assert main(["explore", str(ds), *EXPLORE, "--out", str(root / "ex")]) == 0
    design = _design(root, root / "ex")
    common = ["--index", str(root / "ex"), "--dataset", str(ds), "--queries", "10"]
    assert main(["generate-hls", str(design), *common, "--out", str(root / "hls")]) == 0
    assert main(["generate-rtl", str(design), *common, "--out", str(root / "rtl")]) == 0
    return root


def _copy(projects: Path, face: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(projects / face, tmp_path / face, symlinks=True))


@pytest.mark.parametrize(("face", "backend"), [("rtl", "csim"), ("hls", "rtl")])
def test_sim_backend_must_match_the_face(capsys, projects, face, backend):
    refused(capsys, ["sim", str(projects / face), "--backend", backend], f"--backend {backend}")


@pytest.mark.parametrize(("backend", "face"), [("csim", "hls"), ("rtl", "rtl"), (None, "rtl")])
def test_sim_takes_the_folder_fanns_generate_writes(capsys, projects, tmp_path, backend, face):
    """`fanns sim PROJECT` on a `fanns generate` folder (one project per face) simulates the
    backend's face: shown here by a damaged data file of that face, refused before any simulator."""
    top = tmp_path / "project"
    top.mkdir()
    for f in ("hls", "rtl"):
        shutil.copytree(projects / f, top / f, symlinks=True)
    _truncate(top / face / "data" / "queries.bin", 7)
    argv = ["sim", str(top)] + (["--backend", backend] if backend else [])
    refused(capsys, argv, str(top / face / "data" / "queries.bin"))
    shutil.rmtree(top / "rtl")
    if face == "rtl":
        refused(capsys, argv, "has no rtl face", "hls")


def _truncate(path: Path, size: int | None) -> None:
    if size is None:
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:size])


@pytest.mark.parametrize("size", [None, 0, 7])
@pytest.mark.parametrize("name", ["reference_keys.bin", "groundtruth.bin", "queries.bin"])
@pytest.mark.parametrize(("face", "backend"), [("hls", "csim"), ("rtl", "rtl")])
def test_sim_checks_the_data_files_first(capsys, projects, tmp_path, face, backend, name, size):
    project = _copy(projects, face, tmp_path)
    _truncate(project / "data" / name, size)
    refused(capsys, ["sim", str(project), "--backend", backend], name, "expected")


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete"])
@pytest.mark.parametrize(("face", "backend"), [("hls", "csim"), ("rtl", "rtl")])
def test_sim_checks_the_images_against_the_manifest(capsys, projects, tmp_path, face, backend, damage):
    project = _copy(projects, face, tmp_path)
    image = sorted((project / "images").glob("*.bin"))[-1]
    data = image.read_bytes()
    if damage == "truncate":
        image.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        image.write_bytes(bytes([data[0] ^ 1]) + data[1:])
    else:
        image.unlink()
    refused(capsys, ["sim", str(project), "--backend", backend], image.name)


@pytest.mark.parametrize("damage", ["truncate", "delete"])
@pytest.mark.parametrize(
    ("face", "backend", "source"), [("hls", "csim", "src/kernel.cpp"), ("rtl", "rtl", "rtl/fanns_ivfpq.v")]
)
def test_sim_and_driver_check_the_kernel_sources(capsys, projects, tmp_path, face, backend, source, damage):
    """A truncated or missing kernel source is refused before a simulator is built, by `fanns sim`
    and by the driver (`check_sources`, the check graph projects get too)."""
    project = _copy(projects, face, tmp_path)
    _truncate(project / source, None if damage == "delete" else 100)
    refused(capsys, ["sim", str(project), "--backend", backend, "--build-dir", str(tmp_path / "b")], source, "missing")
    with pytest.raises(FannsError, match=source):
        fanns.driver.open(project, backend="c-sim" if face == "hls" else "rtl-sim", build_dir=tmp_path / "b")
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("content", ["", "{", "[]", '{"io": 1}'])
def test_sim_checks_the_project_record(capsys, projects, tmp_path, content):
    project = _copy(projects, "hls", tmp_path)
    (project / "fanns_project.json").write_text(content)
    refused(capsys, ["sim", str(project), "--backend", "csim"], "fanns_project.json")


@pytest.mark.parametrize(
    ("ids", "fragment"),
    [(10**8, "not an id of the index"), (-1, "not an id of the index"), (0.5, "integer ids")],
)
def test_run_checks_groundtruth_ids(capsys, projects, tmp_path, ids, fragment):
    queries = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    np.save(tmp_path / "q.npy", queries)
    gt = np.zeros((4, 10), dtype=np.int32 if isinstance(ids, int) else np.float32)
    gt[2, 3] = ids
    np.save(tmp_path / "gt.npy", gt)
    argv = [
        "run",
        str(projects / "hls"),
        "--queries",
        str(tmp_path / "q.npy"),
        "--groundtruth",
        str(tmp_path / "gt.npy"),
    ]
    refused(capsys, argv, "gt.npy", fragment)


@pytest.mark.parametrize("name", ["u55c", "my-board"])
def test_a_board_file_passed_by_path_is_the_board_of_every_step(capsys, projects, tmp_path, name):
    """Named like a shipped board or not, the user's board file is the one code generation uses."""
    own = replaced(replaced(board_data(), "name", name), "platform", "my_platform_1")
    board = write_yaml(tmp_path / "board.yaml", own)
    design = _design(tmp_path, projects / "ex", board=str(board))
    out = tmp_path / "hls"
    argv = ["generate-hls", str(design), "--index", str(projects / "ex"), "--dataset", str(projects / "ds")]
    assert main([*argv, "--queries", "4", "--out", str(out)]) == 0, capsys.readouterr().err
    assert "my_platform_1" in (out / "Makefile").read_text()
    assert "my_platform_1" in (out / "connectivity.cfg").read_text()


@pytest.mark.slow  # an exploration and a DSE: 20 s
def test_one_dimensional_vectors_get_a_design(capsys, tmp_path):
    """1-dimensional vectors with m = 1 used to get no design (one-byte codes with their ids); a
    beat now holds as many codes as it holds ids (issue 16), so the DSE writes one, without a
    traceback. The empty-option-group message is tested with an m no PE takes (tests/model)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2000, 1)).astype(np.float32)
    ds = dataset_folder(tmp_path / "ds", base=x, queries=x[:30])
    ex = ["--recall", "R@10=0.5", "--nlist", "8", "--m", "1", "--no-opq"]
    assert main(["explore", str(ds), *ex, "--out", str(tmp_path / "ex")]) == 0
    capsys.readouterr()
    rc = main(["dse", str(tmp_path / "ex"), "--board", "u55c", "--recall", "R@10=0.5", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 0 and "Traceback" not in err, err
    assert (tmp_path / "o" / "design.yaml").is_file()
