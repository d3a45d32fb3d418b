"""The figures table of `docs/figures.md`, rendered from the benchmarks' recorded results.

Why: a figure typed into the README goes stale the moment the code moves (the DSE speed stood at
2.27 M combinations/s long after the code reached ten times that). `results/readme_table.json`
lists the rows in the table's order. A row `{"result": NAME}` is rendered from
`results/NAME.json` — what a benchmark wrote with `--json PATH` (`benchmarks/record.py`: its
figures, the command, commit, date, CPU model, cores, load) — by that benchmark's own
`readme_row(figures)` (one row, or a list of rows), so the numbers and the sentence that quotes
them live beside the code that measures them. Rows whose benchmark records no JSON yet are
quoted as they were given, with the commit that last changed them.
`tests/test_readme_figures.py` checks that docs/figures.md holds exactly this table, so the
figures cannot drift from the recorded results.

    PYTHONPATH=. python benchmarks/readme_figures.py              # print the table
    PYTHONPATH=. python benchmarks/readme_figures.py --write      # put it into docs/figures.md
    PYTHONPATH=. python benchmarks/readme_figures.py --check      # exit 1 if docs/figures.md differs
    PYTHONPATH=. python benchmarks/readme_figures.py --run dse    # re-measure first (its recorded command)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TABLE = RESULTS / "readme_table.json"
FIGURES = HERE.parent / "docs" / "figures.md"
HEADER = ["| figure | value | reproduce with |", "|---|---|---|"]


def _load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def _origin(rec: dict) -> str:
    m = rec["machine"]
    where = f"{m['cpu']}, {m['cores']} cores, load {m['load_average_1min']}"
    return f"measured at {rec['commit'][:10]}, {rec['date'][:10]}, {where}"


def benchmark_module(name: str):
    """The benchmark script `benchmarks/NAME.py` as a module (its `readme_row` renders its row); the
    benchmarks import their siblings (`record`) from their own folder and the project (and its test
    helpers) from the checkout, as `PYTHONPATH=. python benchmarks/NAME.py` does."""
    for folder in (HERE.parent, HERE):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def result_rows(name: str) -> list[list[str]]:
    """The rows of recorded result `name`: the benchmark's sentences, where it was measured, its command."""
    rec = _load(name)
    rows = benchmark_module(rec["benchmark"]).readme_row(rec["figures"])
    rows = rows if isinstance(rows, list) else [rows]
    return [[figure, f"{value} ({_origin(rec)})", f"`{rec['command']}`"] for figure, value in rows]


def result_names() -> list[str]:
    """The recorded results the table renders, in its order."""
    return [row["result"] for row in json.loads(TABLE.read_text())["rows"] if "result" in row]


def table_rows() -> list[list[str]]:
    """Every row of the table, in its order."""
    out = []
    for row in json.loads(TABLE.read_text())["rows"]:
        if "result" in row:
            out.extend(result_rows(row["result"]))
        else:
            out.append([row["figure"], row["value"], row["reproduce"]])
    return out


def render() -> str:
    """The markdown table, header included, one line per row."""
    return "\n".join([*HEADER, *("| " + " | ".join(cells) + " |" for cells in table_rows())])


def _table_span(lines: list[str]) -> tuple[int, int]:
    start = lines.index(HEADER[0])
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return start, end


def readme_table(text: str) -> str:
    """The figures table of a document's text: the header line up to the first line not in the table."""
    lines = text.split("\n")
    start, end = _table_span(lines)
    return "\n".join(lines[start:end])


def with_table(text: str, table: str) -> str:
    """The document's text with its figures table replaced by `table`."""
    lines = text.split("\n")
    start, end = _table_span(lines)
    return "\n".join([*lines[:start], table, *lines[end:]])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with docs/figures.md; exit 1 when they differ")
    ap.add_argument("--write", action="store_true", help="replace the table in docs/figures.md")
    ap.add_argument(
        "--run", default="", help="re-measure these recorded results first, by their recorded commands (or: all)"
    )
    args = ap.parse_args()
    names = result_names() if args.run == "all" else [n for n in args.run.split(",") if n]
    for name in names:
        if name not in result_names():
            ap.error(f"--run {name}: not one of {', '.join(result_names())}")
        cmd = shlex.split(_load(name)["command"])
        subprocess.run([sys.executable, *cmd[1:]], cwd=HERE.parent, check=True)
    table = render()
    if args.write:
        FIGURES.write_text(with_table(FIGURES.read_text(), table))
    if not args.check:
        print(table if not args.write else f"wrote the table into {FIGURES}")
        return 0
    have = readme_table(FIGURES.read_text())
    if have == table:
        print("docs/figures.md's table matches the recorded results")
        return 0
    ours, theirs = table.split("\n"), have.split("\n")
    for i in range(max(len(ours), len(theirs))):
        a = theirs[i] if i < len(theirs) else "(missing)"
        b = ours[i] if i < len(ours) else "(missing)"
        if a != b:
            print(f"row {i - 1}: docs/figures.md has\n  {a}\nrecorded results give\n  {b}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
