"""`fanns generate-hls` end to end on an exploration of builtin:sift-10k: design.yaml in, a
project out, checked by C simulation; and clear errors for wrong inputs."""

import dataclasses
import json

from fanns.cli import main
from fanns.index.goals import parse_goal
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.workload import EXPLORE_VERSION
from tests.codegen.conftest import GOAL


def _design_file(ex, folder, **kw):
    goal = ex.record["goals"][GOAL]
    design = pinned_design(ex.data, ex.fmt, nprobe=goal["nprobe"], k=10, index_path=None, **kw)
    design = dataclasses.replace(design, goal=parse_goal(GOAL))
    path = folder / "design.yaml"
    design.save(path)
    return path


def test_generate_hls_with_csim(sift_exploration, tmp_path, capsys):
    ex = sift_exploration[True]
    design = _design_file(ex, tmp_path, ivf=(7, 16, "bram"), lut=(2, 16, "memory"), pq=(6, 3))
    out = tmp_path / "project"
    rc = main(["generate-hls", str(design), "--index", str(ex.folder), "--out", str(out), "--csim"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert f"C simulation: {ex.queries.shape[0]} queries, 0 differ from the reference model" in text
    hw = ex.record["goals"][GOAL]["all_queries_hw_recall"]
    assert f"R@10 = {hw:.6f} (explorer's hardware recall on the same queries {hw:.6f})" in " ".join(text.split())
    assert (out / "src" / "kernel.cpp").is_file() and (out / "images" / "manifest.json").is_file()
    # a second run refuses to overwrite without --force, and works with it
    assert main(["generate-hls", str(design), "--index", str(ex.folder), "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (
        main(["generate-hls", str(design), "--index", str(ex.folder), "--out", str(out), "--force", "--queries", "5"])
        == 0
    )


def test_generate_hls_input_errors(sift_exploration, tmp_path, capsys):
    ex = sift_exploration[False]
    design = _design_file(ex, tmp_path)
    out = tmp_path / "project"
    assert main(["generate-hls", str(design), "--index", str(tmp_path), "--out", str(out)]) == 2
    assert "explore.json not found" in capsys.readouterr().err
    assert (
        main(
            ["generate-hls", str(design), "--index", str(ex.folder), "--out", str(out), "--dataset", "builtin:deep-10k"]
        )
        == 2
    )
    assert "is not the one explored" in capsys.readouterr().err
    assert main(["generate-hls", str(design), "--index", str(ex.folder), "--out", str(out), "--queries", "100000"]) == 2
    assert "--queries" in capsys.readouterr().err
    other = pinned_design(sift_exploration[True].data, sift_exploration[True].fmt, nprobe=2, k=10)
    other.save(tmp_path / "other.yaml")
    (ex.folder / "explore.json").rename(ex.folder / "explore.json.bak")
    try:
        (ex.folder / "explore.json").write_text(
            json.dumps({"version": EXPLORE_VERSION, "indexes": [{"index": "IVF7,PQ2"}], "dataset": {}})
        )
        assert main(["generate-hls", str(tmp_path / "other.yaml"), "--index", str(ex.folder), "--out", str(out)]) == 2
        assert "has no index OPQ16,IVF24,PQ16" in capsys.readouterr().err
    finally:
        (ex.folder / "explore.json.bak").replace(ex.folder / "explore.json")
    assert not out.exists()
