"""FANNS Table 6.3, like with like: (1) this performance model on the published designs themselves
(their PE counts, stage kinds, selection architectures, nprobe, nlist, K) beside the published
QPS, with the effect of every assumption the chapter leaves open; (2) the designs this project's
DSE chooses at the same index, nprobe and K, with their resources, and why they are faster.

    PYTHONPATH=. python benchmarks/fanns_table63.py [--queries N] [--no-dse | --dse-only] [--json PATH]

--json records part (1), the README's row beside the anchor; with --dse-only it records part (2),
the row of this project's own designs (`readme_row` tells the two records apart by their "part").
"""

from __future__ import annotations

import argparse

from record import command_line, write_result

from fanns.model.ivfpq.published import print_comparison, reproduce
from fanns.model.ivfpq.published_eval import (
    TOLERANCE,
    evaluate_all,
    model_pq_pe,
    print_published_eval,
    published_pe_luts,
    sensitivity,
)


def part_one(queries: int) -> dict:
    """Print part (1) and return its figures."""
    evals = evaluate_all(queries=queries)
    print_published_eval(evals)
    for e in evals:
        inside = "inside" if abs(e.ratio - 1) <= TOLERANCE else "OUTSIDE"
        print(f"K={e.k}: model {e.qps:,.0f} vs published {e.published_qps:,.0f} QPS: {e.ratio:.3f}x ({inside} ±10 %)")
    print("\nassumptions the chapter leaves open, one moved at a time (model / published, K = 1 / 10 / 100):")
    moved = sensitivity(queries=min(queries, 500))
    for label, ratios in moved:
        print(f"  {label:68s} " + " / ".join(f"{r:.3f}" for r in ratios))
    designs = [
        {"k": e.k, "qps": e.qps, "published_qps": e.published_qps, "bottleneck": e.bottleneck, "intervals": e.intervals}
        for e in evals
    ]
    return {"queries": queries, "tolerance": TOLERANCE, "designs": designs, "sensitivity": moved}


def part_two(queries: int) -> dict:
    """Print part (2) and return its figures."""
    print("\n(2) this project's DSE at the same index, nprobe and K (its own designs, priced by its resource model):")
    designs = []
    results = reproduce(queries=queries)
    print_comparison(results)
    pe = model_pq_pe()
    res = pe.resources("xcup")
    for row, outcome in results:
        p = outcome.best
        if p is None:
            print(f"K={row['k']}: no design fits: " + "; ".join(outcome.explain))
            continue
        total = p.resources
        device = outcome.budget.device
        print(
            f"K={row['k']}: DSE design {p.qps:,.0f} QPS vs published {row['predicted_qps']:,} "
            f"({p.qps / row['predicted_qps']:.2f}x), bottleneck {p.bottleneck}; whole design "
            f"LUT {100 * total.lut / device.lut:.1f} %, FF {100 * total.ff / device.ff:.1f} %, "
            f"BRAM18 {100 * total.bram18 / device.bram18:.1f} %, URAM {100 * total.uram / device.uram:.1f} %, "
            f"DSP {100 * total.dsp / device.dsp:.1f} %"
        )
        print(
            f"  why: a PQDist PE costs {res.lut:,.0f} LUTs / {res.dsp:.0f} DSP here (16-bit fixed-point LUT "
            f"entries, integer adder tree) vs {published_pe_luts(row):,.0f} LUTs per PE in the published design "
            f"({row['pq_dist'][1]} % of the device for {row['pq_dist'][0]} PEs; floating-point adders of "
            "several DSPs each, thesis p. 116)"
        )
        pq, selk = p.stages.pq_dist, p.stages.sel_k

        def share(r: str, total=total, device=device) -> float:
            return getattr(total, r) / max(getattr(device, r), 1)

        most = max(("lut", "ff", "bram18", "uram", "dsp"), key=share)
        total_channels = sum(m.count for m in p.ctx.memories)
        designs.append(
            {
                "k": row["k"],
                "qps": p.qps,
                "published_qps": row["predicted_qps"],
                "bottleneck": p.bottleneck,
                "pq_pes": pq.pes,
                "published_pq_pes": row["pq_dist"][0],
                "double_buffer": pq.double_buffer,
                "sel_k": [selk.arch, selk.streams],
                "share_percent": {r: 100 * share(r) for r in ("lut", "ff", "bram18", "uram", "dsp")},
                "channels": [sum(p.channels.values()), total_channels],
                "pe_lut": res.lut,
                "pe_dsp": res.dsp,
                "published_pe_lut": published_pe_luts(row),
            }
        )
        print(
            f"  so the DSE affords {pq.pes} PQDist PEs (published {row['pq_dist'][0]}), "
            f"{'double-buffered' if pq.double_buffer else 'single-buffered'} LUTs (published: loaded then scanned, "
            f"p. 116) and SelK {selk.arch.upper()} over {selk.streams} streams "
            f"(published {row['sel_k'][0]} x{row['sel_k'][1]}, {row['sel_k'][2]} % LUT); "
            f"bottleneck stage {p.bottleneck}; most used resource {most} ({100 * share(most):.1f} % of the device, "
            f"cap 60 % with the shell); {sum(p.channels.values())} of {total_channels} memory channels in use"
        )
    return {"designs": designs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=1000, help="synthetic sample queries per design (default 1000)")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--no-dse", action="store_true", help="print part (1) only (the DSE of part (2) takes minutes)")
    which.add_argument("--dse-only", action="store_true", help="print part (2) only")
    ap.add_argument(
        "--json", metavar="PATH", help="also write the figures of part (1), or with --dse-only part (2), as JSON"
    )
    args = ap.parse_args()
    command = command_line()
    if not args.dse_only:
        write_result(args.json, "fanns_table63", command, part_one(args.queries))
    if not args.no_dse:
        figures = {"part": 2, "queries": args.queries, **part_two(args.queries)}
        write_result(args.json if args.dse_only else None, "fanns_table63", command, figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of part (1) or, for a part (2) record, of part (2)."""
    if figures.get("part") == 2:
        return _dse_row(figures)
    tol = figures["tolerance"]
    parts = []
    for d in figures["designs"]:
        ratio = d["qps"] / d["published_qps"]
        where = "inside" if abs(ratio - 1) <= tol else "outside"
        parts.append(
            f"K={d['k']}: {d['qps']:,.0f} vs {d['published_qps']:,.0f} ({ratio:.3f}×, {d['bottleneck']}-bound, "
            f"{where} ±{100 * tol:.0f} %)"
        )
    ks = "/".join(str(d["k"]) for d in figures["designs"])
    moved = "; ".join(f"{label} {'/'.join(f'{r:.2f}' for r in ratios)}" for label, ratios in figures["sensitivity"])
    figure = (
        "(1) this model on the published FANNS designs themselves (Table 6.3: their PE counts, SelCells/SelK "
        "architectures and streams, nprobe, nlist, K; SIFT100M scale, U55C, 140 MHz; synthetic lists) vs the "
        f"published QPS ({figures['queries']:,} sample queries)"
    )
    return figure, "; ".join(parts) + f". What moves it, one assumption at a time (model / published, K={ks}): {moved}"


def _dse_row(f: dict) -> tuple[str, str]:
    parts = []
    for d in f["designs"]:
        sh = d["share_percent"]
        parts.append(
            f"K={d['k']}: {d['qps']:,.0f} QPS ({d['qps'] / d['published_qps']:.2f}×; {d['pq_pes']} PQ PEs vs "
            f"{d['published_pq_pes']} published, {'double' if d['double_buffer'] else 'single'}-buffered, "
            f"{d['sel_k'][0].upper()} SelK over {d['sel_k'][1]} streams, {d['bottleneck']}-bound; whole design "
            f"LUT {sh['lut']:.1f} %, FF {sh['ff']:.1f} %, BRAM18 {sh['bram18']:.1f} %, URAM {sh['uram']:.1f} %, "
            f"DSP {sh['dsp']:.1f} %)"
        )
    d0 = f["designs"][0]
    figure = (
        "(2) this project's DSE at the same index, nprobe and K (its own designs and resource model, the "
        "whole-design glue priced)"
    )
    why = (
        f"Why faster: a PQ-decode PE is priced at {d0['pe_lut']:,.0f} LUTs and {d0['pe_dsp']:.0f} DSP (16-bit "
        f"fixed-point LUT entries) against about {d0['published_pe_lut']:,.0f} LUTs per published PE (floating-point "
        "adders), so the DSE affords more PEs, double-buffered LUTs and cheaper selection; what fixed point costs "
        "in recall is the next row"
    )
    return figure, "; ".join(parts) + ". " + why


if __name__ == "__main__":
    main()
