"""The sweep report's prefetch curve (issue 49: a design with its lists in host memory) from plain
data made by hand: the section's record, its table rows and its figure, without running a DSE
(tests/model/test_host_cache.py checks the DSE's choice the data comes from)."""

import numpy as np
import pytest

from fanns.report import latency_figures as figures
from fanns.report import tables

CURVE = [
    {"budget_bytes": 0, "ratio": 0.0, "t_llm_ms": 0.0, "cell_hit": 0.0, "qps": 90.0},
    {"budget_bytes": 29_000_000, "ratio": 0.5, "t_llm_ms": 3.2, "cell_hit": 0.4, "qps": 150.0},
    {"budget_bytes": 58_000_000, "ratio": 1.0, "t_llm_ms": 6.5, "cell_hit": 0.75, "qps": 170.0},
    {"budget_bytes": 116_000_000, "ratio": 2.0, "t_llm_ms": 12.9, "cell_hit": 0.98, "qps": 120.0},
]
LATENCY = [13_800.0, 7_000.0, 4_000.0, 1_760.0]


def choice() -> dict:
    curve = [{**r, "latency_mean_us": lat, "latency_p99_us": 2 * lat} for r, lat in zip(CURVE, LATENCY)]
    summary = lambda qps, lat: {"qps": qps, "latency_mean_us": lat, "latency_p99_us": 2 * lat}  # noqa: E731
    return {
        "llm_ms": 100.0,
        "link_gbps": 8.96,
        "cache_bytes": 170_000_000,
        "budget_bytes": 170_000_000,
        "cell_hit": 0.99,
        "with_prefetch": summary(110.0, 1_750.0),
        "without_prefetch": summary(77.0, 13_800.0),
        "all_in_memory": summary(1_080.0, 1_740.0),
        "budget_curve": curve,
    }


def test_prefetch_data_is_the_choice_as_plain_rows():
    c = choice()
    data = figures.prefetch_data(c, "an index on u55c")
    assert data["curve"] == c["budget_curve"] and data["curve"] is not c["budget_curve"]
    assert data["chosen"]["budget_bytes"] == 170_000_000 and data["chosen"]["latency_mean_us"] == 1_750.0
    assert data["without_prefetch"]["qps"] == 77.0 and data["all_in_memory"]["latency_mean_us"] == 1_740.0


def test_prefetch_table_has_a_row_per_budget_of_each_host_tier_design():
    entry = {"board": "u55c", "goal": "R@10=0.8", "host_tier": figures.prefetch_data(choice(), "t")}
    cols, rows = tables.prefetch_table({"beyond": [entry, {"board": "zcu104", "goal": "R@10=0.8", "tiers": None}]})
    assert cols == tables.PREFETCH_COLUMNS and len(rows) == len(CURVE) and "prefetch.csv" in tables.CSV_FILES
    assert [r[0] for r in rows] == ["u55c"] * len(CURVE) and all(len(r) == len(cols) for r in rows)
    assert [r[2] for r in rows] == [b["budget_bytes"] / 1e6 for b in CURVE]
    assert [r[4] for r in rows] == pytest.approx([100 * b["cell_hit"] for b in CURVE])
    assert [r[5] for r in rows] == LATENCY and [r[7] for r in rows] == [b["qps"] for b in CURVE]
    assert {r[8] for r in rows} == {170.0}
    assert tables.prefetch_table({"beyond": []})[1] == []


def test_prefetch_figure_draws_the_curve_and_the_choice():
    data = figures.prefetch_data(choice(), "an index on u55c")
    fig = figures.prefetch_figure(data)
    left, right, hits = fig.axes[0], fig.axes[1], fig.axes[2]
    mb = [b["budget_bytes"] / 1e6 for b in CURVE]
    lines = {line.get_label(): line for line in left.get_lines()}
    assert list(lines["mean latency"].get_xdata()) == mb and list(lines["mean latency"].get_ydata()) == LATENCY
    assert list(lines["DSE choice"].get_ydata()) == [1_750.0] and list(lines["without prefetch"].get_ydata()) == [
        13_800.0,
        13_800.0,
    ]
    (hit_line,) = hits.get_lines()
    assert np.allclose(hit_line.get_ydata(), [100 * b["cell_hit"] for b in CURVE])
    qps = {line.get_label(): line for line in right.get_lines()}
    assert list(qps["QPS"].get_ydata()) == [b["qps"] for b in CURVE]
    assert list(qps["all in memory"].get_ydata()) == [1_080.0, 1_080.0]
    assert fig._suptitle.get_text() == "an index on u55c"
