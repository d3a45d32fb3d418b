"""How long a user waits: `fanns generate --sim` step by step, first run and second run, and the
test tiers.

Why: "a first verified design in about 5 minutes" is a promise; this script measures it the way a
user meets it. Per design it runs `fanns generate ... --sim` twice in a child process with a cache
folder of its own (`FANNS_CACHE`): the first run starts from an empty cache (ground truth, the
exploration's indexes, the simulator builds and Verilator's runtime objects all made anew), the
second reuses what the first left, as a user's second run does. The child's standard output is
unbuffered and every step line (`[k/5] ...`) is timed as it arrives, so the wall time of each step
is the gap between its line and the next: start-up (imports, argument checks), exploration, DSE,
code generation, the simulation of each face (simulator build included), report.

Designs:
- `demo`: `make demo`'s command (builtin:sift-10k, U55C, 1-R@10 = 0.8, nlist 32 and 64);
- `784`, `1536`: the README's synthetic rows' shapes (`fanns.datasets.synthetic.clustered`,
  `--n` vectors, 1000 queries, written as .npy files into the work folder), R@10 = 0.6 on the U55C,
  8 simulated queries, and an exploration of one index each: the README rows' IVF256,PQ98 and
  IVF512,PQ128 without OPQ (`SYNTHETIC_GRIDS`). The default grid's 16 trainings took 7.7 and 24.5
  minutes here (`explore_s` in benchmarks/results/datasets_synth784.json and _synth1536.json);
  what this script measures for these designs is the wait after the exploration.

`--install` also times a fresh virtual environment with `make install` (pip's download cache on
this machine is whatever it holds: say so when quoting it); `--tiers` times `make test` (the fast
tier) and the slow tier as the Makefile runs them (`--tiers fast`: the fast tier alone; the whole
CI run's time is CI's own record). Wall time depends on what else the machine
runs: the record keeps the load average before and after each run.

`--write-readme` puts the recorded run into README.md's block (`readme_block`), beside the waits
issue 47 reported before this work (`BEFORE`).

    PYTHONPATH=. python benchmarks/time_to_design.py [--designs demo,784,1536] [--n N] [--install]
        [--tiers [fast,slow]] [--work DIR] [--json PATH] [--write-readme]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from record import command_line, replace_block, write_result

from fanns.datasets.synthetic import clustered

ROOT = Path(__file__).resolve().parent.parent
DEMO_ARGS = [
    "builtin:sift-10k",
    "--recall",
    "1-R@10=0.8",
    "--board",
    "u55c",
    "--nlist",
    "32,64",
    "--queries",
    "200",
]
"""The Makefile's demo command, without its output folder (the Makefile is the reference)."""
SYNTHETIC_ARGS = ["--recall", "R@10=0.6", "--board", "u55c", "--sim-queries", "8"]
SYNTHETIC_QUERIES = 1000
SYNTHETIC_GRIDS = {
    784: ["--nlist", "256", "--m", "98", "--no-opq"],
    1536: ["--nlist", "512", "--m", "128", "--no-opq"],
}
"""The one index explored per synthetic design: the index of the README's row of that dimension."""
BEFORE = {
    "install": "-",
    "demo first": "6.8 min quiet (Verilator 4.4 min); 22.8 min loaded, 17 min of it silent",
    "demo second": "73 s",
    "784 first": "on a 60,000 x 784 set, the Verilator build alone over 30 min",
    "1536 first": "-",
    "fast": "17-22 min",
}
"""The same waits before this work, as issue 47 reported them (a fresh clone on this 2-core machine,
December 2026, "What a new user waits for today"); "-" where it gave none."""
README = ROOT / "README.md"
BLOCK_START = "<!-- time-to-design figures, from benchmarks/results/time_to_design.json -->"
BLOCK_END = "<!-- end of the time-to-design figures -->"
STEP = re.compile(r"^\[(\d)/5\] (.*)$")
STEP_NAMES = {1: "exploration", 2: "dse", 3: "codegen", 5: "report"}
TIER = re.compile(r"(\d+) passed.* in ([\d.]+)s")


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def step_name(number: int, text: str) -> str:
    """The name of a step line: the simulation steps by their face (`sim_hls`, `sim_rtl`)."""
    if number == 4:
        face = re.search(r"on the (\w+) face", text)
        return f"sim_{face.group(1)}" if face else "sim"
    return STEP_NAMES[number]


def timed_run(cmd: list[str], env: dict) -> dict:
    """Run `cmd`, timing each step line as it arrives: {"steps": {name: seconds}, "total": s, ...}."""
    start = time.perf_counter()
    marks: list[tuple[str, float]] = [("startup", start)]
    load_before = _load()
    lines = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env) as proc:
        for line in proc.stdout:
            lines.append(line)
            found = STEP.match(line.strip())
            if found:
                marks.append((step_name(int(found.group(1)), found.group(2)), time.perf_counter()))
                print(f"  {time.perf_counter() - start:7.1f} s  {line.rstrip()}", flush=True)
    end = time.perf_counter()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{''.join(lines[-40:])}")
    steps = {}
    for (name, t0), (_, t1) in zip(marks, [*marks[1:], ("end", end)]):
        steps[name] = round(steps.get(name, 0.0) + t1 - t0, 1)
    return {"steps": steps, "total": round(end - start, 1), "load_before": load_before, "load_after": _load()}


def synthetic_dataset(d: int, n: int, work: Path) -> Path:
    """A folder with base.npy and query.npy of the clustered synthetic set of dimension `d`."""
    folder = work / "data" / f"synthetic-{d}d-{n}"
    if not (folder / "query.npy").exists():
        folder.mkdir(parents=True, exist_ok=True)
        base, queries = clustered(n, SYNTHETIC_QUERIES, d, seed=d)
        np.save(folder / "base.npy", base)
        np.save(folder / "query.npy", queries)
    return folder


def design_args(design: str, n: int, work: Path) -> list[str]:
    if design == "demo":
        return DEMO_ARGS
    d = int(design)
    return [str(synthetic_dataset(d, n, work)), *SYNTHETIC_ARGS, *SYNTHETIC_GRIDS.get(d, [])]


def time_design(design: str, n: int, work: Path) -> dict:
    """First and second `generate --sim` of `design`, each step timed."""
    cache = work / "cache" / design
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "FANNS_CACHE": str(cache), "PYTHONUNBUFFERED": "1"}
    env.pop("FANNS_NO_PROGRESS", None)
    out = work / "projects" / design
    cmd = [sys.executable, "-m", "fanns.cli", "generate", *design_args(design, n, work), "--sim", "--out", str(out)]
    runs = {}
    for run in ("first", "second"):
        print(f"{design}: {run} run", flush=True)
        runs[run] = timed_run([*cmd, "--force"], env)
    return runs


def time_install(work: Path) -> dict:
    """`make install` into a new virtual environment (created by the Makefile itself)."""
    venv = work / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    print("install: make install into a new virtual environment", flush=True)
    load_before, start = _load(), time.perf_counter()
    subprocess.run(["make", "-s", "install", f"VENV={venv}"], cwd=ROOT, check=True)
    return {"total": round(time.perf_counter() - start, 1), "load_before": load_before, "load_after": _load()}


def time_tiers(tiers: list[str]) -> dict:
    """`make test` (the fast tier, install already done) and/or the slow tier, as the Makefile runs them."""
    out = {}
    for tier, target in (("fast", ["make", "-s", "test"]), ("slow", None)):
        if tier not in tiers:
            continue
        cmd = target or [
            str(ROOT / ".venv" / "bin" / "python"),
            *"-m pytest -n 2 --dist loadgroup -q -m".split(),
            "slow and not long",
        ]
        print(f"tier {tier}: {' '.join(cmd)}", flush=True)
        load_before, start = _load(), time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = round(time.perf_counter() - start, 1)
        found = TIER.search(done.stdout.splitlines()[-1] if done.stdout else "")
        out[tier] = {
            "wall": wall,
            "passed": int(found.group(1)) if found else None,
            "pytest_seconds": float(found.group(2)) if found else None,
            "returncode": done.returncode,
            "load_before": load_before,
            "load_after": _load(),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--designs", default="demo,784,1536", help="comma-separated: demo and/or dimensions (784, 1536)")
    ap.add_argument("--n", type=int, default=100_000, help="vectors of the synthetic sets (default 100,000)")
    ap.add_argument("--install", action="store_true", help="also time `make install` into a new venv")
    ap.add_argument(
        "--tiers",
        nargs="?",
        const="fast,slow",
        help="also time the test tiers: fast, slow or fast,slow (the default with no value)",
    )
    ap.add_argument("--work", default="/tmp/fanns-time-to-design", help="work folder (caches, data, projects)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    ap.add_argument(
        "--write-readme", action="store_true", help="put the recorded figures into README.md's block (needs --json)"
    )
    args = ap.parse_args()
    if args.write_readme and not args.json:
        ap.error("--write-readme needs --json (the README quotes the recorded run)")
    work = Path(args.work).resolve()
    figures: dict = {"n": args.n, "designs": {}}
    if args.install:
        figures["install"] = time_install(work)
    for design in args.designs.split(","):
        figures["designs"][design] = time_design(design, args.n, work)
    if args.tiers:
        figures["tiers"] = time_tiers(args.tiers.split(","))
    for design, runs in figures["designs"].items():
        for run, r in runs.items():
            steps = ", ".join(f"{k} {v:.1f}" for k, v in r["steps"].items())
            print(f"{design} {run}: {r['total']:.1f} s ({steps}); load {r['load_before']} -> {r['load_after']}")
    write_result(args.json, "time_to_design", command_line(), figures)
    if args.write_readme:
        rec = json.loads(Path(args.json).read_text())
        README.write_text(replace_block(README.read_text(), BLOCK_START, BLOCK_END, readme_block(rec)))


def _minutes(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 90 else f"{s:.0f} s"


def readme_row(figures: dict) -> list[tuple[str, str]]:
    """The README rows of a recorded run (`benchmarks/readme_figures.py`)."""
    rows = []
    for design, runs in _in_order(figures["designs"]):
        what = _design_label(design, figures["n"])
        parts = []
        for run, r in runs.items():
            steps = ", ".join(f"{k} {_minutes(v)}" for k, v in r["steps"].items() if v >= 0.5)
            parts.append(f"{run} run {_minutes(r['total'])} ({steps}; load {r['load_before']})")
        rows.append((f"time to a verified design: {what}", "; ".join(parts)))
    if "install" in figures:
        rows.append(("`make install` into a new venv", _minutes(figures["install"]["total"])))
    for tier, t in figures.get("tiers", {}).items():
        rows.append((f"{tier} test tier", f"{_minutes(t['wall'])}, {t['passed']} passed (load {t['load_before']})"))
    return rows


def _in_order(designs: dict) -> list[tuple[str, dict]]:
    """The recorded designs as a reader meets them: the demo, then by dimension (the record's JSON
    keeps its keys sorted)."""
    return sorted(designs.items(), key=lambda kv: (kv[0] != "demo", int(kv[0]) if kv[0].isdigit() else 0))


def _design_label(design: str, n: int) -> str:
    return "`make demo`" if design == "demo" else f"`generate --sim`, synthetic {n:,} x {design}"


def readme_block(rec: dict) -> str:
    """README.md's table of a recorded run: per design its first and second run with the simulator
    builds' steps, `make install` and the fast tier, beside `BEFORE`, with the machine and its load."""
    f, m = rec["figures"], rec["machine"]
    rows = []
    if "install" in f:
        rows.append(("`make install` into a new venv", BEFORE["install"], _minutes(f["install"]["total"])))
    for design, runs in _in_order(f["designs"]):
        for run, r in runs.items():
            sims = ", ".join(f"{k[4:].upper()} {_minutes(v)}" for k, v in r["steps"].items() if k.startswith("sim_"))
            now = f"{_minutes(r['total'])} (simulation with its build: {sims}; load {r['load_before']})"
            rows.append((f"{_design_label(design, f['n'])}, {run} run", BEFORE.get(f"{design} {run}", "-"), now))
    for tier, t in f.get("tiers", {}).items():
        rows.append((f"{tier} test tier", BEFORE.get(tier, "-"), f"{_minutes(t['wall'])}, {t['passed']} passed"))
    return "\n".join(
        [
            BLOCK_START,
            "| wait | before (issue 47) | now |",
            "|---|---|---|",
            *(f"| {what} | {before} | {now} |" for what, before, now in rows),
            "",
            f"(recorded at {rec['commit'][:10]} on {rec['date'][:10]}: {m['cpu']}, {m['cores']} cores, load "
            f"{m['load_average_1min']}; first runs from an empty cache, second runs reuse it; the synthetic "
            "rows explore one index each, step by step in [docs/figures.md](docs/figures.md))",
            BLOCK_END,
        ]
    )


if __name__ == "__main__":
    main()
