"""The Verilator-runtime object cache: compiles once per command, copies afterwards, passes other compiles through."""

import subprocess

from fanns.tools import objcache


def test_runtime_objects_are_compiled_once(tmp_path, monkeypatch):
    src = tmp_path / "verilated.cpp"
    src.write_text("int answer() { return 42; }\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FANNS_OBJCACHE_DIR", str(tmp_path / "cache"))
    compiles = []
    real_run = subprocess.run

    def counting_run(cmd, *args, **kwargs):
        if "--version" not in cmd:
            compiles.append(cmd)
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(objcache.subprocess, "run", counting_run)
    cmd = ["c++", "-Os", "-MMD", "-c", "-o", "verilated.o", str(src)]
    assert objcache.main(cmd) == 0
    first = (tmp_path / "verilated.o").read_bytes()
    (tmp_path / "verilated.o").unlink()
    (tmp_path / "verilated.d").unlink()
    assert objcache.main(cmd) == 0
    assert len(compiles) == 1  # the second build copied the cached object
    assert (tmp_path / "verilated.o").read_bytes() == first and (tmp_path / "verilated.d").exists()
    assert objcache.main(["c++", "-O0", "-MMD", "-c", "-o", "verilated.o", str(src)]) == 0
    assert len(compiles) == 2  # another command is another entry

    design = tmp_path / "Vtop__ALL.cpp"
    design.write_text("int f() { return 1; }\n")
    assert objcache.main(["c++", "-c", "-o", "Vtop__ALL.o", str(design)]) == 0
    assert objcache.main(["c++", "-c", "-o", "Vtop__ALL.o", str(design)]) == 0
    assert len(compiles) == 4  # design objects are never cached
