"""README.md's "Figures measured so far" table is the one rendered from the recorded benchmark
results (`benchmarks/readme_figures.py`), so it cannot drift from them."""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "benchmarks" / "readme_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_table_is_the_rendered_one():
    figures = _script()
    assert figures.readme_table((ROOT / "README.md").read_text()) == figures.render()


def test_recorded_results_say_where_they_came_from():
    for path in (ROOT / "benchmarks" / "results").glob("*.json"):
        rec = json.loads(path.read_text())
        if path.stem == "readme_quoted":
            assert all(len(r["commit"]) == 40 and r["date"] for r in rec["rows"]), path
            continue
        assert len(rec["commit"].split("+")[0]) == 40 and rec["date"].endswith("Z"), path
        assert rec["machine"]["cpu"] and rec["machine"]["cores"] >= 1, path
        assert rec["command"].startswith("python benchmarks/"), path


def test_check_fails_on_a_readme_that_drifted(tmp_path, monkeypatch, capsys):
    figures = _script()
    text = (ROOT / "README.md").read_text()
    rate = json.loads((ROOT / "benchmarks" / "results" / "dse.json").read_text())["figures"]["combinations_per_second"]
    stale = tmp_path / "README.md"
    stale.write_text(text.replace(f"{rate:,} combinations/s", "2,268,212 combinations/s"))
    monkeypatch.setattr(figures, "README", stale)
    monkeypatch.setattr(sys, "argv", ["readme_figures.py", "--check"])
    assert figures.main() == 1
    assert "2,268,212" in capsys.readouterr().out
    monkeypatch.setattr(figures, "README", ROOT / "README.md")
    assert figures.main() == 0
