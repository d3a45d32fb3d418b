"""The sweep report's figures, drawn with matplotlib as SVG documents.

Why SVG: the report must be one self-contained HTML file, readable at any zoom; each figure is an
SVG embedded as a data URI. Output is deterministic: a fixed hash salt for the SVG element ids
and no creation date in the metadata, so the same data give the same bytes.
"""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from fanns.resources import KINDS  # noqa: E402

STAGE_ORDER = ("infra", "opq", "ivf_dist", "sel_cells", "build_lut", "pq_dist", "sel_k")
STAGE_LABELS = {
    "infra": "control + host I/O",
    "opq": "OPQ",
    "ivf_dist": "IVFDist",
    "sel_cells": "SelCells",
    "build_lut": "BuildLUT",
    "pq_dist": "PQDist",
    "sel_k": "SelK",
}
STAGE_COLORS = {
    "infra": "#737373",
    "opq": "#9467bd",
    "ivf_dist": "#1f77b4",
    "sel_cells": "#17becf",
    "build_lut": "#2ca02c",
    "pq_dist": "#ff7f0e",
    "sel_k": "#d62728",
}
KIND_LABELS = {"lut": "LUT", "ff": "FF", "bram18": "BRAM", "uram": "URAM", "dsp": "DSP"}
BOARD_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
RECALL_SPAN = 0.02
"""The recall heatmaps span at least this much, so tiny differences do not look like large ones."""
STYLE = {
    "svg.hashsalt": "fanns-report",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
}


def to_svg(fig) -> str:
    """The figure as a deterministic SVG document (and the figure closed)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": "fanns"})
    plt.close(fig)
    return buf.getvalue()


def _grid(n: int, cols: int) -> tuple[int, int]:
    cols = max(1, min(cols, n))
    return math.ceil(n / cols), cols


def _index_styles(curves: list[dict]) -> dict[str, dict]:
    """Colour per (nlist, m), dashed for OPQ, so an index and its OPQ twin share a colour."""
    shapes = sorted({(c["nlist"], c["m"]) for c in curves})
    cmap = plt.get_cmap("viridis")
    colour = {s: cmap(0.9 * i / max(1, len(shapes) - 1)) for i, s in enumerate(shapes)}
    return {
        c["index"]: {
            "color": colour[(c["nlist"], c["m"])],
            "linestyle": "--" if c["opq"] else "-",
            "marker": "^" if c["opq"] else "o",
        }
        for c in curves
    }


def chosen_points(curves: list[dict], summary: list[dict], goals: list[dict]) -> list[dict]:
    """The designs the sweep chose (one per board and goal), as the recall figure marks them: at
    their index's nprobe on the faiss curve of the goal's measure (all the sample's queries),
    with the goal they were chosen for. The explorer promises a goal only where that recall
    reaches it (`fanns.explore.ivfpq_promise`), so none sits below its goal line."""
    by_index = {c["index"]: c for c in curves}
    targets = {g["text"]: g for g in goals}
    out = {}
    for s in summary:
        d = s["design"]
        if not d:
            continue
        g = targets[s["goal"]]
        curve = by_index[d["index"]]["float"]
        recall = curve[g["measure"]][curve["nprobe"].index(d["nprobe"])]
        key = (g["text"], d["index"], d["nprobe"])
        out.setdefault(key, {"goal": g["text"], "measure": g["measure"], "target": g["target"], "boards": []})
        out[key].update(index=d["index"], nprobe=d["nprobe"], recall=recall)
        out[key]["boards"].append(s["board"])
    return list(out.values())


def recall_figure(curves: list[dict], goals: list[dict], chosen: list[dict] = ()) -> str:
    """Recall vs nprobe per index, one panel per recall measure: faiss float recall as lines,
    the hardware-faithful recall as markers, each goal as a dotted line, and the designs chosen
    (`chosen_points`) as stars."""
    measures = sorted({g["measure"] for g in goals}, key=lambda m: (int(m.split("@")[1]), m))
    styles = _index_styles(curves)
    with plt.rc_context(STYLE):
        rows, cols = _grid(len(measures), 3)
        fig, axes = plt.subplots(rows, cols, figsize=(3.9 * cols, 3.2 * rows), squeeze=False)
        for ax, measure in zip(axes.flat, measures):
            for c in curves:
                st = styles[c["index"]]
                ax.plot(
                    c["float"]["nprobe"],
                    c["float"][measure],
                    color=st["color"],
                    linestyle=st["linestyle"],
                    linewidth=1.2,
                )
                ax.plot(
                    c["hw"]["nprobe"],
                    c["hw"][measure],
                    color=st["color"],
                    marker=st["marker"],
                    linestyle="none",
                    markersize=4,
                )
            for pt in chosen:
                if pt["measure"] == measure:
                    st = styles[pt["index"]]
                    ax.plot(pt["nprobe"], pt["recall"], marker="*", markersize=11, color=st["color"], zorder=5)
                    ax.plot(pt["nprobe"], pt["recall"], marker="*", markersize=11, fillstyle="none", color="black")
            for g in goals:
                if g["measure"] == measure:
                    ax.axhline(g["target"], color="black", linestyle=":", linewidth=1)
                    ax.annotate(
                        f"goal {g['text']}",
                        (1, g["target"]),
                        xycoords=("axes fraction", "data"),
                        ha="right",
                        va="bottom",
                        fontsize=8,
                    )
            ax.set_xscale("log", base=2)
            ax.set_xlabel("nprobe (cells probed per query)")
            ax.set_ylabel(measure)
            ax.set_title(f"{measure} vs nprobe")
        for ax in list(axes.flat)[len(measures) :]:
            ax.set_visible(False)
        handles = [
            Line2D(
                [],
                [],
                color=styles[c["index"]]["color"],
                linestyle=styles[c["index"]]["linestyle"],
                marker=styles[c["index"]]["marker"],
                markersize=4,
                label=c["index"],
            )
            for c in curves
        ]
        handles += [
            Line2D([], [], color="black", label="line: faiss (float)"),
            Line2D(
                [], [], color="black", marker="o", linestyle="none", markersize=4, label="marker: hardware-faithful"
            ),
        ]
        if chosen:
            handles.append(
                Line2D([], [], color="black", marker="*", linestyle="none", markersize=9, label="star: design chosen")
            )
        fig.legend(
            handles=handles,
            loc="lower center",
            ncol=min(5, len(handles)),
            bbox_to_anchor=(0.5, -0.02 - 0.045 * math.ceil(len(handles) / 5)),
        )
        fig.tight_layout()
        return to_svg(fig)


def qps_recall_figure(fpga: list[dict], cpu: list[dict], goals: list[dict], boards: list[str]) -> str:
    """Predicted QPS vs hardware-faithful recall per board and measured faiss-cpu QPS vs recall,
    one panel per goal: every point faint, the Pareto front as a line, the goal as a dashed line."""
    with plt.rc_context(STYLE):
        rows, cols = _grid(len(goals), 3)
        fig, axes = plt.subplots(rows, cols, figsize=(3.9 * cols, 3.4 * rows), squeeze=False)
        series = [
            (b, BOARD_COLORS[i % len(BOARD_COLORS)], [p for p in fpga if p["board"] == b]) for i, b in enumerate(boards)
        ]
        series.append(("CPU (faiss, measured)", "black", cpu))
        for ax, g in zip(axes.flat, goals):
            for label, colour, pts in series:
                pts = [p for p in pts if p["goal"] == g["text"]]
                if not pts:
                    continue
                ax.scatter(
                    [p["recall"] for p in pts], [p["qps"] for p in pts], s=9, color=colour, alpha=0.25, linewidths=0
                )
                front = sorted((p for p in pts if p["pareto"]), key=lambda p: p["recall"])
                ax.plot(
                    [p["recall"] for p in front],
                    [p["qps"] for p in front],
                    color=colour,
                    marker="o",
                    markersize=3.5,
                    linewidth=1.3,
                    drawstyle="steps-pre",
                    label=label,
                )
            ax.axvline(g["target"], color="black", linestyle="--", linewidth=0.9)
            ax.set_yscale("log")
            ax.set_xlabel(f"{g['measure']} (FPGA: hardware-faithful; CPU: faiss)")
            ax.set_ylabel("queries per second")
            ax.set_title(f"goal {g['text']} (K={g['k']})")
        for ax in list(axes.flat)[len(goals) :]:
            ax.set_visible(False)
        handles = [
            Line2D(
                [],
                [],
                color=colour,
                marker="o",
                markersize=3.5,
                label=f"{label} (Pareto front)" if label in boards else label,
            )
            for label, colour, _ in series
        ]
        fig.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), bbox_to_anchor=(0.5, -0.07))
        fig.tight_layout()
        return to_svg(fig)


def stage_resources(design: dict) -> dict[str, dict[str, float]]:
    """Resources per part of a design (one DSE design record): each stage, and the control and
    host I/O infrastructure (the rest of the design's total)."""
    out = {}
    staged = {k: 0.0 for k in KINDS}
    for name, st in design["stages"].items():
        out[name] = {k: float(st["resources"][k]) for k in KINDS}
        for k in KINDS:
            staged[k] += st["resources"][k]
    out["infra"] = {k: max(0.0, design["resources"][k] - staged[k]) for k in KINDS}
    return {part: out[part] for part in STAGE_ORDER if part in out}


def resource_figure(designs: list[dict], boards: dict[str, dict], goals: list[str]) -> str:
    """Where the resources of each (board, goal)'s best design go: per resource kind, each part's
    share of the accelerator (stacked to 100 %, the form of FANNS Fig. 6.8), and above each bar
    the accelerator's share of the device."""
    names = list(boards)
    by_key = {(d["board"], d["goal"]): d["dse"] for d in designs}
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            len(names), len(goals), figsize=(3.2 * len(goals) + 0.6, 2.8 * len(names)), squeeze=False, sharey=True
        )
        for r, b in enumerate(names):
            dev = boards[b]["device"]
            for c, goal in enumerate(goals):
                ax = axes[r][c]
                rec = by_key[(b, goal)]
                best = rec["best"]
                ax.set_title(f"{b}: {goal}" + (f"\n{best['index']}, nprobe {best['nprobe']}" if best else ""))
                if c == 0:
                    ax.set_ylabel("% of the accelerator")
                ax.set_ylim(0, 112)
                ax.set_yticks(range(0, 101, 20))
                if best is None:
                    ax.set_xticks([])
                    ax.text(0.5, 0.5, "no design\n(see the summary)", ha="center", va="center", transform=ax.transAxes)
                    continue
                parts = stage_resources(best)
                totals = {k: sum(v[k] for v in parts.values()) for k in KINDS}
                x = list(range(len(KINDS)))
                bottom = [0.0] * len(KINDS)
                for part, res in parts.items():
                    vals = [100 * res[k] / totals[k] if totals[k] else 0.0 for k in KINDS]
                    ax.bar(x, vals, bottom=bottom, color=STAGE_COLORS[part], width=0.7)
                    bottom = [a + v for a, v in zip(bottom, vals)]
                for i, k in enumerate(KINDS):
                    share = 100 * totals[k] / dev[k] if dev[k] else 0.0
                    ax.text(i, 101, f"{share:.1f}%" if totals[k] else "-", ha="center", va="bottom", fontsize=7)
                ax.set_xticks(x, [KIND_LABELS[k] for k in KINDS])
        handles = [plt.Rectangle((0, 0), 1, 1, color=STAGE_COLORS[s], label=STAGE_LABELS[s]) for s in STAGE_ORDER]
        fig.legend(
            handles=handles, loc="lower center", ncol=7, bbox_to_anchor=(0.5, -0.06 if len(names) < 3 else -0.04)
        )
        fig.tight_layout()
        return to_svg(fig)


def graph_figure(graph: dict) -> str:
    """DST heatmaps over (mg, mc) for one graph (Falcon Fig. 7.9): speedup over BFS and recall,
    intra-query (latency) and across-query (throughput)."""
    cells = graph["cells"]
    mgs = sorted({c["mg"] for c in cells})
    mcs = sorted({c["mc"] for c in cells})
    k = graph["k"]
    panels = [
        ("intra", "speedup", "latency speedup over BFS"),
        ("intra", "recall", "recall"),
        ("across", "speedup", "QPS speedup over BFS"),
        ("across", "recall", "recall"),
    ]
    with plt.rc_context({**STYLE, "axes.grid": False}):
        fig, axes = plt.subplots(1, 4, figsize=(15, 3.1), squeeze=False)
        for ax, (mode, metric, title) in zip(axes[0], panels):
            table = [
                [next(c[metric] for c in cells if c["mode"] == mode and c["mg"] == mg and c["mc"] == mc) for mg in mgs]
                for mc in mcs
            ]
            lo, hi = min(map(min, table)), max(map(max, table))
            if metric == "recall":  # differences below 0.02 are not worth a colour change
                lo = min(lo, hi - RECALL_SPAN)
            im = ax.imshow(
                table,
                origin="lower",
                cmap="viridis" if metric == "speedup" else "magma",
                aspect="auto",
                vmin=lo,
                vmax=hi,
            )
            for i in range(len(mcs)):
                for j in range(len(mgs)):
                    v = table[i][j]
                    ax.text(
                        j,
                        i,
                        f"{v:.2f}" if metric == "speedup" else f"{v:.3f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if v < (lo + hi) / 2 else "black",
                    )
            best = graph["best"][mode]
            ax.add_patch(
                plt.Rectangle(
                    (mgs.index(best["mg"]) - 0.5, mcs.index(best["mc"]) - 0.5),
                    1,
                    1,
                    fill=False,
                    edgecolor="red",
                    linewidth=1.5,
                )
            )
            ax.set_xticks(range(len(mgs)), mgs)
            ax.set_yticks(range(len(mcs)), mcs)
            ax.set_xlabel("mg (candidate groups in flight)")
            ax.set_ylabel("mc (candidates per group)")
            label = f"R@{k}" if metric == "recall" else title
            ax.set_title(f"{graph['graph'].upper()} {mode}-query: {label}")
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
        fig.tight_layout()
        return to_svg(fig)
