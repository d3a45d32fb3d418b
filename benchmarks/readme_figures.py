"""The README's "Figures measured so far" table, rendered from the benchmarks' recorded results.

Why: a figure typed into the README goes stale the moment the code moves (the DSE speed stood at
2.27 M combinations/s long after the code reached ten times that). Every row here is rendered
from a JSON file under `benchmarks/results/`: the output a benchmark wrote with `--json PATH`
(`benchmarks/record.py`: figures, commit, date, CPU model, cores, load), or — for benchmarks
that do not write JSON yet — `readme_quoted.json`, the row as the README quoted it with the
commit that last changed it. `tests/test_readme_figures.py` checks that README.md holds exactly
this table, so the README cannot drift from the recorded results.

    PYTHONPATH=. python benchmarks/readme_figures.py            # print the table
    PYTHONPATH=. python benchmarks/readme_figures.py --check    # exit 1 if README.md differs
    PYTHONPATH=. python benchmarks/readme_figures.py --run dse   # re-measure first
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE.parent / "README.md"
HEADER = ["| figure | value | reproduce with |", "|---|---|---|"]

RUNNABLE = {
    "dse": ["dse.py"],
    "recall_holdout_sift-10k": ["recall_holdout.py", "--sets", "sift-10k", "--seeds", "3"],
    "recall_holdout_deep-10k": ["recall_holdout.py", "--sets", "deep-10k", "--seeds", "3"],
}
"""Benchmarks that record JSON and finish in minutes here: `--run` re-measures them."""

DSE_ROW_AFTER = "(2) this project's DSE at the same index, nprobe and K"
"""The quoted row the DSE speed row follows (the README's order)."""


def _load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def _origin(rec: dict) -> str:
    m = rec["machine"]
    where = f"{m['cpu']}, {m['cores']} cores, load {m['load_average_1min']}"
    return f"measured at {rec['commit'][:10]}, {rec['date'][:10]}, {where}"


def dse_row(rec: dict) -> list[str]:
    """The DSE speed row from `benchmarks/dse.py --json`."""
    f = rec["figures"]
    value = (
        f"{f['combinations_per_second']:,} combinations/s on one core "
        f"({f['evaluated']:,} in {f['search_seconds']:.2f} s; "
        "a combination is one candidate the search kernel scores — bottleneck cycles, summed resources and the "
        "budget test — almost all whole designs: one index at its nprobe with one option per stage group after "
        "Pareto pruning); a full "
        f"{f['board'].upper()} sweep of {f['indexes']} indexes at SIFT100M scale: {f['total_seconds']:.1f} s, "
        f"of which {f['options_seconds']:.1f} s enumerate the stage options (PE timing and resources) "
        f"({_origin(rec)})"
    )
    return ["DSE speed", value, f"`{rec['command']}`"]


def recall_row(rec: dict) -> list[str]:
    """The held-out recall row from `benchmarks/recall_holdout.py --json`."""
    rows = rec["figures"]["rows"]
    parts = []
    for r in rows:
        if not r["reached"]:
            parts.append(f"{r['set']} {r['goal']}: not reached (best {r['best_recall']:.3f})")
            continue
        lo, hi = r["holdout_interval"]
        retr = " / ".join(f"{v:.3f}" for v in r["retrain_holdout_recalls"])
        parts.append(
            f"{r['set']} {r['goal']}: nprobe {r['nprobe']}, selection {r['selection_recall']:.3f}, held-out "
            f"{r['holdout_recall']:.3f} (95 % CI {lo:.3f}–{hi:.3f}), retrains {retr}, "
            f"training sd {r['training_sd']:.4f}"
        )
    first = next(r for r in rows if r["reached"])
    q = first["queries"]
    figure = (
        f"promised (held-out) recall vs indexes retrained with other seeds ({first['index']}; nprobe chosen on "
        f"{q['selection']} selection queries at goal + {first['margin']:g}; {q['holdout']} held-out queries, "
        "95 % bootstrap interval over queries)"
    )
    return [figure, "; ".join(parts) + f" ({_origin(rec)})", f"`{rec['command']}`"]


def resources_row(rec: dict) -> list[str]:
    """The whole-design resource row from `benchmarks/rtl_resources.py --json`."""
    parts = []
    for r in rec["figures"]["designs"]:
        errs = ", ".join(
            f"{kind.upper()} " + ("n/a" if r["error"][kind] is None else f"{100 * r['error'][kind]:+.1f} %")
            for kind in ("lut", "ff", "bram18", "uram", "dsp")
            if r["yosys"][kind] or r["model"][kind] >= 0.5
        )
        parts.append(f"{r['name']} ({r['kind']}; {r['design']}): {errs}")
    worst = rec["figures"]["held_out_max_abs_error"]
    value = f"model vs yosys synth_xilinx -family xcup: {'; '.join(parts)}"
    if worst:
        kinds = ("lut", "ff", "bram18", "uram", "dsp")
        value += ". Largest on held-out designs: " + ", ".join(f"{k.upper()} {100 * worst[k]:.1f} %" for k in kinds)
    return [
        "whole generated accelerators: resource model vs a yosys synthesis of the same Verilog",
        f"{value} ({_origin(rec)})",
        f"`{rec['command']}`",
    ]


def table_rows() -> list[list[str]]:
    """Every row of the table, in the README's order."""
    out = []
    for row in _load("readme_quoted")["rows"]:
        out.append([row["figure"], row["value"], row["reproduce"]])
        if row["figure"].startswith(DSE_ROW_AFTER):
            out.append(dse_row(_load("dse")))
            for path in sorted(RESULTS.glob("recall_holdout_*.json")):
                out.append(recall_row(_load(path.stem)))
            if (RESULTS / "rtl_resources.json").exists():
                out.append(resources_row(_load("rtl_resources")))
    return out


def render() -> str:
    """The markdown table, header included, one line per row."""
    return "\n".join([*HEADER, *("| " + " | ".join(cells) + " |" for cells in table_rows())])


def readme_table(text: str) -> str:
    """The figures table of a README's text: the header line up to the first line not in the table."""
    lines = text.split("\n")
    start = lines.index(HEADER[0])
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[start:end])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with README.md; exit 1 when they differ")
    ap.add_argument("--run", default="", help=f"re-measure these first (of {', '.join(RUNNABLE)})")
    args = ap.parse_args()
    for name in filter(None, args.run.split(",")):
        if name not in RUNNABLE:
            ap.error(f"--run {name}: not one of {', '.join(RUNNABLE)}")
        script, *options = RUNNABLE[name]
        cmd = [sys.executable, str(HERE / script), *options, "--json", str(RESULTS / f"{name}.json")]
        subprocess.run(cmd, check=True)
    table = render()
    if not args.check:
        print(table)
        return 0
    have = readme_table(README.read_text())
    if have == table:
        print("README.md's figures table matches the recorded results")
        return 0
    ours, theirs = table.split("\n"), have.split("\n")
    for i in range(max(len(ours), len(theirs))):
        a = theirs[i] if i < len(theirs) else "(missing)"
        b = ours[i] if i < len(ours) else "(missing)"
        if a != b:
            print(f"row {i - 1}: README has\n  {a}\nrecorded results give\n  {b}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
