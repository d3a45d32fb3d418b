"""The sweep report's tables: one definition per table, used for both the HTML and the CSV files,
so the two can never disagree.

Each function returns (columns, rows) with plain values (str, int, float, None); `csv_text` writes
them, the HTML template formats them.
"""

from __future__ import annotations

import csv
import io

from fanns.boards import CLOCK_ORIGINS
from fanns.model.cpu_baseline import basis_label
from fanns.report.figures import stage_resources
from fanns.resources import KINDS

Table = tuple[list[str], list[list]]

STAGE_GROUPS = [
    ("OPQ", ["#PE", "LUT %"]),
    ("IVFDist", ["#PE", "store", "LUT %"]),
    ("SelCells", ["arch", "#in", "LUT %"]),
    ("BuildLUT", ["#PE", "store", "LUT %"]),
    ("PQDist", ["#PE", "channels", "LUT %"]),
    ("SelK", ["arch", "#in", "LUT %"]),
]
DESIGN_LEAD = ["board", "index", "nprobe"]
DESIGN_TAIL = ["LUT %", "LUT % with shell", "pred. QPS", "bottleneck", "latency (us)"]


def _pct(x: float) -> float:
    return round(float(x), 1)


def _ci(interval: list[float] | None) -> str | None:
    return None if interval is None else f"{interval[0]:.3f}-{interval[1]:.3f}"


def _stage_cells(stage: str, st: dict) -> list:
    if stage == "opq":
        return [st["pes"], _pct(st["lut_pct"])]
    if stage == "ivf_dist":
        store = "streamed" if st["store"] == "stream" else st["store"].upper()
        return [st["pes"], store, _pct(st["lut_pct"])]
    if stage == "build_lut":
        store = "fetched" if st["store"] == "memory" else st["store"].upper()
        if st.get("codebook") == "uram":
            store += ", codebook URAM"
        return [st["pes"], store, _pct(st["lut_pct"])]
    if stage == "pq_dist":
        return [st["pes"], f"{st['channels']} {st['memory'].upper()}", _pct(st["lut_pct"])]
    return [st["arch"].upper(), st["streams"], _pct(st["lut_pct"])]


def design_row(board: str, rec: dict, device_lut: float) -> list:
    """One Table 6.3 row: the design's index, nprobe, per-stage PEs/micro-architecture/LUT %, QPS."""
    cells = [board, rec["index"], rec["nprobe"]]
    for stage in ("opq", "ivf_dist", "sel_cells", "build_lut", "pq_dist", "sel_k"):
        cells += _stage_cells(stage, rec["stages"][stage])
    cells += [
        _pct(100 * rec["resources"]["lut"] / device_lut),
        _pct(100 * rec["utilisation_with_shell"]["lut"]),
        round(rec["rank_qps"]),  # a host-memory design's with prefetch (host_mix.RANK_RULE)
        rec["bottleneck"],
        round(rec["latency_us"], 1),
    ]
    return cells


def design_columns() -> list[str]:
    cols = list(DESIGN_LEAD)
    for stage, sub in STAGE_GROUPS:
        cols += [f"{stage} {s}" for s in sub]
    return cols + DESIGN_TAIL


def design_table(data: dict, goal: str) -> Table:
    """Table 6.3 for one goal: the best design of every board (boards without one are omitted;
    the summary says why)."""
    rows = []
    for d in data["designs"]:
        if d["goal"] == goal and d["dse"]["best"] is not None:
            rows.append(design_row(d["board"], d["dse"]["best"], data["boards"][d["board"]]["device"]["lut"]))
    return design_columns(), rows


def all_designs_table(data: dict) -> Table:
    """Every (board, goal)'s top designs, rank 1 first (designs.csv)."""
    rows = []
    for d in data["designs"]:
        lut = data["boards"][d["board"]]["device"]["lut"]
        for rank, rec in enumerate(d["dse"]["top"], 1):
            rows.append([d["goal"], rank, *design_row(d["board"], rec, lut)])
    return ["goal", "rank", *design_columns()], rows


def summary_table(data: dict) -> Table:
    cols = [
        "goal",
        "board",
        "index",
        "nprobe",
        "recall (hw, held-out)",
        "95 % CI",
        "pred. QPS",
        "clock (MHz)",
        "clock from",
        "RTL estimate (MHz)",
        "latency (us)",
        "bottleneck",
        "LUT % (with shell)",
        "CPU QPS all cores (measured, median)",
        "CPU QPS IQR",
        "CPU QPS 1 thread (median)",
        "CPU index",
        "CPU nprobe",
        "FPGA / CPU",
        "FPGA / CPU against",
    ]
    rows = []
    for s in data["summary"]:
        d, c = s["design"], s["cpu"]
        lead = [s["goal"], s["board"]]
        fpga = (
            [
                d["index"],
                d["nprobe"],
                d["hw_recall"],
                _ci(d.get("hw_recall_interval")),
                round(d["qps"]),
                *_clock_cells(s),
                round(d["latency_us"], 1),
                d["bottleneck"],
                _pct(100 * d["utilisation_with_shell"]["lut"]),
            ]
            if d
            else ["no design", None, None, None, None, None, None, None, None, None, None]
        )
        every = c.get("spread") if c else None
        iqr = f"{every['q1']:,.0f}-{every['q3']:,.0f}" if every else None
        one = round(c["one_thread"]["qps"]) if c and c.get("one_thread") else None
        cpu = [round(every["qps"]) if every else None, iqr, one, c["index"], c["nprobe"]] if c else [None] * 5
        against = basis_label(c["basis"]) if c and c.get("basis") else None
        rows.append(lead + fpga + cpu + [s["speedup"], against])
    return cols, rows


def _clock_cells(s: dict) -> list:
    """The clock a summary row's QPS is at, where it came from, and the RTL estimate."""
    clock, est = s.get("clock"), s.get("rtl_timing")
    if clock is None:
        return [None, None, None]
    origin = CLOCK_ORIGINS[clock["origin"]]
    return [clock["mhz"], f"{origin}: {clock['source']}", None if est is None else round(est["fmax_mhz"])]


def curve_table(data: dict) -> Table:
    cols = ["index", "nlist", "m", "opq", "recall", "measure", "nprobe", "value"]
    rows = []
    for c in data["curves"]:
        for kind in ("float", "hw"):
            part = c[kind]
            for measure in sorted(k for k in part if k != "nprobe"):
                for p, v in zip(part["nprobe"], part[measure]):
                    rows.append(
                        [
                            c["index"],
                            c["nlist"],
                            c["m"],
                            c["opq"],
                            "faiss float" if kind == "float" else "hardware",
                            measure,
                            p,
                            v,
                        ]
                    )
    return cols, rows


def points_table(data: dict) -> Table:
    cols = ["platform", "goal", "index", "nprobe", "k", "recall", "qps", "kind", "bottleneck", "lut", "pareto"]
    rows = []
    for p in data["fpga_points"]:
        rows.append(
            [
                p["board"],
                p["goal"],
                p["index"],
                p["nprobe"],
                p["k"],
                p["recall"],
                p["qps"],
                "predicted",
                p["bottleneck"],
                p["lut"],
                p["pareto"],
            ]
        )
    for p in data["cpu_points"]:
        rows.append(
            [
                "cpu",
                p["goal"],
                p["index"],
                p["nprobe"],
                p["k"],
                p["recall"],
                p["qps"],
                "measured",
                None,
                None,
                p["pareto"],
            ]
        )
    return cols, rows


def resource_table(data: dict) -> Table:
    """Resources of every part of each best design: amount, share of the accelerator, share of the device."""

    cols = ["board", "goal", "index", "nprobe", "part", "resource", "amount", "% of accelerator", "% of device"]
    rows = []
    for d in data["designs"]:
        best = d["dse"]["best"]
        if best is None:
            continue
        dev = data["boards"][d["board"]]["device"]
        parts = stage_resources(best)
        for kind in KINDS:
            total = sum(p[kind] for p in parts.values())
            for part, res in parts.items():
                rows.append(
                    [
                        d["board"],
                        d["goal"],
                        best["index"],
                        best["nprobe"],
                        part,
                        kind,
                        round(res[kind], 1),
                        round(100 * res[kind] / total, 2) if total else 0.0,
                        round(100 * res[kind] / dev[kind], 3) if dev[kind] else 0.0,
                    ]
                )
    return cols, rows


def graph_table(data: dict) -> Table:
    cols = ["graph", "mode", "mg", "mc", "speedup", "recall", "hops", "visited", "latency_us", "qps", "best"]
    rows = []
    for g in data["graphs"]:
        for c in g["cells"]:
            best = g["best"][c["mode"]] == {"mg": c["mg"], "mc": c["mc"]}
            rows.append(
                [
                    g["graph"],
                    c["mode"],
                    c["mg"],
                    c["mc"],
                    round(c["speedup"], 4),
                    round(c["recall"], 4),
                    round(c["hops"], 2),
                    round(c["visited"], 1),
                    round(c["latency_us"], 2),
                    round(c["qps"]),
                    best,
                ]
            )
    return cols, rows


def graph_designs_table(data: dict) -> Table:
    """Per graph kind, board and R@k goal: the design `fanns generate --graph` builds and its
    held-out recall, or why none is promised (`fanns.explore.graph_promise`)."""
    cols = ["graph", "board", "goal", "clock_mhz", "design", "latency_us", "qps", "recall held-out", "95 % CI"]
    rows = []
    for g in data["graphs"]:
        for d in g.get("designs", []):
            if "explain" in d:
                rows.append([g["graph"], d["board"], d["goal"], d["clock_mhz"], d["explain"], "", "", "", ""])
                continue
            lo, hi = d["held_out_interval"]
            ci = f"{lo:.3f}-{hi:.3f}"
            rows.append(
                [
                    g["graph"],
                    d["board"],
                    d["goal"],
                    d["clock_mhz"],
                    d["design"],
                    round(d["latency_us"], 2),
                    round(d["qps"]),
                    round(d["recall_held_out"], 4),
                    ci,
                ]
            )
    return cols, rows


BEYOND_COLUMNS = [
    "board",
    "goal",
    "P50 (us)",
    "P99 (us)",
    "work in hottest 20 % of lists %",
    "best tier speedup",
    "FPGA P99 N=1 (us)",
    "FPGA P99 N=16 (us)",
    "FPGA P99 N=1024 (us)",
    "CPU P99 N=1 (us)",
    "CPU P99 N=16 (us)",
    "CPU P99 N=1024 (us)",
    "first partial P50, RTL, 1 cell a step (us)",
    "full result P50, RTL, 1 cell a step (us)",
]


def beyond_table(data: dict) -> Table:
    """Per (board, goal), the best design's latency tail, skew, tier speedup, scale-out P99 and
    step-wise latency to the first partial and the full result."""
    rows = []
    for e in data["beyond"]:
        r = e["summary"]
        share = r["hot20_work_share"]
        rows.append(
            [
                e["board"],
                e["goal"],
                r["p50_us"],
                r["p99_us"],
                None if share is None else 100 * share,
                r["tier_speedup"],
                *(r.get(f"{who}_p99_n{n}_us") for who in ("fpga", "cpu") for n in (1, 16, 1024)),
                r["first_p50_us"],
                r["full_p50_us"],
            ]
        )
    return BEYOND_COLUMNS, rows


PREFETCH_COLUMNS = [
    "board",
    "goal",
    "budget (MB)",
    "t_LLM hiding it (ms)",
    "cell hit %",
    "mean latency (us)",
    "P99 (us)",
    "QPS",
    "DSE cache (MB)",
]


def prefetch_table(data: dict) -> Table:
    """Per (board, goal) whose DSE has a host-memory candidate (its best, chosen or not), the prefetch curve:
    hit rate, latency and QPS per budget (`fanns.report.latency_figures.prefetch_data`)."""
    rows = []
    for e in data["beyond"]:
        h = e.get("host_tier")
        for r in h["curve"] if h else ():
            rows.append(
                [
                    e["board"],
                    e["goal"],
                    r["budget_bytes"] / 1e6,
                    r["t_llm_ms"],
                    100 * r["cell_hit"],
                    r["latency_mean_us"],
                    r["latency_p99_us"],
                    r["qps"],
                    h["cache_bytes"] / 1e6,
                ]
            )
    return PREFETCH_COLUMNS, rows


def csv_text(table: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols, rows = table
    w.writerow(cols)
    w.writerows(["" if v is None else v for v in row] for row in rows)
    return buf.getvalue()


CSV_FILES = {
    "summary.csv": summary_table,
    "designs.csv": all_designs_table,
    "recall_curves.csv": curve_table,
    "qps_recall.csv": points_table,
    "resources.csv": resource_table,
    "graph_dst.csv": graph_table,
    "graph_designs.csv": graph_designs_table,
    "latency_skew_scaleout.csv": beyond_table,
    "prefetch.csv": prefetch_table,
}
