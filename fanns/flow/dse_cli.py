"""`fanns dse EXPLORE_DIR --board B --recall R@k=x --out DIR`: the best IVF-PQ accelerator design.

Reads the exploration (`fanns explore`), evaluates every index at its smallest nprobe for the
goal against every combination of stage implementations on the board (`fanns.model.ivfpq.dse`),
writes DIR/dse.json and DIR/design.yaml (`fanns.model.ivfpq.report`) and prints the top designs in
the columns of FANNS Table 6.3. DIR is written as one staged folder (`fanns.outputs`): whole or
not at all, replacing an earlier DSE result only with --force (the user's files in it are kept).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from fanns.boards import Clock, load_board
from fanns.errors import FannsError
from fanns.flow.graph_dse_cli import run_graph_dse
from fanns.index.holdout import unpromised_text
from fanns.model.ivfpq import host_cache, host_mix, report, timing
from fanns.model.ivfpq.dse import Slo
from fanns.model.ivfpq.no_fit import no_design_hint
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.outputs import check_destination, staged_folder

WHAT = "DSE result"
MARKER = "dse.json"


def dse_command(args: argparse.Namespace) -> int:
    """`fanns dse` (options: `fanns.flow.parsers.dse`)."""
    out = Path(args.out)
    check_destination(out, args.force, MARKER, WHAT)
    if args.graph:
        if args.slo_p99 or args.slo_p95 or args.load or args.tiers:
            raise FannsError(
                "--slo-p99, --slo-p95, --load and --tiers apply to IVF-PQ designs, not to --graph",
                hint="drop them, or choose the graph design by --objective latency|qps",
            )
        return run_graph_dse(args, Console())
    if args.dataset is not None:
        raise FannsError("--dataset applies to --graph designs", hint="an IVF-PQ DSE reads only EXPLORE_DIR")
    slo = parse_slo(args)
    board = load_board(args.board)
    workloads, unreachable = workloads_from_explore(Path(args.explore_dir), args.recall)
    if args.queries is not None:
        if args.queries < 1:
            raise FannsError(f"--queries {args.queries}: must be at least 1")
        workloads = [w.with_queries(args.queries) for w in workloads]
    outcome = timing.run(
        workloads,
        board,
        args.recall.text,
        None if args.clock is None else Clock.user(args.clock),
        args.util,
        args.top,
        unreachable,
        slo=slo,
        load_qps=args.load,
        tiers=args.tiers,
        llm_ms=args.llm_ms,
    )
    with staged_folder(out, args.force, MARKER, WHAT) as tmp:
        names = [p.name for p in report.write(outcome, tmp, final_dir=out)]
    paths = [out / name for name in names]
    # logs keep the whole table
    console = Console(width=None if sys.stdout.isatty() else 200)
    if outcome.best is None:
        raise FannsError(
            "\n  ".join(outcome.explain),
            hint=f"details in {paths[0]}; {no_design_hint(bool(outcome.workloads))}",
        )
    report.print_table(outcome, console)
    best = outcome.best
    cycles = ", ".join(f"{k} {t.interval:,.0f}" for k, t in best.timings.items())
    console.print(
        f"best: {best.workload.label()}: {best.rank_qps:,.0f} QPS at {outcome.clock_mhz:g} MHz"
        + (f" with prefetch ({best.qps:,.0f} were its lists in HBM)" if best.host_tier else "")
        + f", bottleneck {best.bottleneck}; cycles/query: {cycles}",
        highlight=False,
    )
    for line in report.clock_lines(outcome):
        console.print(line, highlight=False)
    lat = best.latency["alone"]
    console.print(
        ("latency of one query once its LLM ends, with prefetch" if best.host_tier else "latency of one query")
        + f": mean {lat.mean_us:,.1f} us, P50 "
        f"{lat.get(50):,.1f} / P95 {lat.get(95):,.1f} / P99 {lat.get(99):,.1f} us",
        highlight=False,
    )
    if "load" in best.latency:
        at = best.latency["load"]
        console.print(
            f"at {outcome.load_qps:,.0f} QPS (Poisson): P50 {at.get(50):,.1f} "
            f"/ P95 {at.get(95):,.1f} / P99 {at.get(99):,.1f} us",
            highlight=False,
        )
    if outcome.host_tier:
        console.print(host_cache.summary_line(outcome.host_tier), highlight=False)
    for line in host_mix.lines(outcome):
        console.print(line, highlight=False)
    if 0 in outcome.tiers:
        t = outcome.tiers[0]
        opts = (
            ", ".join(
                f"{o['fast']}: hit rate {100 * o['hit_rate']:.1f}%, {o['qps']:,.0f} "
                f"QPS ({o['speedup']:.2f}x), P99 {o['p99_us']:,.1f} us"
                for o in t["options"]
            )
            or "none (no free UltraRAM or memory group)"
        )
        console.print(f"tiers for the best design (cold lists on {t['slow']}): {opts}", highlight=False)
    if slo is not None:
        console.print(
            f"SLO {slo.text()}: met; {outcome.slo_rejected} faster fitting design(s) missed it", highlight=False
        )
    r = outcome.result
    console.print(
        f"searched {len(workloads)} index(es): {r.evaluated:,} combinations evaluated "
        f"in {r.seconds:.2f} s ({r.evaluated / max(r.seconds, 1e-9):,.0f}/s) and {r.bounded:,} skipped by "
        f"their bound, of a design space of {r.raw:,}; DSE total {outcome.seconds:.1f} s",
        highlight=False,
    )
    for u in outcome.unreachable:
        console.print(
            f"  {u['index']}: {args.recall.text} not promised: {unpromised_text(u, args.recall.text)}", highlight=False
        )
    console.print("wrote " + ", ".join(str(p) for p in paths), highlight=False)
    return 0


UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6}


def parse_duration_us(text: str, option: str) -> float:
    """'2ms', '500us', '0.002 s' -> microseconds."""
    t = str(text).strip().lower().replace(" ", "")
    for unit in sorted(UNITS, key=len, reverse=True):
        if t.endswith(unit):
            try:
                value = float(t[: -len(unit)]) * UNITS[unit]
            except ValueError:
                break
            if value > 0:
                return value
            break
    raise FannsError(f"{option} {text!r}: not a positive duration", hint="a number with a unit: us, ms or s, e.g. 2ms")


def parse_slo(args: argparse.Namespace):
    """The SLO of --slo-p95 / --slo-p99 [--load] (None without one); shared by `fanns dse` and `fanns sweep`."""

    given = [(p, v) for p, v in ((95, args.slo_p95), (99, args.slo_p99)) if v is not None]
    if len(given) > 1:
        raise FannsError("--slo-p95 and --slo-p99 are both given", hint="state one tail-latency objective")
    if args.load is not None and args.load <= 0:
        raise FannsError(f"--load {args.load}: must be a positive rate in queries per second")
    if not given:
        return None
    percentile, text = given[0]
    return Slo(percentile, parse_duration_us(text, f"--slo-p{percentile}"), args.load)
