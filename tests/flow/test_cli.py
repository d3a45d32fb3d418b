"""The `fanns` command itself: its help loads no heavy package (issue 47), and an unexpected
exception becomes one line naming where it happened, never a traceback (issue 46)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import fanns.flow.ivfpq_faces_cli
import fanns.flow.ivfpq_generate
from fanns.cli import INTERNAL_ERROR, build_parser, main
from fanns.errors import WHERE, FannsError
from fanns.flow.error_context import FOLDER, note_design
from tests.arch.test_design_schema import make_design

HEAVY = ("amaranth", "faiss", "scipy", "cocotb", "matplotlib", "numpy", "h5py", "jinja2", "yaml", "rich")
"""Packages `fanns --help` must not import: each costs from a tenth of a second (rich, yaml) to
seconds (amaranth, faiss, scipy, cocotb), and none is needed to print options."""

PARSER_MODULES = """\
import argparse, json, sys
import fanns.cli

def walk(parser, prefix):
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, [*prefix, name])

helps = {" ".join(p): len(parser.format_help()) for p, parser in walk(fanns.cli.build_parser(), [])}
print(json.dumps({"helps": helps, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _commands(sub, (*prefix, name))
    return out


def test_the_parser_and_every_help_load_no_heavy_package():
    """In a fresh interpreter, as `fanns --help` runs: build the parser and render every
    command's help; none of the heavy packages is imported."""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", PARSER_MODULES], capture_output=True, text=True, check=True, cwd=root
    ).stdout
    result = json.loads(out)
    assert not set(HEAVY) & set(result["modules"]), sorted(set(HEAVY) & set(result["modules"]))
    assert {"", "generate", "sim", "datasets info", "pe list", "calibrate"} <= set(result["helps"])
    assert all(size > 100 for size in result["helps"].values()), result["helps"]


@pytest.mark.parametrize("command", _commands(build_parser()), ids=lambda c: " ".join(c) or "fanns")
def test_every_command_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {' '.join(['fanns', *command])}")


def test_every_command_names_an_implementation():
    """Each command's `func` ("module:function") resolves: a renamed function fails here, not at a user's run."""
    parser = build_parser()
    seen = set()
    for command in _commands(parser):
        sub = parser
        for name in command:
            sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
        target = sub.get_default("func")
        if target:
            module, _, name = target.partition(":")
            __import__(module)
            assert callable(getattr(sys.modules[module], name)), target
            seen.add(target)
    assert len(seen) == 15


def _internal_error(capsys, argv: list[str]) -> list[str]:
    """Run `fanns ARGV`; it must fail with the internal-error code and one error line plus its
    hint, no traceback; the lines fanns printed (progress lines dropped)."""
    capsys.readouterr()
    assert main(argv) == INTERNAL_ERROR
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if not line.startswith("[")]  # step lines: `[1/5] ...`
    assert len(lines) == 2 and lines[0].startswith("fanns: internal error in "), err
    assert lines[1].startswith("  hint: ") and "fanns --debug" in lines[1] and "issue tracker" in lines[1]
    return lines


def _generate_argv(tmp_path: Path) -> list[str]:
    return ["generate", "builtin:sift-10k", "--recall", "R@10=0.8", "--board", "u55c", "--out", str(tmp_path / "p")]


def test_an_exception_in_a_step_is_one_line_naming_it(capsys, monkeypatch, tmp_path):
    def deep(spec):
        raise RecursionError("maximum recursion depth exceeded\nwhile calling a Python object")

    monkeypatch.setattr(fanns.flow.ivfpq_generate, "load_dataset", deep)
    first, _ = _internal_error(capsys, _generate_argv(tmp_path))
    assert first == (
        "fanns: internal error in generate, step 1/5 exploration: "
        "RecursionError: maximum recursion depth exceeded while calling a Python object"
    )
    assert not (tmp_path / "p").exists()


def test_debug_shows_the_traceback(monkeypatch, tmp_path):
    monkeypatch.setattr(fanns.flow.ivfpq_generate, "load_dataset", lambda spec: {}["base"])
    with pytest.raises(KeyError, match="base"):
        main(["--debug", *_generate_argv(tmp_path)])


def test_the_error_names_the_design_file(capsys, monkeypatch, tmp_path):
    def broken(design, index, dataset, queries):
        raise KeyError("nlist")

    monkeypatch.setattr(fanns.flow.ivfpq_faces_cli, "load_inputs", broken)
    design = tmp_path / "design.yaml"
    argv = ["generate-rtl", str(design), "--index", str(tmp_path / "ex"), "--out", str(tmp_path / "p")]
    first, _ = _internal_error(capsys, argv)
    assert first == f"fanns: internal error in generate-rtl, design {design}: KeyError: 'nlist'"


def test_a_design_in_memory_is_saved_when_an_error_is_reported(capsys, monkeypatch, tmp_path):
    """The design `generate` chose exists in no file: it is saved under the cache, and only then."""
    monkeypatch.setenv("FANNS_CACHE", str(tmp_path / "cache"))

    def broken(design, index, dataset, queries):
        note_design(make_design())
        raise ValueError("an elaboration that fails")

    monkeypatch.setattr(fanns.flow.ivfpq_faces_cli, "load_inputs", broken)
    argv = ["generate-hls", "d.yaml", "--index", "ex", "--out", str(tmp_path / "p")]
    first, _ = _internal_error(capsys, argv)
    (saved,) = (tmp_path / "cache" / FOLDER).iterdir()
    assert first.endswith(f", design {saved}: ValueError: an elaboration that fails")
    assert saved.read_text() == make_design().to_yaml()


def test_bad_input_is_still_a_fanns_error(capsys, monkeypatch, tmp_path):
    """Only exceptions that are not `FannsError` are internal errors; a step noted by an earlier
    command does not leak into the next one's report."""
    WHERE.step = "step 9/9 stale"

    def refused(design, index, dataset, queries):
        raise FannsError("design.yaml: bad", hint="fix it")

    monkeypatch.setattr(fanns.flow.ivfpq_faces_cli, "load_inputs", refused)
    assert main(["generate-rtl", "d.yaml", "--index", "ex", "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fanns: error: design.yaml: bad") and WHERE.step is None
