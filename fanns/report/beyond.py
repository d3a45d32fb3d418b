"""Beyond throughput in the sweep report: for the best design of every (board, goal), the query
latency percentiles of the designs kept (with the SLO line), the access skew of the index's IVF
lists, hot lists in a faster memory tier against the untiered design, the P99 of a query
sharded over 1 .. 1024 accelerators against CPU servers measured here, step-wise search's latency
to the first partial result against the full result (docs/stepwise.md), and, for a design whose
lists live in host memory (an index larger than the board), the lookahead prefetch curve, and which
kind of candidate was chosen (lists on the card or in host memory) and why.

Why in the sweep: the published generators optimise throughput alone; a user serving retrieval
for RAG chooses by tail latency under a service-level objective, and both skew and scale-out move
that tail. The numbers are the models' (`fanns.model.ivfpq.latency`, `skew`, `scaleout`) on the
explorer's measured probes; the CPU's latency distribution is measured with faiss on one thread,
timed on the thread's CPU clock so that a shared machine's preemption does not inflate its tail
(`fanns.model.cpu_baseline`).
"""

from __future__ import annotations

import numpy as np

from fanns.model import cpu_baseline
from fanns.model.ivfpq import host_mix, skew
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import scaleout as scaleout_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq import steps as steps_model
from fanns.model.ivfpq.dse import Outcome
from fanns.report import latency_figures as figures
from fanns.report.figures import to_svg

CPU_LATENCY_QUERIES = 200
"""Queries the CPU baseline's latency distribution is measured over (each searched alone)."""


def tier_comparison(choices: dict, title: str) -> dict:
    """`fanns.model.ivfpq.skew.tier_choices` of one design as rows for `figures.tier_figure`."""
    base = choices["untiered"]
    rows = [
        {
            "name": f"all on {choices['slow']}",
            "qps": base["qps"],
            "p99_us": base["p99_us"],
            "hit_rate": 0.0,
            "speedup": 1.0,
        }
    ]
    rows += [
        {
            "name": f"hot on {o['fast']}",
            "qps": o["qps"],
            "p99_us": o["p99_us"],
            "hit_rate": o["hit_rate"],
            "speedup": o["speedup"],
        }
        for o in choices["options"]
    ]
    return {"title": title, "designs": rows, "best": choices["best"]}


def cpu_latency(index, queries: np.ndarray, nprobe: int, k: int, label: str) -> dict:
    """The CPU baseline's per-query latency (us, thread CPU clock) and its percentiles."""
    got = cpu_baseline.measure(index, queries[:CPU_LATENCY_QUERIES], nprobe, k, threads=1, label=label)
    return {
        "index": label,
        "nprobe": nprobe,
        "queries": int(got.cpu_us.shape[0]),
        "clock": "thread CPU time, 1 thread",
        **got.percentiles("cpu"),
        "samples_us": got.cpu_us,
    }


def step_latency(outcome: Outcome) -> dict:
    """Step-wise search of the best design's sample queries (`fanns.model.ivfpq.steps`), per face
    (the HLS kernel, the RTL core) and cells per step (powers of two up to nprobe, and nprobe):
    P50 and P95 in microseconds to the first partial result and to the full result, beside the
    normal one-shot search's, host link included."""
    best = outcome.best
    nprobe = best.workload.nprobe
    cells = sorted({1 << i for i in range(nprobe.bit_length()) if 1 << i <= nprobe} | {nprobe})
    rows = []
    for face in steps_model.FACES:
        for c in cells:
            lat = steps_model.step_latency(best.ctx, best.stages, best.workload.probed, c, outcome.board.host, face)
            p = lat.percentiles((50, 95))
            rows.append(
                {
                    "face": face,
                    "cells_per_step": c,
                    "steps": int(lat.step_us.shape[0]),
                    **{f"{what}_p{q}_us": p[what][q] for what in ("first", "full", "normal") for q in (50, 95)},
                }
            )
    return {"nprobe": nprobe, "rows": rows}


def record(outcome: Outcome, d: int, cpu: dict | None) -> dict | None:
    """Everything of the section for one (board, goal) DSE outcome; None without a design."""
    best = outcome.best
    if best is None:
        return None
    w = best.workload
    qb, rb = scaleout_model.message_bytes(d, w.k)
    alone_us = (
        latency_model.query_times(best.ctx, best.stages, stage_model.Probes.of(w.probed)).alone() / best.clock_mhz
    )
    curves = [scaleout_model.partition_curve(f"FPGA partition ({outcome.board.name})", alone_us, qb, rb).as_dict()]
    if cpu is not None:
        curves.append(
            scaleout_model.partition_curve("CPU partition (faiss, 1 thread)", cpu["samples_us"], qb, rb).as_dict()
        )
    choices = outcome.tiers.get(0)
    host = outcome.kind_best.get("host")  # the host-memory candidate's curve, chosen or not
    return {
        "latency": figures.latency_data(outcome),
        "skew": skew.profile(w) if w.cells is not None else None,
        "tiers": tier_comparison(choices, f"{w.label()} on {outcome.board.name}: hot lists in a faster tier")
        if choices
        else None,
        "scaleout": curves,
        "steps": step_latency(outcome),
        "cpu": None if cpu is None else {k: v for k, v in cpu.items() if k != "samples_us"},
        "host_tier": figures.prefetch_data(
            host.host_tier,
            f"{host.workload.label()} on {outcome.board.name}: lists in host memory, prefetch into HBM"
            + ("" if host is best else " (not chosen)"),
        )
        if host is not None
        else None,
        "kinds": host_mix.record(outcome),
    }


def svgs(entry: dict) -> dict[str, str]:
    """The section's figures of one (board, goal) as SVG documents."""
    out = {
        "latency": to_svg(figures.latency_figure(entry["latency"])),
        "scaleout": to_svg(figures.scaleout_figure(entry["scaleout"])),
        "steps": to_svg(figures.steps_figure(entry["steps"])),
    }
    if entry["skew"] is not None:
        out["skew"] = to_svg(figures.skew_figure(entry["skew"]))
    if entry["tiers"] is not None and len(entry["tiers"]["designs"]) > 1:
        out["tiers"] = to_svg(figures.tier_figure(entry["tiers"]))
    if entry.get("host_tier"):
        out["prefetch"] = to_svg(figures.prefetch_figure(entry["host_tier"]))
    return out


def summary_row(entry: dict) -> dict:
    """The figures a reader compares across (board, goal): the best design's tail, the skew, the
    best tier's speedup, the P99 at 1 / 16 / 1024 accelerators and CPU servers, and the RTL
    core's step-wise P50 to the first partial result and to the full one in single-cell steps."""
    best = entry["latency"]["designs"][0]
    which = "load" if entry["latency"].get("load_qps") else "alone"
    row = {
        "p50_us": best[which].get("p50_us"),
        "p99_us": best[which].get("p99_us"),
        "hot20_work_share": entry["skew"]["hot20_work_share"] if entry["skew"] else None,
    }
    tiers = entry["tiers"]
    row["tier_speedup"] = max((r["speedup"] for r in tiers["designs"]), default=None) if tiers else None
    one_cell = next(r for r in entry["steps"]["rows"] if r["face"] == "rtl" and r["cells_per_step"] == 1)
    row |= {"first_p50_us": one_cell["first_p50_us"], "full_p50_us": one_cell["full_p50_us"]}
    for c, who in zip(entry["scaleout"], ("fpga", "cpu")):
        for n in (1, 16, 1024):
            row[f"{who}_p99_n{n}_us"] = c["p99_us"][c["counts"].index(n)]
    return row
