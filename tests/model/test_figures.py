"""Report data and figures of issue 10: plain JSON-ready dicts in, matplotlib Figures out."""

import json

import numpy as np
from matplotlib.figure import Figure

from fanns.boards import load_board
from fanns.model.ivfpq import dse, scaleout
from fanns.model.ivfpq import skew as skew_model
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.report import beyond
from fanns.report import latency_figures as figures


def test_report_figures_from_plain_data():
    # the kv260's four DDR ports keep both DSE runs to seconds (the u55c's 32 HBM channels took a minute)
    w = synthetic_workload(10**6, 128, 16, 512, 8, 10, False, queries=200, imbalance=3.0, seed=2)
    best = dse.run([w], load_board("kv260"), "synthetic", 200.0, top=3).best
    slo = dse.Slo(99, 3 * best.latency["alone"].get(99), 0.5 * best.qps)  # under load, P99 ~2x alone
    outcome = dse.run([w], load_board("kv260"), "synthetic", 200.0, top=3, slo=slo)
    data = figures.latency_data(outcome)
    json.dumps(data)  # plain data
    assert data["slo"]["limit_us"] == slo.limit_us and len(data["designs"]) == len(outcome.top)
    assert all(d["load"]["p99_us"] <= slo.limit_us for d in data["designs"])
    fig = figures.latency_figure(data)
    assert isinstance(fig, Figure)
    assert any(abs(line.get_ydata()[0] - slo.limit_us) < 1e-9 for line in fig.axes[0].get_lines())  # the SLO line

    steps = beyond.step_latency(outcome)
    json.dumps(steps)
    rtl = [r for r in steps["rows"] if r["face"] == "rtl"]
    assert [r["cells_per_step"] for r in rtl][0] == 1 and rtl[-1]["cells_per_step"] == outcome.best.workload.nprobe
    assert rtl[-1]["steps"] == 1 and rtl[-1]["first_p50_us"] == rtl[-1]["full_p50_us"]
    if outcome.best.workload.nprobe > 1:  # a one-cell step answers before the normal search
        assert rtl[0]["first_p50_us"] < rtl[0]["normal_p50_us"] <= rtl[0]["full_p50_us"]
    fig = figures.steps_figure(steps)
    assert len(fig.axes[0].get_lines()) == 2 * 2 + 1  # first and full per face, the normal search

    prof = skew_model.profile(w)
    json.dumps(prof)
    assert isinstance(figures.skew_figure(prof), Figure)

    curves = [
        scaleout.partition_curve(name, np.array(x), 512, 80).as_dict()
        for name, x in (("a", [10.0, 12.0, 30.0]), ("b", [20.0, 21.0]))
    ]
    json.dumps(curves)
    fig = figures.scaleout_figure(curves)
    assert [len(line.get_xdata()) for line in fig.axes[0].get_lines()] == [11, 11]
