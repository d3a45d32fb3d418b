"""No command loses a file: every command that writes a folder refuses a folder of the user's
(with and without --force) in one clean error and leaves its bytes alone; a --force re-run keeps
what the user added; a failed run leaves no output and no empty folder; a tampered exploration is
refused by its readers instead of trusted."""

import json
import shutil

import numpy as np
import pytest

from fanns.cli import main
from fanns.datasets import save_npy
from fanns.index.goals import parse_goal
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.outputs import MANIFEST, read_manifest
from tests.hostile.helpers import EXPLORE, assert_clean_error, make_dataset, snapshot

USER_FILES = {
    "design.yaml": b"# my hand-tuned design\nboard: u55c\n",
    "dse.json": b'{"mine": true}\n',
    "explore.json": b'{"indexes": []}\n',
    "NOTES.txt": b"three weeks of notes\n",
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("data") / "ds")


@pytest.fixture(scope="module")
def explored(dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("explored") / "ex"
    assert main(["explore", str(dataset), *EXPLORE, "--out", str(out)]) == 0
    return out


def commands(dataset, explored, out) -> dict[str, list[str]]:
    """Every command that writes an output folder, aimed at `out`."""
    ds, ex, o = str(dataset), str(explored), str(out)
    return {
        "explore": ["explore", ds, *EXPLORE, "--out", o],
        "explore-graph": ["explore", ds, "--graph", "nsg", "--max-degree", "8", "--mg", "1", "--mc", "1", "--out", o],
        "dse": ["dse", ex, "--board", "u55c", "--recall", "R@10=0.5", "--out", o],
        "dse-graph": ["dse", ex, "--graph", "nsg", "--board", "u55c", "--recall", "R@10=0.5", "--out", o],
        "sweep": ["sweep", ds, "--boards", "u55c", "--recall", "R@10=0.5", "--nlist", "8", "--m", "4", "--out", o],
        "generate": ["generate", ds, "--recall", "R@10=0.5", "--board", "u55c", "--nlist", "8", "--m", "4", "--out", o],
    }


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
@pytest.mark.parametrize("command", ["explore", "explore-graph", "dse", "dse-graph", "sweep", "generate"])
def test_a_folder_of_the_users_is_never_written(dataset, explored, tmp_path, capsys, command, force):
    out = tmp_path / "mine"
    out.mkdir()
    for rel, content in USER_FILES.items():
        (out / rel).write_bytes(content)
    argv = commands(dataset, explored, out)[command] + (["--force"] if force else [])
    assert main(argv) == 2
    assert_clean_error(capsys.readouterr().err, str(out), "not a" if force else "already exists")
    assert snapshot(out) == USER_FILES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_explore_force_reuses_its_indexes_and_keeps_the_users_files(dataset, tmp_path, capsys):
    out = tmp_path / "ex"
    argv = ["explore", str(dataset), *EXPLORE, "--out", str(out)]
    assert main(argv) == 0
    index = next((out / "indexes").glob("*.faissindex"))
    inode = index.stat().st_ino
    (out / "NOTES.txt").write_bytes(USER_FILES["NOTES.txt"])
    capsys.readouterr()
    assert main(argv) == 2
    assert_clean_error(capsys.readouterr().err, "already exists", "--force")
    assert main([*argv, "--force"]) == 0
    assert (out / "NOTES.txt").read_bytes() == USER_FILES["NOTES.txt"]
    assert index.stat().st_ino == inode  # the trained index was carried over, not trained again
    assert "NOTES.txt" not in read_manifest(out)["files"]
    # a file fanns wrote and the user edited blocks the replacement
    (out / "explore.json").write_bytes(b'{"edited": 1}\n')
    before = snapshot(out)
    capsys.readouterr()
    assert main([*argv, "--force"]) == 2
    assert_clean_error(capsys.readouterr().err, "explore.json", "changed since")
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ex"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["explore", "{ds}", *EXPLORE, "--train-size", "4"], "training vectors for 8 cells"),
        (["explore", "{ds}", "--graph", "nsg", "--queue", "5", "--k", "10"], "--queue 5"),
        (["dse", "{ds}", "--board", "u55c", "--recall", "R@10=0.5"], "explore.json not found"),
        (["dse", "{ex}", "--board", "nosuchboard", "--recall", "R@10=0.5"], "unknown board"),
    ],
    ids=["explore-in-training", "explore-graph-setup", "dse-no-exploration", "dse-bad-board"],
)
def test_a_failed_run_leaves_no_folder(dataset, explored, tmp_path, capsys, argv, message):
    out = tmp_path / "new" / "deeper" / "out"
    argv = [a.format(ds=dataset, ex=explored) for a in argv]
    assert main([*argv, "--out", str(out)]) == 2
    assert_clean_error(capsys.readouterr().err, message)
    assert list(tmp_path.iterdir()) == []  # no output, no staging folder, no empty parents


@pytest.mark.parametrize("target", ["explore.json", "probes", "list_sizes"])
def test_a_tampered_exploration_is_refused_not_trusted(explored, tmp_path, capsys, target):
    ex = tmp_path / "ex"
    shutil.copytree(explored, ex, symlinks=True)
    assert workloads_from_explore(ex, parse_goal("R@10=0.5"))[0]  # the copy is whole
    if target == "explore.json":
        path = ex / "explore.json"
        data = json.loads(path.read_text())
        data["indexes"][0]["probes_nprobe"] += 1  # says the probes are deeper than they are
        path.write_text(json.dumps(data))
    else:
        path = next((ex / "indexes").glob(f"*.{target}.npy"))
        save_npy(path, np.load(path)[::-1].copy())
    capsys.readouterr()
    assert main(["dse", str(ex), "--board", "u55c", "--recall", "R@10=0.5", "--out", str(tmp_path / "d")]) == 2
    assert_clean_error(capsys.readouterr().err, str(ex), path.name, "changed since")
    assert not (tmp_path / "d").exists()


def test_a_hand_assembled_exploration_mixing_two_runs_is_refused(explored, tmp_path, capsys):
    """Without a manifest nothing says which run wrote a file: the shapes must still agree."""
    ex = tmp_path / "ex"
    shutil.copytree(explored, ex, symlinks=True)
    (ex / MANIFEST).unlink()
    probes = next((ex / "indexes").glob("*.probes.npy"))
    save_npy(probes, np.load(probes)[:10])  # probes of fewer queries than explore.json used
    assert main(["dse", str(ex), "--board", "u55c", "--recall", "R@10=0.5", "--out", str(tmp_path / "d")]) == 2
    assert_clean_error(capsys.readouterr().err, "probes of 10 queries", "mixes two explorations")


@pytest.mark.slow
def test_generate_force_keeps_the_users_files(dataset, tmp_path, capsys):
    """The issue's case: NOTES.txt and a Vitis build inside an earlier project survive --force
    (two whole `fanns generate` runs, DSE included: slow)."""
    out = tmp_path / "p"
    argv = [
        "generate",
        str(dataset),
        "--recall",
        "R@10=0.5",
        "--board",
        "u55c",
        "--nlist",
        "8",
        "--m",
        "4",
        "--no-opq",
        "--backend",
        "hls",
        "--test-queries",
        "8",
        "--sim-queries",
        "2",
        "--explore-dir",
        str(tmp_path / "ex"),
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    mine = {"NOTES.txt": b"notes\n", "hls/build/hw/fanns.xclbin": bytes(range(256)) * 64}
    for rel, content in mine.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(content)
    assert main([*argv, "--force"]) == 0
    files = snapshot(out)
    assert all(files[rel] == content for rel, content in mine.items())
    assert (out / "hls" / "src" / "kernel.cpp").is_file()
    (out / "README.md").write_text("my edits")
    before = snapshot(out)
    capsys.readouterr()
    assert main([*argv, "--force"]) == 2
    assert_clean_error(capsys.readouterr().err, "README.md", "changed since")
    assert snapshot(out) == before


@pytest.mark.parametrize("command", ["explore", "dse"])
def test_an_output_folder_that_cannot_be_made_is_a_clean_error(dataset, explored, tmp_path, capsys, command):
    (tmp_path / "file").write_bytes(b"a file, not a folder")
    out = tmp_path / "file" / "out"
    assert main(commands(dataset, explored, out)[command]) == 2
    assert_clean_error(capsys.readouterr().err, "cannot write", str(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    assert (tmp_path / "file").read_bytes() == b"a file, not a folder"


@pytest.mark.parametrize("kind", ["file", "link-to-folder", "working-folder"])
def test_an_out_that_is_not_a_folder_of_fanns_is_refused(dataset, explored, tmp_path, capsys, monkeypatch, kind):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "NOTES.txt").write_bytes(USER_FILES["NOTES.txt"])
    out = {"file": mine / "NOTES.txt", "link-to-folder": tmp_path / "link", "working-folder": tmp_path / "ex2"}[kind]
    if kind == "link-to-folder":
        out.symlink_to(mine)
    if kind == "working-folder":  # an exploration fanns wrote, but the run stands inside it
        shutil.copytree(explored, out)
        monkeypatch.chdir(out)
        out = out.parent / "ex2" / "."
    before = snapshot(tmp_path)
    for command in ("explore", "dse"):
        assert main([*commands(dataset, explored, out)[command], "--force"]) == 2
        assert_clean_error(capsys.readouterr().err, str(out))
        assert snapshot(tmp_path) == before
