"""docs/figures.md's table is the one rendered from the recorded benchmark results
(`benchmarks/readme_figures.py`), so it cannot drift from them."""

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str = "readme_figures"):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_table_is_the_rendered_one():
    figures = _script()
    assert figures.readme_table((ROOT / "docs" / "figures.md").read_text()) == figures.render()


def test_recorded_results_say_where_they_came_from():
    results = ROOT / "benchmarks" / "results"
    table = json.loads((results / "readme_table.json").read_text())["rows"]
    quoted = [r for r in table if "result" not in r]
    assert all(len(r["commit"]) == 40 and r["date"] and r["reproduce"] for r in quoted)
    rendered = {r["result"] for r in table if "result" in r}
    recorded = {p.stem for p in results.glob("*.json")} - {"readme_table"}
    assert rendered == recorded, "every recorded result is one row of the table, and every result row is recorded"
    for name in recorded:
        rec = json.loads((results / f"{name}.json").read_text())
        assert len(rec["commit"].split("+")[0]) == 40 and rec["date"].endswith("Z"), name
        assert rec["machine"]["cpu"] and rec["machine"]["cores"] >= 1, name
        assert rec["command"].startswith(f"python benchmarks/{rec['benchmark']}.py "), name
        assert f"--json benchmarks/results/{name}.json" in rec["command"], "--run re-measures into the same file"
        assert shlex.join(shlex.split(rec["command"])) == rec["command"], f"{name}: a command a shell reads back"


def test_recorded_commands_keep_empty_arguments(monkeypatch):
    record = _script("record")
    monkeypatch.setattr(sys, "argv", ["/x/benchmarks/datasets.py", "--dims", "", "--goal", "R@10=0.6"])
    assert record.command_line() == "python benchmarks/datasets.py --dims '' --goal R@10=0.6"


def test_check_fails_on_a_readme_that_drifted(tmp_path, monkeypatch, capsys):
    figures = _script()
    text = (ROOT / "docs" / "figures.md").read_text()
    rate = json.loads((ROOT / "benchmarks" / "results" / "dse.json").read_text())["figures"]["combinations_per_second"]
    stale = tmp_path / "figures.md"
    stale.write_text(text.replace(f"{rate:,} combinations/s", "2,268,212 combinations/s"))
    monkeypatch.setattr(figures, "FIGURES", stale)
    monkeypatch.setattr(sys, "argv", ["readme_figures.py", "--check"])
    assert figures.main() == 1
    assert "2,268,212" in capsys.readouterr().out
    monkeypatch.setattr(figures, "FIGURES", ROOT / "docs" / "figures.md")
    assert figures.main() == 0


HELP_RUNNER = """
import contextlib, io, json, runpy, sys
sys.path.insert(0, sys.argv[1])  # what `python benchmarks/NAME.py` puts first: the script's folder
failed = {}
for path in sys.argv[2:]:
    sys.argv = [path, "--help"]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        failed[path] = "ran without answering --help"
    except SystemExit as exc:
        if exc.code not in (0, None) or "usage:" not in out.getvalue():
            failed[path] = f"exit {exc.code}: {out.getvalue()[-500:]}"
    except BaseException as exc:
        failed[path] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failed))
"""


def test_every_figure_script_runs_as_printed(tmp_path):
    """`python benchmarks/NAME.py --help` answers for every benchmark, run as the README prints
    the commands: from the checkout without PYTHONPATH, so only the installed package is
    importable and not tests/ (a figure's command that imports a test helper fails as printed).
    One interpreter runs them all (the imports are the cost), with the checkout's package first."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "fanns").symlink_to(ROOT / "fanns")
    scripts = sorted(str(p) for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "record")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(tmp_path / "site")}
    run = subprocess.run(
        [sys.executable, "-c", HELP_RUNNER, str(ROOT / "benchmarks"), *scripts],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    failed = json.loads(run.stdout.strip().splitlines()[-1])
    assert not failed, failed


def test_readme_example_is_the_recorded_demo_output():
    """README's worked example is what `make demo` printed (`benchmarks/demo.py --write-readme`),
    with the commit and machine that printed it, not text typed in."""
    demo = _script().benchmark_module("demo")
    rec = json.loads((ROOT / "benchmarks" / "results" / "demo.json").read_text())
    readme = (ROOT / "README.md").read_text()
    assert demo.readme_example(rec) in readme
    assert demo.readme_with_example(readme, demo.readme_example(rec)) == readme
    assert any(line.startswith("chosen: ") for line in rec["figures"]["output"])


def test_readme_prefetch_table_is_the_recorded_benchmark():
    """README's prefetch table is `benchmarks/host_tier.py --write-readme`'s rendering of the recorded
    run, with its commit and machine, not text typed in."""
    bench = _script().benchmark_module("host_tier")
    rec = json.loads((ROOT / "benchmarks" / "results" / "host_tier.json").read_text())
    readme = (ROOT / "README.md").read_text()
    block = bench.readme_block(rec)
    assert block in readme
    assert "| none |" in block and "TeleRAG" in block


def test_readme_time_to_design_table_is_the_recorded_benchmark():
    """README's table of waits is `benchmarks/time_to_design.py --write-readme`'s rendering of the
    recorded run (first and second runs, the fast tier), with its commit and machine, not text typed in."""
    bench = _script().benchmark_module("time_to_design")
    rec = json.loads((ROOT / "benchmarks" / "results" / "time_to_design.json").read_text())
    block = bench.readme_block(rec)
    assert block in (ROOT / "README.md").read_text()
    assert "`make demo`, first run" in block and "fast test tier" in block
