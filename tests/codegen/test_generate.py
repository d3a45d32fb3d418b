"""`fanns generate` end to end on the session's exploration of builtin:sift-10k: explore (reused)
-> DSE -> HLS and RTL faces -> simulation of both faces -> report and README; the project is
complete, consistent with `fanns dse`, deterministic, written atomically (also on errors and
Ctrl-C), replaced only with --force, and bad input fails cleanly before any work."""

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from fanns.cli import main
from fanns.codegen.project_layout import ProjectLayout, parse_backends
from fanns.design.ivfpq import IvfPqDesign
from fanns.errors import FannsError
from fanns.flow import ivfpq_project_sim as project_sim
from fanns.flow.ivfpq_generate import cpu_baseline, cpu_text
from fanns.index.goals import parse_goal
from tests.codegen.conftest import GOAL, SIFT_NLIST, SIFT_QUERIES

SIM_QUERIES = 8
TEST_QUERIES = 24
CYCLE_TOLERANCE = 0.15
"""RTL steady-state cycles per query vs the model over only SIM_QUERIES queries (the tight check,
5 %, is tests/codegen/test_rtl.py's; here the summary's figures must be the simulator's)."""


def args(explore: Path, out: Path, *extra: str) -> list[str]:
    return [
        "generate",
        "builtin:sift-10k",
        "--recall",
        GOAL,
        "--board",
        "u55c",
        "--nlist",
        str(SIFT_NLIST),
        "--m",
        "16",
        "--queries",
        str(SIFT_QUERIES),
        "--explore-dir",
        str(explore),
        "--test-queries",
        str(TEST_QUERIES),
        "--out",
        str(out),
        *extra,
    ]


@pytest.fixture(scope="module")
def explore(sift_exploration):
    return sift_exploration[False].folder


@pytest.fixture(scope="module")
def project(explore, tmp_path_factory, build_root):
    """Generated with a relative --out and --build-dir, as `make demo` does (the simulators run in
    their own build folders, so every path they are given must be made absolute)."""
    root = tmp_path_factory.mktemp("generate")
    (root / "builds").symlink_to(build_root)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        code = main(
            args(
                explore,
                Path("project"),
                "--sim",
                "--sim-queries",
                str(SIM_QUERIES),
                "--build-dir",
                str(Path("builds") / "generate"),
            )
        )
    assert code == 0
    return root / "project"


def regular_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not p.is_symlink()
        and not any(q.is_symlink() for q in p.relative_to(root).parents if str(q) != "." and (root / q).is_symlink())
    }


@pytest.mark.slow
def test_project_layout(project):
    top = sorted(p.name for p in project.iterdir())
    assert top == [
        "README.md",
        "data",
        "design.yaml",
        "fanns_generate.json",
        "fanns_manifest.json",
        "hls",
        "report",
        "rtl",
    ] or top == [
        "README.md",
        "data",
        "design.yaml",
        "driver",
        "fanns_generate.json",
        "fanns_manifest.json",
        "hls",
        "report",
        "rtl",
    ]
    for face in ("hls", "rtl"):
        for name, target in (("images", "../data/images"), ("data", "../data/test")):
            link = project / face / name
            assert link.is_symlink() and os.readlink(link) == target  # relative: the folder can move
            assert link.resolve() == (project / target[3:]).resolve()
        # the same design; the trained index's path is relative to the folder of each design.yaml
        inner, outer = (IvfPqDesign.load(p / "design.yaml") for p in (project / face, project))
        assert (project / face / inner.index.path).resolve() == (project / outer.index.path).resolve()
        assert (project / outer.index.path).is_file()
        assert inner.to_dict() | {"index": None} == outer.to_dict() | {"index": None}
    assert (project / "rtl" / "rtl" / "fanns_ivfpq.v").is_file() and (project / "hls" / "src" / "kernel.cpp").is_file()
    manifest = json.loads((project / "data" / "images" / "manifest.json").read_text())
    for img in manifest["images"]:
        assert hashlib.sha256((project / "data" / "images" / img["file"]).read_bytes()).hexdigest() == img["sha256"]
    assert not [p for p in project.parent.iterdir() if p.name.startswith(".project.")]  # no staging leftovers


@pytest.mark.slow
def test_design_is_what_fanns_dse_chooses(project, explore, tmp_path):
    assert main(["dse", str(explore), "--board", "u55c", "--recall", GOAL, "--out", str(tmp_path / "dse")]) == 0
    ours = IvfPqDesign.load(project / "design.yaml")
    theirs = IvfPqDesign.load(tmp_path / "dse" / "design.yaml")
    assert ours.to_dict() | {"index": None} == theirs.to_dict() | {
        "index": None
    }  # index path is relative to each folder
    assert ours.index.factory == theirs.index.factory
    assert (project / ours.index.path).resolve() == (tmp_path / "dse" / theirs.index.path).resolve()
    dse = json.loads((project / "report" / "dse.json").read_text())
    assert dse["best"] == json.loads((tmp_path / "dse" / "dse.json").read_text())["best"]


@pytest.mark.slow
def test_simulation_of_both_faces(project, explore):
    summary = json.loads((project / "report" / "summary.json").read_text())
    sims = {s["backend"]: s for s in summary["simulation"]}
    assert set(sims) == {"hls", "rtl"}
    d = summary["design"]
    for s in sims.values():
        assert s["queries"] == SIM_QUERIES and s["checked_keys"] == SIM_QUERIES * d["k"]
        assert s["mismatched_queries"] == 0 and list(s["recall"]) == [f"R@{d['k']}"]  # the goal is an R@k goal
        assert all(r["simulated"] == r["reference"] for r in s["recall"].values())
    rtl = sims["rtl"]
    assert (
        abs(rtl["cycles_per_query"] - rtl["predicted_cycles_per_query"])
        <= CYCLE_TOLERANCE * rtl["predicted_cycles_per_query"]
    )
    # the summary's CPU baseline is the explorer's measurement at the same goal
    ex = json.loads((explore / "explore.json").read_text())
    assert summary["cpu"] == cpu_baseline(ex, parse_goal(GOAL)) and summary["cpu"]["qps"] > 0
    assert summary["speedup"] == round(d["qps"] / summary["cpu"]["qps"], 2)
    readme = (project / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("|")]
    assert rows and not [r for r in rows if "||" in r]  # every table row ends where it should
    assert summary["cpu"]["basis"]["text"] in readme  # the ratio names the figure it divides by
    for text in (
        d["index"],
        f"nprobe {d['nprobe']}",
        "Verilator (the fast, compiled harness)",
        "g++ C simulation",
        "make -C hls csim",
        "fanns sim rtl --backend rtl",
        f"{d['qps']:,.0f} QPS at {summary['clock_mhz']:g} MHz",
        f"| clock | {summary['clock_text']} |",
        "| RTL timing estimate | RTL timing estimate",
    ):
        assert text in readme, text
    # no --clock: the board's sourced default, or the design's RTL estimate where that is lower
    assert summary["clock"]["origin"] in ("board", "rtl") and summary["clock"]["mhz"] <= 140.0
    assert "{{" not in readme and "None" not in readme


@pytest.mark.slow
def test_simulated_keys_are_the_reference_keys_through_the_links(project, build_root):
    """The HLS face runs from its own folder, whose images/ and data/ are the shared copy."""
    res = project_sim.simulate_csim(project / "hls", TEST_QUERIES, build_root / "generate")
    assert res["queries"] == TEST_QUERIES and res["mismatched_queries"] == 0


@pytest.mark.slow
def test_deterministic_and_force(project, explore, tmp_path, capsys):
    out = tmp_path / "again"
    assert main(args(explore, out)) == 0  # no --sim: everything but the simulation figures is the same
    a, b = regular_files(project), regular_files(out)
    assert set(a) == set(b)
    differ = sorted(k for k in a if a[k] != b[k])
    assert differ == ["README.md", "fanns_manifest.json", "report/summary.json"]  # the manifest holds their sha256
    sa, sb = (json.loads(x["report/summary.json"]) for x in (a, b))
    assert sa.pop("simulation") and not sb.pop("simulation")
    assert sa == sb
    capsys.readouterr()
    assert main(args(explore, out, "--backend", "rtl")) == 2
    assert "already exists" in capsys.readouterr().err and (out / "hls").is_dir()
    assert main(args(explore, out, "--backend", "rtl", "--force")) == 0
    assert not (out / "hls").exists() and (out / "rtl" / "rtl" / "fanns_ivfpq.v").is_file()
    assert json.loads((out / "report" / "summary.json").read_text())["faces"] == ["rtl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again"]


@pytest.mark.slow  # three whole generate runs (DSE and code generation) each: 70 s
@pytest.mark.parametrize("failure", [KeyboardInterrupt, FannsError])
def test_interrupted_or_failed_simulation_leaves_nothing(explore, tmp_path, monkeypatch, capsys, failure):
    def boom(*a, **k):
        raise failure("simulator stopped") if failure is FannsError else failure()

    monkeypatch.setitem(project_sim.SIMULATORS, "hls", boom)
    out = tmp_path / "p"
    code = main(args(explore, out, "--backend", "hls", "--sim"))
    assert code == (130 if failure is KeyboardInterrupt else 2)
    assert list(tmp_path.iterdir()) == []  # neither the project nor its staging folder
    # an earlier project survives a failed --force replacement whole
    monkeypatch.setitem(project_sim.SIMULATORS, "hls", project_sim.simulate_csim)
    assert main(args(explore, out, "--backend", "hls")) == 0
    before = regular_files(out)
    monkeypatch.setitem(project_sim.SIMULATORS, "hls", boom)
    assert main(args(explore, out, "--backend", "hls", "--sim", "--force")) != 0
    assert regular_files(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["p"]
    capsys.readouterr()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--backend", "vhdl"], "--backend 'vhdl'"),
        (["--recall", "R@10=2"], "R@10=2"),
        (["--board", "nosuchboard"], "unknown board"),
        (["--sim-queries", "50"], "--sim-queries 50 is more than --test-queries"),
        (["--test-queries", "1"], "--test-queries 1"),
        (["--util", "0"], "argument --util: '0': must be above 0"),
    ],
)
def test_input_errors(explore, tmp_path, capsys, extra, message):
    out = tmp_path / "p"
    assert main(args(explore, out) + extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("fanns: error:") and message in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_refuses_to_replace_a_foreign_folder(explore, tmp_path, capsys):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "notes.txt").write_text("keep me")
    assert main(args(explore, tmp_path / "p", "--force")) == 2
    assert "not a generated project written by fanns" in capsys.readouterr().err
    assert (tmp_path / "p" / "notes.txt").read_text() == "keep me"


def test_layout_shares_data_and_links_the_driver():
    lay = ProjectLayout()
    common = {"images/a.bin": b"A", "data/queries.bin": b"Q", "design.yaml": b"d"}
    lay.add_face("hls", {**common, "src/kernel.cpp": b"k", "driver/run_on_board.py": b"x"})
    lay.add_face("rtl", {**common, "rtl/top.v": b"v"})
    assert lay.files["data/images/a.bin"] == b"A" and lay.files["data/test/queries.bin"] == b"Q"
    assert "hls/images/a.bin" not in lay.files and lay.files["hls/driver/run_on_board.py"] == b"x"
    assert lay.links["rtl/images"] == "../data/images" and lay.links["hls/data"] == "../data/test"
    assert lay.faces() == ["hls", "rtl"] and lay.driver_face() == "hls"
    with pytest.raises(FannsError, match="differs from the other face"):
        lay.add_face("rtl", {**common, "images/a.bin": b"B"})
    plain = ProjectLayout()
    plain.add_face("rtl", common)
    assert plain.driver_face() is None


def test_backends_and_cpu_baseline():
    assert parse_backends("rtl, HLS") == ("hls", "rtl") and parse_backends("rtl") == ("rtl",)
    with pytest.raises(FannsError):
        parse_backends(",")
    ex = {
        "indexes": [
            {
                "index": "A",
                "goals": {
                    "R@10=0.5": {"reached": True, "nprobe": 3, "recall": 0.52, "cpu_qps": 100.0, "cpu_threads": 2}
                },
            },
            {
                "index": "B",
                "goals": {
                    "R@10=0.5": {"reached": True, "nprobe": 1, "recall": 0.51, "cpu_qps": 300.0, "cpu_threads": 2}
                },
            },
            {"index": "C", "goals": {"R@10=0.5": {"reached": False, "nprobe": 64, "recall": 0.4, "cpu_qps": 900.0}}},
        ]
    }
    got = cpu_baseline(ex, parse_goal("R@10=0.5"))
    assert (got["index"], got["nprobe"], got["qps"], got["threads"]) == ("B", 1, 300.0, 2)
    assert got["spread"] is None and got["one_thread"] is None and got["basis"]["basis"] == "all-cores"
    # the design's own index, even where another index is faster on the CPU
    got = cpu_baseline(ex, parse_goal("R@10=0.5"), "A")
    assert (got["index"], got["nprobe"], got["qps"]) == ("A", 3, 100.0)
    assert cpu_baseline(ex, parse_goal("R@1=0.9")) is None
    assert cpu_baseline(ex, parse_goal("R@10=0.5"), "C") is None  # C does not reach the goal
    # an exploration with repeated measurements: the median is the figure, the spread travels with it
    one = {"qps": 250.0, "q1": 245.0, "q3": 255.0, "min": 240.0, "max": 260.0, "repeats": 7}
    one = {**one, "threads": 1, "clock": "cpu"}
    every = {**one, "qps": 300.0, "q1": 290.0, "q3": 320.0, "threads": 2, "clock": "wall"}
    ex["indexes"][1]["goals"]["R@10=0.5"]["cpu"] = {"1": one, "all": every}
    got = cpu_baseline(ex, parse_goal("R@10=0.5"))
    assert got["spread"] == every and got["one_thread"] == one and got["qps"] == 300.0
    text = cpu_text(got, 3000.0)
    assert "FPGA / CPU 10.0x against 300 QPS (2 threads" in text and "1 thread: 250 QPS" in text
    # the best CPU index is the one fastest on one thread, which load does not move: A's 2-thread
    # figure, measured while the machine was loaded, is below its 1-thread one
    ex["indexes"][0]["goals"]["R@10=0.5"]["cpu"] = {
        "1": {**one, "qps": 400.0, "q1": 390.0, "q3": 410.0},
        "all": {**every, "qps": 100.0, "q1": 90.0, "q3": 110.0},
    }
    got = cpu_baseline(ex, parse_goal("R@10=0.5"))
    assert got["index"] == "A" and got["qps"] == 800.0 and got["basis"]["basis"] == "one-thread-scaled"
    assert "loaded" in cpu_text(got, 3000.0) and "FPGA / CPU 3.8x against 800 QPS" in cpu_text(got, 3000.0)


def test_simulation_recall_in_the_goal_measure():
    from types import SimpleNamespace

    gt = np.array([[1, 2], [3, 4]])
    keys = np.array([[(5 << 32) | 2, (6 << 32) | 9], [(1 << 32) | 3, (2 << 32) | 4]], dtype=np.uint64)
    ref = np.array([[(5 << 32) | 1, (6 << 32) | 2], [(1 << 32) | 3, (2 << 32) | 4]], dtype=np.uint64)
    got = project_sim.recalls(keys, ref, gt, SimpleNamespace(k=2, goal=parse_goal("1-R@2=0.5")))
    assert got == {"1-R@2": {"simulated": 0.5, "reference": 1.0}, "R@2": {"simulated": 0.75, "reference": 1.0}}
    assert list(project_sim.recalls(keys, ref, gt, SimpleNamespace(k=2, goal=parse_goal("R@2=0.5")))) == ["R@2"]
