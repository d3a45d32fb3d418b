"""Compiled C++ programs kept by content (`fanns.tools.csim.compile_program`): the same program in
another folder (another session's build folder, a project generated elsewhere) is copied from the
model cache, not compiled again; another header, define or source text is compiled afresh, and a
program that does not compile is never kept, and a model cache that cannot be written leaves
the compile to itself."""

import subprocess

import pytest

from fanns.tools import csim, modelcache

MAIN = '#include "value.h"\n#include <cstdio>\nint main() { std::printf("%d\\n", VALUE + EXTRA); return 0; }\n'


@pytest.fixture
def compiles(tmp_path, monkeypatch):
    """A fresh model cache; the g++ compiles (not the preprocessor runs) are counted."""
    monkeypatch.setenv(modelcache.ROOT_ENV, str(tmp_path / "models"))
    calls = []
    real = csim._compile

    def counting(flags, sources, out):
        calls.append(out)
        real(flags, sources, out)

    monkeypatch.setattr(csim, "_compile", counting)
    return calls


def _project(folder, value: int, main: str = MAIN):
    folder.mkdir(parents=True)
    (folder / "main.cpp").write_text(main)
    (folder / "value.h").write_text(f"#define VALUE {value}\n")
    return folder


def _output(binary) -> str:
    return subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.strip()


def test_the_same_program_elsewhere_is_copied_and_another_is_compiled(tmp_path, compiles):
    def build(name, value, extra=1):
        src = _project(tmp_path / name / "src", value)
        return csim.compile_program([src / "main.cpp"], tmp_path / name / "out", {"EXTRA": extra}, [src])

    first = build("a", 40)
    assert _output(first) == "41" and len(compiles) == 1
    again = build("b", 40)  # same texts in other folders: the cached program
    assert _output(again) == "41" and len(compiles) == 1
    assert again.read_bytes() == first.read_bytes()
    assert _output(build("c", 41)) == "42" and len(compiles) == 2  # another header
    assert _output(build("d", 40, extra=2)) == "42" and len(compiles) == 3  # another define


def test_a_program_that_does_not_compile_is_not_kept(tmp_path, compiles):
    bad = _project(tmp_path / "bad", 1, MAIN.replace("return 0;", "return undeclared;"))
    for out in ("x", "y"):
        with pytest.raises(AssertionError, match="undeclared"):
            csim.compile_program([bad / "main.cpp"], tmp_path / out, {"EXTRA": 0}, [bad])
    assert len(compiles) == 2
    assert not [p for p in (tmp_path / "models").glob("gxx-*") if not p.name.startswith(".")]


def test_a_model_cache_that_cannot_be_made_compiles_without_it(tmp_path, compiles, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(modelcache.ROOT_ENV, str(tmp_path / "a-file" / "models"))  # no folder can be made there
    src = _project(tmp_path / "src", 5)
    for out in ("x", "y"):
        assert _output(csim.compile_program([src / "main.cpp"], tmp_path / out, {"EXTRA": 0}, [src])) == "5"
    assert len(compiles) == 2
