"""Code injection and reading outside the folders (issue 18): hostile strings in every string field
of every input surface — CLI options, board files, design.yaml, explore.json, dataset.yaml — are
refused with one clear message naming the input; no file appears outside the output folder; and
the template layer refuses control characters in whatever still reaches a generated file."""

from __future__ import annotations

import os

import pytest

from fanns.boards import load_board
from fanns.codegen.platform import platform_board, vitis_platform
from fanns.errors import FannsError
from fanns.paths import inside
from fanns.templating import Verbatim, environment, finalize
from tests.arch.test_design_schema import make_design
from tests.hostile.inputs import (
    CONTROL,
    HOSTILE_NAMES,
    board_data,
    dataset_folder,
    explore_folder,
    files_below,
    refused,
    replaced,
    write_yaml,
)

# -- CLI options -------------------------------------------------------------------------------
PLATFORM_COMMANDS = [
    ["generate-hls", "design.yaml", "--index", "ex", "--out", "out"],
    ["generate", "builtin:sift-10k", "--recall", "R@10=0.8", "--board", "u55c", "--out", "out"],
    ["generate-graph-hls", "builtin:sift-10k", "--out", "out"],
]


@pytest.mark.parametrize("value", HOSTILE_NAMES)
@pytest.mark.parametrize("command", PLATFORM_COMMANDS, ids=lambda c: c[0])
def test_platform_option_must_be_a_platform_name(capsys, tmp_path, monkeypatch, command, value):
    monkeypatch.chdir(tmp_path)
    refused(capsys, [*command, "--platform", value], "--platform")
    assert files_below(tmp_path) == set()


OTHER_BOARDS_PLATFORMS = [
    (["generate-graph-rtl", "builtin:sift-10k", "--out", "out", "--platform", "zcu104"], "zcu104", "u250"),
    (
        ["generate", "builtin:sift-10k", "--recall", "R@10=0.8", "--board", "u55c", "--out", "out"]
        + ["--platform", "xilinx_u250_gen3x16_xdma_4_1_202210_1"],
        "u250",
        "u55c",
    ),
]


@pytest.mark.parametrize(
    ("argv", "other", "board"), OTHER_BOARDS_PLATFORMS, ids=lambda c: c[0] if isinstance(c, list) else c
)
def test_a_platform_of_another_board_is_refused_before_any_work(capsys, tmp_path, monkeypatch, argv, other, board):
    """`--platform zcu104` on the default u250 wrote a u250 project linked for a platform named
    zcu104 (issue 50): a platform naming another shipped card is refused, naming both boards,
    before the graph is built or the set explored."""
    monkeypatch.chdir(tmp_path)
    refused(capsys, argv, "--platform", f"board {other}", board)
    assert files_below(tmp_path) == set()


def test_a_boards_own_or_custom_platform_is_taken():
    """Xilinx's platform names carry the card; one of the board's own (an embedded platform of a
    Zynq board included) or a custom name that names no shipped card is the user's to choose."""
    u55c, zcu104 = load_board("u55c"), load_board("zcu104")
    assert vitis_platform(u55c, None) == u55c.platform
    assert vitis_platform(zcu104, "xilinx_zcu104_base_202220_1") == "xilinx_zcu104_base_202220_1"
    assert vitis_platform(u55c, "my_shell_202210_1") == "my_shell_202210_1"
    assert platform_board("xilinx_u280_gen3x16_xdma_1_202211_1", u55c) == "u280"
    assert platform_board("xilinx_u55c_gen3x16_xdma_3_202210_1", u55c) is None


STRING_COMMANDS = [
    (["explore", "{v}", "--out", "out"], "--dataset"),
    (["dse", "{v}", "--board", "u55c", "--recall", "R@10=0.8", "--out", "out"], "--explore-dir"),
    (["dse", "ex", "--board", "{v}", "--recall", "R@10=0.8", "--out", "out"], "--board"),
    (["sim", "{v}"], "--project"),
    (["run", "p", "--queries", "{v}"], "--queries"),
    (["generate-hls", "d.yaml", "--index", "ex", "--out", "{v}"], "--out"),
]


@pytest.mark.parametrize("value", CONTROL)
@pytest.mark.parametrize(("command", "option"), STRING_COMMANDS, ids=lambda c: c if isinstance(c, str) else c[0])
def test_no_option_takes_control_characters(capsys, tmp_path, monkeypatch, command, option, value):
    monkeypatch.chdir(tmp_path)
    refused(capsys, [a.replace("{v}", value) for a in command], option, "control character")
    assert files_below(tmp_path) == set()


# -- board files -------------------------------------------------------------------------------
NAME_KEYS = ["name", "part", "platform", "memory.0.kind"]
TEXT_KEYS = ["description", "sources.0", "pynq_image"]


@pytest.mark.parametrize("value", HOSTILE_NAMES)
@pytest.mark.parametrize("key", NAME_KEYS)
def test_board_names_are_names(capsys, tmp_path, key, value):
    path = write_yaml(tmp_path / "b.yaml", replaced(board_data(), key, value))
    refused(capsys, ["boards", str(path)], str(path), repr(key.split(".")[-1])[1:-1])


@pytest.mark.parametrize("value", HOSTILE_NAMES)
def test_board_slr_names_are_names(capsys, tmp_path, value):
    data = board_data()
    data["slrs"] = {value if k == "SLR2" else k: v for k, v in data["slrs"].items()}
    path = write_yaml(tmp_path / "b.yaml", data)
    refused(capsys, ["boards", str(path)], "SLR")


@pytest.mark.parametrize("value", CONTROL)
@pytest.mark.parametrize("key", TEXT_KEYS)
def test_board_text_has_no_control_characters(capsys, tmp_path, key, value):
    path = write_yaml(tmp_path / "b.yaml", replaced(board_data(), key, value))
    refused(capsys, ["boards", str(path)], str(path), "control character")


@pytest.mark.parametrize("name", ["../../x", "/etc/passwd", "u55c\nx"])
def test_board_names_never_reach_outside_the_boards_folder(capsys, tmp_path, name):
    (tmp_path / "x.yaml").write_text("name: x\n")
    refused(capsys, ["dse", str(tmp_path), "--board", name.replace("\n", ""), "--recall", "R@10=0.8", "--out", "o"])


# -- design.yaml -------------------------------------------------------------------------------
DESIGN_NAME_KEYS = ["board", "index.factory", "memory.0.memory", "stages.pq_dist.memory"]
DESIGN_TEXT_KEYS = ["index.path", "slr.SLR0.0", "goal"]


def _generate_from(capsys, tmp_path, data: dict, *fragments: str) -> None:
    design = write_yaml(tmp_path / "design.yaml", data)
    explore_folder(tmp_path / "ex")
    before = files_below(tmp_path)
    refused(
        capsys,
        ["generate-hls", str(design), "--index", str(tmp_path / "ex"), "--out", str(tmp_path / "out")],
        str(design),
        *fragments,
    )
    assert files_below(tmp_path) - before <= {"out"}


@pytest.mark.parametrize("value", HOSTILE_NAMES)
@pytest.mark.parametrize("key", DESIGN_NAME_KEYS)
def test_design_names_are_names(capsys, tmp_path, key, value):
    data = replaced(make_design().to_dict(), key, value)
    _generate_from(capsys, tmp_path, data, key.replace(".0.", "[0].") if key.startswith("memory") else key)


DESIGN_CHOICE_KEYS = [
    "stages.opq.storage",
    "stages.ivf_dist.storage",
    "stages.sel_cells.arch",
    "stages.build_lut.centroids",
    "stages.build_lut.codebook",
    "stages.sel_k.arch",
]
"""Keys that take one of a few words (a store, an architecture): anything else is refused."""


@pytest.mark.parametrize("value", ["x$(rm -rf y)", "a\nb", "URAM ", "flash", 1])
@pytest.mark.parametrize("key", DESIGN_CHOICE_KEYS)
def test_design_choices_are_one_of_their_words(capsys, tmp_path, key, value):
    _generate_from(capsys, tmp_path, replaced(make_design().to_dict(), key, value), key.split(".")[-1])


@pytest.mark.parametrize("value", CONTROL)
@pytest.mark.parametrize("key", DESIGN_TEXT_KEYS)
def test_design_text_has_no_control_characters(capsys, tmp_path, key, value):
    data = replaced(make_design().to_dict(), key, value)
    _generate_from(capsys, tmp_path, data, key.split(".")[0])


def test_design_carries_the_board_file_it_was_made_for(tmp_path):
    """A board file of the user's named like a shipped one: the design uses the user's."""
    own = replaced(board_data(), "clock_mhz", 123)
    design = make_design()
    design = type(design).from_dict({**design.to_dict(), "board_file": own})
    design.save(tmp_path / "design.yaml")
    loaded = type(design).load(tmp_path / "design.yaml")
    assert loaded.target_board().clock_mhz == 123
    assert make_design().target_board().clock_mhz == 140  # without one: the shipped board


def test_design_board_file_is_validated(capsys, tmp_path):
    own = replaced(board_data(), "platform", "x\nrm -rf ~")
    _generate_from(capsys, tmp_path, {**make_design().to_dict(), "board_file": own}, "platform")


# -- explore.json ------------------------------------------------------------------------------
DSE = ["--board", "u55c", "--recall", "R@10=0.8"]


@pytest.mark.parametrize("value", HOSTILE_NAMES)
def test_explored_index_names_are_names(capsys, tmp_path, value):
    ex = explore_folder(tmp_path / "ex", {"index": value})
    refused(capsys, ["dse", str(ex), *DSE, "--out", str(tmp_path / "out")], "index name")
    assert not (tmp_path / "out" / "design.yaml").exists()


@pytest.mark.parametrize("value", ["../../etc/passwd", "/etc/passwd", "indexes/../../x.npy", "a\nb", "a\x00b", "link"])
@pytest.mark.parametrize("key", ["path", "list_sizes", "probes"])
def test_explore_file_references_stay_inside(capsys, tmp_path, key, value):
    ex = explore_folder(tmp_path / "ex", {key: value})
    (ex / "link").symlink_to(tmp_path / "ex" / ".." / "elsewhere.npy")
    refused(capsys, ["dse", str(ex), *DSE, "--out", str(tmp_path / "out")], key, "inside")


# -- dataset.yaml ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["../other/base.npy", "/etc/passwd", "a\nb.npy", "a\x00b.npy", "link.npy"])
@pytest.mark.parametrize("key", ["base", "query"])
def test_dataset_files_stay_inside(capsys, tmp_path, key, value):
    dataset_folder(tmp_path / "other")
    ds = dataset_folder(tmp_path / "ds")
    (ds / "link.npy").symlink_to(tmp_path / "other" / "base.npy")
    write_yaml(ds / "dataset.yaml", {key: value})
    refused(capsys, ["explore", str(ds), "--recall", "R@10=0.5", "--out", str(tmp_path / "out")], f"'{key}'")


@pytest.mark.parametrize("value", CONTROL)
def test_dataset_name_has_no_control_characters(capsys, tmp_path, value):
    ds = dataset_folder(tmp_path / "ds")
    write_yaml(ds / "dataset.yaml", {"name": value})
    refused(capsys, ["explore", str(ds), "--recall", "R@10=0.5", "--out", str(tmp_path / "out")], "'name'")


# -- the template layer and the containment helper ---------------------------------------------
@pytest.mark.parametrize("value", CONTROL)
def test_templates_refuse_control_characters(value):
    with pytest.raises(FannsError, match="control character"):
        finalize(value)
    with pytest.raises(FannsError, match="control character"):
        environment("hls").from_string("PLATFORM := {{ p }}\n").render(p=value)


def test_templates_print_plain_and_verbatim_text():
    env = environment("hls")
    assert env.from_string("{{ a }} {{ b }}").render(a="xilinx_u55c_gen3x16_xdma_3_202210_1", b=Verbatim("x\ny")) == (
        "xilinx_u55c_gen3x16_xdma_3_202210_1 x\ny"
    )
    assert finalize(3) == 3


@pytest.mark.parametrize(
    ("reference", "ok"),
    [
        ("a.npy", True),
        ("sub/a.npy", True),
        ("./sub/a.npy", True),
        ("../a.npy", False),
        ("sub/../../a.npy", False),
        ("/etc/passwd", False),
        ("", False),
        (None, False),
        (3, False),
        ("a\nb", False),
        ("out", False),  # a symlink out of the folder
    ],
)
def test_inside(tmp_path, reference, ok):
    (tmp_path / "f").mkdir()
    os.symlink(tmp_path, tmp_path / "f" / "out")
    if ok:
        assert inside(tmp_path / "f", reference, "x") == tmp_path / "f" / reference
    else:
        with pytest.raises(FannsError, match="^x "):
            inside(tmp_path / "f", reference, "x")
