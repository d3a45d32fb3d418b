"""One project, one handle: `fanns.driver.open` and `fanns run` on the folder `fanns generate`
writes (faces `hls/` and `rtl/` side by side) pick the face by backend (c-sim: HLS, rtl-sim: RTL,
pynq: the face whose xclbin was built, model: HLS) or by an explicit face."""

import numpy as np
import pytest

import fanns.driver
from fanns.cli import main
from fanns.driver.project import BITSTREAM, face_folder
from fanns.errors import FannsError


@pytest.fixture
def root(projects, tmp_path):
    """A `fanns generate`-style folder whose faces are the two projects (linked, not copied)."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hls").symlink_to(projects.hls)
    (folder / "rtl").symlink_to(projects.rtl)
    return folder


def test_the_backend_picks_the_face(root):
    assert face_folder(root, "c-sim") == root / "hls"
    assert face_folder(root, "rtl-sim") == root / "rtl"
    assert face_folder(root, "model") == root / "hls"
    assert face_folder(root, "model", "rtl") == root / "rtl"
    with fanns.driver.open(root) as acc:
        assert acc.project.kind == "hls"
    with fanns.driver.open(root, face="rtl") as acc:
        assert acc.project.kind == "rtl"


def test_a_single_face_project_opens_as_before(projects):
    assert face_folder(projects.rtl, "c-sim") == projects.rtl  # Project.open then says c-sim needs HLS
    with pytest.raises(FannsError, match="is an RTL project, not hls"):
        fanns.driver.open(projects.rtl, face="hls")


def test_pynq_runs_the_face_that_was_built(root, tmp_path, projects):
    with pytest.raises(FannsError, match="no face has a built bitstream") as err:
        face_folder(root, "pynq")
    assert "--face" in err.value.hint
    rtl = tmp_path / "rtl-built"
    (rtl / "build" / "hw").mkdir(parents=True)
    for entry in projects.rtl.iterdir():
        (rtl / entry.name).symlink_to(entry)
    (rtl / BITSTREAM).write_bytes(b"xclbin")
    (root / "rtl").unlink()
    (root / "rtl").symlink_to(rtl)
    assert face_folder(root, "pynq") == root / "rtl"
    assert face_folder(root, "pynq", "hls") == root / "hls"


def test_unknown_or_missing_faces_are_refused(root, projects, tmp_path):
    with pytest.raises(FannsError, match="unknown face 'vhdl'"):
        face_folder(root, "model", "vhdl")
    only = tmp_path / "only-rtl"
    only.mkdir()
    (only / "rtl").symlink_to(projects.rtl)
    with pytest.raises(FannsError, match="has no hls face"):
        face_folder(only, "c-sim")


def test_cli_run_on_the_generate_folder(root, projects, tmp_path, capsys):
    q = tmp_path / "q.npy"
    np.save(q, projects.queries[:5])
    assert main(["run", str(root), "--queries", str(q), "--face", "rtl", "--nprobe", "2", "--k", "10"]) == 0
    out = capsys.readouterr().out
    assert "5 queries, k = 10, nprobe = 2, backend model (rtl project)" in out
    assert main(["run", str(root), "--queries", str(q), "--k", "10"]) == 0
    assert "backend model (hls project)" in capsys.readouterr().out
