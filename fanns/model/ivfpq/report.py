"""What the DSE writes: `dse.json` (best, top N, Pareto set), `design.yaml` (the chosen design),
and a Table 6.3-style summary on stdout.

Outputs are deterministic: no timestamps, no absolute paths (the trained index is referenced
relative to the design file), floats rounded; search timing goes to stdout only.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from fanns.boards import CLOCK_ORIGINS
from fanns.datasets.formats import atomic_path
from fanns.design.ivfpq import IndexRef, IvfPqDesign, PqHostTier
from fanns.model.ivfpq import host_mix
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.dse import DesignPoint, Outcome, kinds_dict
from fanns.model.ivfpq.skew import with_tiers
from fanns.model.ivfpq.stages import memory_plan
from fanns.resources import KINDS

STAGE_TITLES = {
    "opq": "OPQ",
    "ivf_dist": "IVFDist",
    "sel_cells": "SelCells",
    "build_lut": "BuildLUT",
    "pq_dist": "PQDist",
    "sel_k": "SelK",
}


def _r(x: float, nd: int = 3) -> float:
    return round(float(x), nd)


def stage_summary(p: DesignPoint, stage: str) -> dict:
    """Micro-architecture and PE count of one stage (the Table 6.3 columns)."""
    st = getattr(p.stages, stage)
    if st is None:
        return {"arch": "none", "pes": 0}
    if stage == "opq":
        return {"arch": "opq", "pes": 1, "lanes": st.lanes}
    if stage == "ivf_dist":
        return {"arch": "ivf_dist", "pes": st.pes, "lanes": st.lanes, "store": st.storage, "channels": st.channels}
    if stage == "build_lut":
        return {
            "arch": "build_lut",
            "pes": st.pes,
            "lanes": st.lanes,
            "store": st.centroids,
            "codebook": st.codebook,
            "channels": st.channels,
        }
    if stage == "pq_dist":
        return {
            "arch": "pq_decode",
            "pes": st.pes,
            "double_buffer": st.double_buffer,
            "memory": st.memory,
            "channels": st.channels,
        }
    return {"arch": st.arch, "streams": st.streams, "s": st.s, "s1": st.s1, **st.params}


def design_record(p: DesignPoint, budget: Budget) -> dict:
    w = p.workload
    device_lut = budget.device.lut
    stages = {}
    for name in stage_model.STAGES:
        t = p.timings.get(name)
        res = p.stage_resources(name)
        stages[name] = {
            **stage_summary(p, name),
            "cycles": _r(t.interval) if t else 0.0,
            "latency": _r(t.latency) if t else 0.0,
            "resources": kinds_dict(res),
            "lut_pct": _r(100 * res.lut / device_lut, 2),
            **({k: (_r(v) if isinstance(v, float) else v) for k, v in t.detail.items()} if t else {}),
        }
    pq = p.stages.pq_dist
    stages["pq_dist"]["bytes_on_busiest_channel"] = stage_model.index_bytes_per_channel(
        w.m, w.list_sizes, pq.pes, max(pq.pes_per_channel()), pq.port_bits
    )
    with_shell = (p.resources + budget.shell).as_tuple()
    util = {k: _r(v / dev, 4) if dev else 0.0 for k, v, dev in zip(KINDS, with_shell, budget.device.as_tuple())}
    return {
        "index": w.index,
        "nlist": w.nlist,
        "m": w.m,
        "dsub_hw": p.ctx.fmt.dsub_hw,  # elements per sub-vector in hardware (0: d/m, unpadded)
        "opq": w.opq,
        "nprobe": w.nprobe,
        "k": w.k,
        "recall": w.recall,
        "hw_recall": w.hw_recall,
        "recall_interval": w.recall_interval,
        "hw_recall_interval": w.hw_recall_interval,
        "selection_recall": w.selection_recall,
        "selection_bound": w.selection_bound,
        "qps": _r(p.qps, 1),
        "cycles_per_query": _r(p.cycles),
        "stage_cycles_per_query": _r(p.stage_cycles),
        "bottleneck": p.bottleneck,
        "latency_cycles": _r(p.latency_cycles),
        "latency_us": _r(p.latency_us),
        "stages": stages,
        "latency": {k: v.as_dict() for k, v in sorted(p.latency.items())},
        "resources": kinds_dict(p.resources),
        "utilisation_with_shell": util,
        "channels": dict(sorted(p.channels.items())),
        "slr": p.slr,
        "lists": "host memory" if p.host_tier else pq.memory,
        "rank_qps": _r(p.rank_qps, 1),  # what the DSE ranks by (host_mix.RANK_RULE)
        **({"host_tier": host_tier_prediction(p.host_tier)} if p.host_tier else {}),
    }


def to_design(p: DesignPoint, outcome: Outcome, out_dir: Path | None) -> IvfPqDesign:
    w = p.workload
    path = None
    if w.index_path is not None:
        path = os.path.relpath(w.index_path, out_dir) if out_dir is not None else str(w.index_path)
    design = IvfPqDesign(
        board=outcome.board.name,
        board_file=None if outcome.board.builtin else outcome.board.spec,
        clock_mhz=float(outcome.clock_mhz),
        util=float(outcome.budget.util),
        index=IndexRef(factory=w.index, n=w.n, d=w.fmt.d, nlist=w.nlist, m=w.m, opq=w.opq, path=path),
        nprobe=w.nprobe,
        k=w.k,
        format=p.ctx.fmt,
        stages=p.stages
        if not p.host_tier
        else dataclasses.replace(
            p.stages,
            pq_dist=dataclasses.replace(
                p.stages.pq_dist,
                host_tier=PqHostTier(
                    cache_bytes=int(p.host_tier["cache_bytes"]),
                    pinned=tuple(int(i) for i in p.host_tier.get("pinned", ())),
                ),
            ),
        ),
        memory=memory_plan(p.ctx, p.stages),
        fifo_depth=stage_model.FIFO_DEPTH,
        slr={k: [f"{stage}.{label} x{n}" for stage, label, n in v] for k, v in p.slr.items()},
        goal=w.goal,
        prediction={
            "qps": _r(p.rank_qps, 1),  # a host-memory design's with prefetch (host_mix.RANK_RULE)
            **({"qps_lists_in_hbm": _r(p.qps, 1)} if p.host_tier else {}),
            **clock_record(outcome),
            "bottleneck": p.bottleneck,
            "cycles_per_stage": {k: _r(t.interval) for k, t in p.timings.items()},
            "latency_us": _r(p.latency_us),
            "resources": kinds_dict(p.resources),
            **({"host_tier": host_tier_prediction(p.host_tier)} if p.host_tier else {}),
        },
    )
    design.validate()
    return design


def host_tier_prediction(choice: dict) -> dict:
    """The design record's part of `fanns.model.ivfpq.host_cache.choice` (dse.json keeps the curve)."""
    keys = ("llm_ms", "index_gb", "link_gbps", "cache_memory", "cache_bytes", "budget_bytes", "cell_hit")
    split = ("pinned_share", "pinned_bytes", "ring_bytes", "pinned_hit")  # the pinned list ids: stages.pq_dist
    return (
        {k: choice[k] for k in keys}
        | {k: choice[k] for k in split if k in choice}
        | {k: choice[k] for k in ("with_prefetch", "without_prefetch")}
    )


def clock_record(outcome: Outcome) -> dict:
    """Where the outcome's clock came from and the best design's RTL timing estimate (when known)."""
    out = {}
    if outcome.clock is not None:
        out["clock"] = outcome.clock.to_dict()
    if outcome.timing is not None and outcome.timing.limit is not None:
        lim = outcome.timing.limit
        out["rtl_timing"] = {
            "fmax_mhz": _r(outcome.timing.fmax_mhz, 1),
            "family": outcome.timing.family,
            "limit": f"{lim.kind} {lim.label}: {lim.detail}",
        }
    return out


def outcome_record(outcome: Outcome) -> dict:
    b = outcome.budget
    rec = lambda p: design_record(p, b)  # noqa: E731
    result = outcome.result
    return {
        "goal": outcome.goal,
        "board": b.board,
        "clock_mhz": outcome.clock_mhz,
        "clock": None if outcome.clock is None else outcome.clock.to_dict(),
        "rtl_timing": None if outcome.timing is None else outcome.timing.to_dict(),
        "util": b.util,
        "budget": {
            "rule": "per SLR: accelerator + shell <= util x device, per resource",
            "slrs": {k: kinds_dict(v) for k, v in b.slrs.items()},
            "channels": dict(zip(b.channel_kinds, b.channels)),
        },
        "model": {
            "throughput": "QPS = clock / max over stages of the mean cycles per query over the sample queries",
            "latency": "sum of the stages' one-query latencies (selection stages: after their last input); "
            "lists in host memory: plus the prefetch model's mean with prefetch less its mean with every list "
            "in HBM (fanns.model.ivfpq.points.DesignPoint.latency_us)",
            "latency_percentiles": (
                "per sample query (fanns.model.ivfpq.latency): query read + IVFDist/SelCells + BuildLUT->PQDist "
                "cell schedule + SelK tail + result write; 'alone' = batch 1, 'load' = Poisson arrivals at "
                "load_qps through the stage tandem, simulated exactly (seed 0, 50000 arrivals, first 5 % discarded); "
                "lists in host memory: after the LLM ends, with the prefetch's wait and the host link as servers "
                "of the tandem (fanns.model.ivfpq.prefetch.host_times)"
            ),
            "load_qps": outcome.load_qps,
            "ranking": host_mix.RANK_RULE,
            "queries": {p.label(): p.queries for p in outcome.workloads},
        },
        "search": {
            "indexes": [w.label() for w in outcome.workloads],
            "design_space": result.raw if result else 0,
            "evaluated": result.evaluated if result else 0,
            "bounded": result.bounded if result else 0,
            "options": outcome.option_counts,
        },
        "slo": None
        if outcome.slo is None
        else {
            "percentile": outcome.slo.percentile,
            "limit_us": outcome.slo.limit_us,
            "load_qps": outcome.slo.load_qps,
            "text": outcome.slo.text(),
            "rejected_designs": outcome.slo_rejected,
        },
        "best": rec(outcome.best) if outcome.best else None,
        "top": [rec(p) for p in outcome.top],
        "tiers": None
        if not outcome.tiers
        else {
            "note": (
                "hot lists (by accesses in the query sample) in a faster tier; when the "
                "best design's best option is a memory group, design_tiered.yaml is that "
                "design (the RTL generator builds it; the URAM tier is prediction only)"
            ),
            "designs": [outcome.tiers[i] for i in sorted(outcome.tiers)],
        },
        "host_tier": outcome.host_tier,
        "kinds": host_mix.record(outcome),
        "pareto": [rec(p) for p in outcome.pareto],
        "unreachable": outcome.unreachable,
        "explain": outcome.explain,
    }


def write(outcome: Outcome, out_dir: Path, final_dir: Path | None = None) -> list[Path]:
    """Write dse.json (always) and design.yaml (when a design was found); return the paths.
    `final_dir`: where the folder will be when `out_dir` is a staging folder (the design's path
    to its index is relative to it)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    design = to_design(outcome.best, outcome, final_dir or out_dir) if outcome.best else None
    paths = [out_dir / "dse.json"]
    with atomic_path(paths[0]) as tmp:
        tmp.write_text(json.dumps(outcome_record(outcome), indent=1, sort_keys=True) + "\n")
    tiered = tiered_design(design, outcome) if design is not None else None
    for name, d in (("design.yaml", design), ("design_tiered.yaml", tiered)):
        stale = out_dir / name
        if d is not None:
            paths.append(stale)
            d.save(stale)
        elif stale.exists():
            stale.unlink()  # a design from an earlier run must not pass for this one's
    return paths


def tiered_design(design: IvfPqDesign, outcome: Outcome) -> IvfPqDesign | None:
    """The best design with its hot lists on the fastest memory-group tier of
    `fanns.model.ivfpq.skew.tier_choices` that beats the untiered design (the generators do not build
    a URAM tier); else None."""
    if 0 not in outcome.tiers:  # none asked for, or the best design keeps its lists in host memory
        return None

    built = [o for o in outcome.tiers[0]["options"] if o["fast"] != "uram" and o["speedup"] > 1.0]
    if not built:
        return None
    option = max(built, key=lambda o: (o["qps"], -o["p99_us"]))
    hot = np.zeros(design.index.nlist, dtype=bool)
    hot[option["hot"]] = True
    tiered = with_tiers(design, hot, option["fast"])
    keys = ("fast", "hot_lists", "hit_rate", "qps", "p99_us", "speedup")
    return dataclasses.replace(
        tiered, prediction={**design.prediction, "qps": option["qps"], "tiers": {k: option[k] for k in keys}}
    )


def print_table(outcome: Outcome, console=None) -> None:
    """The top designs in the columns of Table 6.3 (LUT % of the whole device)."""

    console = console or Console()
    device_lut = outcome.budget.device.lut
    origin = "" if outcome.clock is None else f" ({CLOCK_ORIGINS[outcome.clock.origin]})"
    table = Table(
        title=(
            f"{outcome.goal} on {outcome.board.name} at {outcome.clock_mhz:g} MHz{origin}, "
            f"{100 * outcome.budget.util:.0f}% cap"
        )
    )
    for col in ("index", "nprobe", *STAGE_TITLES.values(), "bottleneck", "pred. QPS"):  # QPS: `rank_qps`
        table.add_column(col)
    for p in outcome.top:
        cells = []
        for name in stage_model.STAGES:
            s = stage_summary(p, name)
            pct = f"{100 * p.stage_resources(name).lut / device_lut:.1f}%"
            if name in ("sel_cells", "sel_k"):
                cells.append(f"{s['arch'].upper()} x{s['streams']}\n{pct}")
            elif name == "opq":
                cells.append((f"1 x{s['lanes']} lanes" if s["pes"] else "-") + f"\n{pct}")
            elif name == "pq_dist":
                cells.append(f"{s['pes']} ({s['channels']} {s['memory']})\n{pct}")
            else:
                codebook = " (codebook uram)" if s.get("codebook") == "uram" else ""
                cells.append(f"{s['pes']} {s['store']}{codebook} x{s['lanes']} lanes\n{pct}")
        fmt = p.ctx.fmt
        index = p.workload.index + (f"\nsub-vectors {fmt.dsub} -> {fmt.dsub_hw}" if fmt.dsub_hw else "")
        index += "\nlists in host memory" if p.host_tier else ""
        qps = f"{p.rank_qps:,.0f}" + ("\nwith prefetch" if p.host_tier else "")
        table.add_row(index, str(p.workload.nprobe), *cells, p.bottleneck, qps)
    console.print(table)


def clock_lines(outcome: Outcome) -> list[str]:
    """What the summaries print about the clock: the one the QPS is at, and the RTL estimate."""
    lines = []
    if outcome.clock is not None:
        lines.append(f"clock: {outcome.clock.describe()}")
    if outcome.timing is not None:
        lines.append(outcome.timing.describe())
        if outcome.timing.uncovered:
            lines.append(f"  not covered by the estimate: {', '.join(outcome.timing.uncovered)}")
    return lines
