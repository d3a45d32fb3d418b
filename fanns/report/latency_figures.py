"""Data and matplotlib figures for the sweep report (issue 10): latency percentiles per design
with the SLO line, the skew profile of IVF lists, tiered vs untiered placement, the scale-out P99
curve, and the lookahead prefetch curve of a design with its lists in host memory (issue 49).

Why here: the report (`fanns sweep`, `fanns/report/`) lays figures out; the numbers come from
the models. Every `*_data` function returns plain JSON-ready dicts, every `*_figure` function
takes those dicts and returns a `matplotlib.figure.Figure` (Agg backend, no global state), so the
report can embed them as it embeds its own and tests can check the data without drawing.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from fanns.model.ivfpq.dse import DesignPoint, Outcome  # noqa: E402

PCT_COLORS = {50: "#1f77b4", 95: "#ff7f0e", 99: "#d62728"}


def latency_data(outcome: Outcome) -> dict:
    """Per kept design (top designs, best first): QPS and latency percentiles alone and at load."""

    def row(rank: int, p: DesignPoint) -> dict:
        return {
            "rank": rank,
            "index": p.workload.index,
            "nprobe": p.workload.nprobe,
            "qps": round(p.qps, 1),
            "bottleneck": p.bottleneck,
            **{k: v.as_dict() for k, v in sorted(p.latency.items())},
        }

    slo = outcome.slo
    return {
        "designs": [row(i, p) for i, p in enumerate(outcome.top)],
        "load_qps": outcome.load_qps,
        "slo": None
        if slo is None
        else {"percentile": slo.percentile, "limit_us": slo.limit_us, "load_qps": slo.load_qps},
    }


def latency_figure(data: dict) -> Figure:
    """P50/P95/P99 per design (alone, and at the load when given), the SLO as a horizontal line."""
    fig = Figure(figsize=(6.4, 3.4))
    ax = fig.add_subplot()
    designs = data["designs"]
    which = "load" if data.get("load_qps") else "alone"
    xs = range(len(designs))
    for p, color in PCT_COLORS.items():
        ys = [d[which].get(f"p{p}_us") for d in designs]
        ax.plot(xs, [y if y is not None else float("nan") for y in ys], "o-", color=color, label=f"P{p}")
    slo = data.get("slo")
    if slo:
        ax.axhline(slo["limit_us"], color="black", linestyle="--", label=f"SLO P{slo['percentile']}")
    ax.set_xticks(list(xs), [f"#{d['rank'] + 1}\n{d['qps'] / 1e3:,.0f}k QPS" for d in designs], fontsize=7)
    where = f"Poisson load {data['load_qps']:,.0f} QPS" if data.get("load_qps") else "queries alone (batch 1)"
    ax.set(ylabel="latency (us)", title=f"Query latency per design, {where}")
    ax.legend()
    fig.tight_layout()
    return fig


def skew_figure(profile: dict) -> Figure:
    """CDF of work over lists, hottest first (`fanns.model.ivfpq.skew.profile`), with the 20 % mark."""
    fig = Figure(figsize=(4.8, 3.4))
    ax = fig.add_subplot()
    ax.plot(
        [0.0, *profile["list_fraction"]], [0.0, *profile["work_cdf"]], color="#d62728", label="work (codes scanned)"
    )
    ax.plot([0.0, *profile["list_fraction"]], [0.0, *profile["access_cdf"]], color="#1f77b4", label="accesses")
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="uniform")
    ax.axvline(0.2, color="black", linestyle="--")
    ax.annotate(
        f"{100 * profile['hot20_work_share']:.0f}% of work",
        (0.2, profile["hot20_work_share"]),
        xytext=(0.3, 0.5),
        arrowprops={"arrowstyle": "->"},
    )
    ax.set(
        xlabel="fraction of IVF lists (hottest first)",
        ylabel="cumulative share",
        title=f"Access skew: {profile['label']}",
    )
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


def tier_figure(comparison: dict) -> Figure:
    """Tiered vs untiered: throughput and P99 (`fanns.model.ivfpq.skew.compare`)."""
    fig = Figure(figsize=(6.4, 3.0))
    rows = comparison["designs"]
    names = [r["name"] for r in rows]
    for i, (key, label) in enumerate((("qps", "QPS"), ("p99_us", "P99 latency (us)"))):
        ax = fig.add_subplot(1, 2, i + 1)
        ax.bar(names, [r[key] for r in rows], color=["#7f7f7f", "#2ca02c", "#1f77b4"][: len(rows)])
        ax.set(ylabel=label)
        ax.tick_params(axis="x", labelsize=7)
    fig.suptitle(comparison.get("title", "tiered vs untiered"), fontsize=10)
    fig.tight_layout()
    return fig


def scaleout_figure(curves: list[dict], quantile: str = "p99_us") -> Figure:
    """Distributed query latency vs accelerator count (`fanns.model.ivfpq.scaleout.ScaleOutCurve.as_dict`)."""
    fig = Figure(figsize=(5.2, 3.4))
    ax = fig.add_subplot()
    for c in curves:
        ax.plot(c["counts"], c[quantile], "o-", markersize=3, label=c["label"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set(
        xlabel="accelerators (shards)",
        ylabel=f"{quantile[:-3].upper()} latency (us)",
        title="Scale-out: search + broadcast/reduce",
    )
    ax.legend()
    fig.tight_layout()
    return fig


def steps_figure(steps: dict) -> Figure:
    """Step-wise search (`fanns.report.beyond.step_latency`): P50 latency to the first partial
    result and to the full result against the cells per step, per face, beside the normal search."""
    fig = Figure(figsize=(5.2, 3.4))
    ax = fig.add_subplot()
    for i, face in enumerate(sorted({r["face"] for r in steps["rows"]})):
        rows = [r for r in steps["rows"] if r["face"] == face]
        x = [r["cells_per_step"] for r in rows]
        color = f"C{i}"
        ax.plot(x, [r["first_p50_us"] for r in rows], "o-", color=color, markersize=3, label=f"{face}: first result")
        ax.plot(x, [r["full_p50_us"] for r in rows], "s--", color=color, markersize=3, label=f"{face}: full result")
    ax.axhline(steps["rows"][0]["normal_p50_us"], color="0.4", linestyle=":", label="normal search")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set(
        xlabel="cells per step",
        ylabel="P50 latency (us)",
        title=f"Step-wise search (nprobe {steps['nprobe']})",
    )
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def prefetch_data(choice: dict, title: str) -> dict:
    """The prefetch curve of a design with its lists in host memory (`fanns.model.ivfpq.host_cache.choice`)
    as plain rows for `prefetch_figure`: per budget, hit rate, latency and QPS, beside no prefetch and
    the index in the card's memory, and the DSE's cache choice."""
    return {
        "title": title,
        "link_gbps": choice["link_gbps"],
        "llm_ms": choice["llm_ms"],
        "cache_bytes": choice["cache_bytes"],
        "curve": [dict(r) for r in choice["budget_curve"]],
        "without_prefetch": dict(choice["without_prefetch"]),
        "all_in_memory": dict(choice["all_in_memory"]),
        "chosen": {"budget_bytes": choice["budget_bytes"], "cell_hit": choice["cell_hit"], **choice["with_prefetch"]},
    }


def prefetch_figure(data: dict) -> Figure:
    """Cell hit rate and mean latency (left) and QPS (right) vs prefetch budget, with no prefetch and
    the index in memory as lines and the DSE's choice marked."""
    fig = Figure(figsize=(8.4, 3.4))
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    mb = [r["budget_bytes"] / 1e6 for r in data["curve"]]
    left.plot(mb, [r["latency_mean_us"] for r in data["curve"]], "o-", color="#d62728", label="mean latency")
    for name, style in (("without_prefetch", ":"), ("all_in_memory", "--")):
        left.axhline(data[name]["latency_mean_us"], color="grey", linestyle=style, label=name.replace("_", " "))
        right.axhline(data[name]["qps"], color="grey", linestyle=style, label=name.replace("_", " "))
    chosen = data["chosen"]
    left.plot([chosen["budget_bytes"] / 1e6], [chosen["latency_mean_us"]], "k*", markersize=10, label="DSE choice")
    left.set(xlabel="prefetch budget (MB)", ylabel="mean latency (us)")
    hits = left.twinx()
    hits.plot(mb, [100 * r["cell_hit"] for r in data["curve"]], "s--", color="#1f77b4", label="cell hit rate")
    hits.set(ylabel="cell hit rate (%)", ylim=(0, 100))
    left.legend(fontsize=7, loc="upper center")
    right.plot(mb, [r["qps"] for r in data["curve"]], "o-", color="#2ca02c", label="QPS")
    right.plot([chosen["budget_bytes"] / 1e6], [chosen["qps"]], "k*", markersize=10, label="DSE choice")
    right.set(xlabel="prefetch budget (MB)", ylabel="QPS", yscale="log")
    right.legend(fontsize=7)
    fig.suptitle(data["title"], fontsize=9)
    fig.tight_layout()
    return fig
