"""Simulator build time of whole designs: every build option measured, and the one `generate --sim` chooses.

For each design (a project folder written by `fanns generate`) and each build option of its RTL
face's compiled harness (`fanns.tools.vbuild.BuildOptions`): the processor and wall seconds of
verilating and of compiling (the build's whole process tree, `resource.getrusage`), the Verilog
Verilator expands and the C++ it writes, then the simulation of `--queries` test queries (processor
seconds of the whole call and of the runs alone) with the keys and cycle registers checked equal
across the options; the option `fanns.tools.vbuild.choose_options` picks for that many queries;
the time a second build takes (the model cache's hit); and the g++ build of the HLS face's C
simulation library. Every build starts from an empty model cache (Verilator's runtime objects
compiled beforehand, as on any machine after its first build) and runs `make -j` on the cores
there are.

Options are named `hier-O1` (hierarchical blocks, g++ -O1 for the per-cycle code, -O0 for the
run-once code), `flat-O2-O2` (flattened, -O2 throughout: the build every design had before),
`hier-O1-s1000` (C++ files and functions split every 1,000 statements: `BuildOptions.split`), ...

    PYTHONPATH=. python benchmarks/sim_build.py --design demo=/tmp/sb/demo [--design d784=...]
        [--options hier-O0,hier-O1,hier-O2,flat-O2-O2] [--queries 16] [--rate-queries 100] [--work DIR]
        [--json PATH]

The designs it measures (the demo of `make demo`, whose figures docs/simulation.md quotes, and
the 784-d and 1536-d README rows' sets, generated as `fanns generate` makes them today):

    fanns generate builtin:sift-10k --recall 1-R@10=0.8 --board u55c --nlist 32,64 --queries 200 --out demo
    fanns generate SYNTH784 --recall R@10=0.6 --board u55c --nlist 256 --m 98 --no-opq --out d784
    fanns generate SYNTH1536 --recall R@10=0.6 --board u55c --nlist 512 --m 128 --no-opq --out d1536

with SYNTH<d> a folder of base.fvecs / query.fvecs holding `clustered(100000, 1000, d, seed=d)`
(`fanns.datasets.synthetic`), the sets of benchmarks/datasets.py.
"""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from record import command_line, work_parser, write_result

from fanns.hdl.verilog import to_verilog
from fanns.sim.axi_memory import SimMemory, ram_sources
from fanns.sim.csim import build_library
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run
from fanns.tools import modelcache
from fanns.tools.vbuild import BASELINE, BuildOptions
from fanns.tools.vmodel import ModelBuild

OPTIONS = ("hier-O0", "hier-O1", "hier-O2", "flat-O1", "flat-O2-O2")
REGISTERS = ("cycles", "load_cycles", "first_cycles", "last_cycles")
RATE_QUERIES = 100
"""Test queries of the per-cycle cost's run (the projects' default test queries)."""


def parse_options(name: str) -> BuildOptions:
    """`hier-O1`, `flat-O2-O2`, `hier-O1-s1000`, ... (see the module docstring)."""
    kind, fast, *rest = name.split("-")
    split = [int(p[1:]) for p in rest if p.startswith("s")]
    slow = [p for p in rest if p.startswith("O")]
    return BuildOptions(
        cxx_opt=f"-{fast}",
        slow_opt=f"-{slow[0]}" if slow else "-O0",
        hierarchical=kind == "hier",
        split=split[0] if split else 0,
    )


def options_name(o: BuildOptions) -> str:
    return (
        f"{'hier' if o.hierarchical else 'flat'}-{o.cxx_opt[1:]}"
        + (f"-{o.slow_opt[1:]}" if o.slow_opt != "-O0" else "")
        + (f"-s{o.split}" if o.split else "")
    )


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def warm_runtime(options: BuildOptions, work: Path) -> None:
    """Compile Verilator's runtime objects for `options` (a one-memory bench) so the design's
    build that follows measures the design alone."""
    sources = {"mem.v": to_verilog(SimMemory(64, 1024, ["r"], ["w"]), "mem"), **ram_sources()}
    ModelBuild(sources, "mem", work / "warm", options=options).build()


def cycle_rate(project: Path, options: BuildOptions, queries: int, work: Path, repeats: int = 3) -> dict:
    """Processor seconds per million cycles of `queries` test queries on the model `options` built
    (from the model cache), the best of `repeats` runs: the per-cycle cost the cost model reads
    (`fanns.tools.vbuild.RUN_S_PER_MCYCLE_MB`), on a run long enough to outweigh its set-up."""
    sim = RtlProjectSim(project / "rtl", work / "runs", options=options)
    assert not sim.sim.build(), "cycle_rate reads a model already built"
    d = sim.design
    best = None
    for _ in range(repeats):
        out = sim.run([Run(nq=queries, nprobe=d.nprobe, k=d.k)])
        assert out["runs"][0]["mismatched_queries"] == 0
        rate = out["run_cpu_seconds"] / out["run_cycles"] * 1e6
        best = rate if best is None else min(best, rate)
    mb = sim.sim.prepared.evaluated_bytes / 1e6
    return {
        "queries": queries,
        "cycles": out["run_cycles"],
        "cpu_s_per_mcycle": round(best, 2),
        "per_mb": round(best / mb, 3),
    }


def measure(project: Path, options: BuildOptions, queries: int, rate_queries: int, work: Path) -> dict:
    """Build `project`'s RTL face with `options` in an empty model cache, simulate `queries` queries."""
    warm_runtime(options, work)
    sim = RtlProjectSim(project / "rtl", work / "runs", options=options)
    model = sim.sim
    start = time.perf_counter()
    assert model.build()
    built = time.perf_counter() - start
    d = sim.design
    cpu = time.process_time()
    start = time.perf_counter()
    out = sim.run([Run(nq=queries, nprobe=d.nprobe, k=d.k)])
    run = out["runs"][0]
    again = time.perf_counter()
    second = RtlProjectSim(project / "rtl", work / "runs", options=options)
    assert not second.build()
    return {
        "options": options_name(options),
        "described": model.describe(),
        "blocks": model.blocks,
        "compiled_verilog_mb": round(model.prepared.compiled_bytes / 1e6, 2),
        "evaluated_verilog_mb": round(model.prepared.evaluated_bytes / 1e6, 2),
        "verilate_cpu_s": model.timings["verilate"]["cpu_s"],
        "verilate_wall_s": model.timings["verilate"]["wall_s"],
        "cpp_mb": model.timings["verilate"]["cpp_mb"],
        "compile_cpu_s": model.timings["compile"]["cpu_s"],
        "compile_wall_s": model.timings["compile"]["wall_s"],
        "build_wall_s": round(built, 1),
        "library_mb": round(model.library.stat().st_size / 1e6, 2),
        "second_build_wall_s": round(time.perf_counter() - again, 2),
        "run_call_cpu_s": round(time.process_time() - cpu, 2),
        "run_call_wall_s": round(again - start, 2),
        "run_cpu_s": round(out["run_cpu_seconds"], 3),
        "run_cycles": out["run_cycles"],
        "mismatched_queries": run["mismatched_queries"],
        "registers": {r: run[r] for r in REGISTERS},
        "rate": cycle_rate(project, options, rate_queries, work) if rate_queries else None,
        "load_average_1min": round(os.getloadavg()[0], 1),
    }


def csim_build(project: Path, work: Path) -> dict:
    """The g++ build of the HLS face's C-simulation library (processor and wall seconds)."""
    cpu, start = children_cpu(), time.perf_counter()
    build_library(project / "hls", work / "csim")
    return {"cpu_s": round(children_cpu() - cpu, 1), "wall_s": round(time.perf_counter() - start, 1)}


def main() -> None:
    ap = work_parser(__doc__, str(Path(tempfile.gettempdir()) / "fanns-sim-build"), "work folder (emptied first)")
    ap.add_argument("--design", action="append", required=True, metavar="NAME=PROJECT", help="a generated project")
    ap.add_argument("--options", default=",".join(OPTIONS), help=f"build options (default {','.join(OPTIONS)})")
    ap.add_argument("--queries", type=int, default=16, help="test queries simulated (default 16, as generate --sim)")
    ap.add_argument(
        "--rate-queries",
        type=int,
        default=RATE_QUERIES,
        help=f"test queries of the per-cycle cost's run, best of 3 (default {RATE_QUERIES}; 0: none)",
    )
    args = ap.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    rows = []
    for spec in args.design:
        name, _, folder = spec.partition("=")
        project = Path(folder).resolve()
        chooser = RtlProjectSim(project / "rtl", work / "runs", options=None, queries=args.queries)
        chosen = options_name(chooser.sim.options)
        row = {"design": name, "design_yaml": (project / "design.yaml").read_text().split("\nmemory:")[0]}
        row["chosen"], row["builds"] = chosen, []
        row["hls_csim_build"] = csim_build(project, work)
        print(f"{name}: chosen for {args.queries} queries: {chosen}; HLS C-sim library {row['hls_csim_build']}")
        for option in args.options.split(","):
            os.environ[modelcache.ROOT_ENV] = str(work / "models" / f"{name}-{option}")
            m = measure(project, parse_options(option), args.queries, args.rate_queries, work / f"{name}-{option}")
            row["builds"].append(m)
            print(
                f"  {option:11} verilate {m['verilate_cpu_s']:7.1f} s CPU, compile {m['compile_cpu_s']:7.1f} s CPU, "
                f"build {m['build_wall_s']:7.1f} s wall (load {m['load_average_1min']}); run {m['run_cpu_s']:.2f} s "
                f"CPU ({m['run_cycles']:,} cycles), {m['mismatched_queries']} differ; second build "
                f"{m['second_build_wall_s']:.2f} s",
                flush=True,
            )
        regs = {str(b["registers"]) for b in row["builds"]}
        assert len(regs) == 1, f"{name}: the builds disagree on the cycle registers: {regs}"
        rows.append(row)
    figures = {"queries": args.queries, "baseline": options_name(BASELINE), "designs": rows}
    write_result(args.json, "sim_build", command_line(), figures)


if __name__ == "__main__":
    main()
