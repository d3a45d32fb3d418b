"""The sweep report's RAG section (`fanns sweep --rag RAG.yaml`): what each board's best design,
against the CPU, does to a RAG pipeline.

Why in the sweep: the sweep already holds, per recall goal, each board's best design (with its
performance and latency models) and faiss-cpu measured here at the same goal, which are the
retrieval hardware a RAG server would choose between. For every goal the section models the
description's pipeline (`fanns.model.ivfpq.rag`) with, as retrieval hardware: the description's own CPU
servers by RAGO's roofline (its `cpu` options), faiss-cpu as measured by the sweep (one thread,
scaled to the cores of the description's first CPU server, `fanns.model.ivfpq.rag.faiss_cpu`), and
every board's best design (`fanns.model.ivfpq.rag.fpga.point_units`); each holds shards of the swept
dataset's size, as many as the description's database needs. Each option is sized for the
inference stages' throughput ("equal throughput"). The figure shows the retrieval share and the
TTFT as the prompt grows and as the pipeline retrieves more often.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fanns.model.ivfpq.rag.faiss_cpu import ID_BYTES, measured_units  # noqa: E402
from fanns.model.ivfpq.rag.fpga import point_units  # noqa: E402
from fanns.model.ivfpq.rag.hardware import CPU_SERVERS  # noqa: E402
from fanns.model.ivfpq.rag.report import comparison_lines, document, grid  # noqa: E402
from fanns.model.ivfpq.rag.retrieval import RooflineServers, Units  # noqa: E402
from fanns.model.ivfpq.rag.schema import RagSpec  # noqa: E402
from fanns.report.figures import BOARD_COLORS, STYLE, to_svg  # noqa: E402

PROMPTS = (128, 256, 512, 1024, 2048)
"""Prompt lengths of the figure (RAGO's Figure 7(c) spans 128 to 2048)."""
FREQUENCIES = (1, 2, 4, 8)
"""Retrievals per request of the figure (RAGO's Table 3: 1, 2, 4, 8)."""


def cpu_server(spec: RagSpec):
    """The description's first CPU server (its cores scale the faiss measurement), else RAGO's."""
    return next((o.server for o in spec.retrieval.hardware if o.kind == "cpu"), CPU_SERVERS["epyc-milan"])


def goal_units(spec: RagSpec, dataset_n: int, boards: list[tuple[str, object]], cpu: dict | None) -> dict[str, Units]:
    """The retrieval options of one goal: the description's CPU roofline servers, faiss measured
    (`cpu`: the sweep's CPU point with `qps_one_thread`, `samples_us`, `nlist`, `m`), each board's
    best design point."""
    units: dict[str, Units] = {
        o.name: RooflineServers(o.name, o.server) for o in spec.retrieval.hardware if o.kind == "cpu"
    }
    if cpu is not None:
        scanned = dataset_n * cpu["nprobe"] / cpu["nlist"] * (cpu["m"] + ID_BYTES)
        detail = {"index": cpu["index"], "nprobe": cpu["nprobe"], "k": cpu["k"], "clock": "thread CPU time"}
        units["faiss-cpu"] = measured_units(
            "faiss-cpu", cpu_server(spec), dataset_n, cpu["qps_one_thread"], cpu["samples_us"], scanned, detail
        )
    for board, point in boards:
        units[board] = point_units(board, point)
    return units


def goal_section(spec: RagSpec, goal: str, units: dict[str, Units]) -> dict:
    """The section's record of one goal: the pipeline with every option, the comparisons, the grid."""
    doc = document(spec, units, {})
    return {
        "goal": goal,
        "document": doc,
        "comparison_text": comparison_lines(doc),
        "grid": grid(spec, units, PROMPTS, FREQUENCIES),
    }


def figure(section: dict) -> str:
    """Retrieval share and TTFT against the prompt length and the retrievals per request, one line
    per retrieval option (CPU dashed), as SVG."""
    g = section["grid"]
    kinds = {o["option"]: o["kind"] for o in section["document"]["options"]}
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(2, 2, figsize=(8.4, 6.2), squeeze=False)
        for col, axis in enumerate(("prompt", "frequency")):
            values = g[axis]["values"]
            for i, (name, rows) in enumerate(g[axis]["options"].items()):
                style = {"color": BOARD_COLORS[i % len(BOARD_COLORS)], "marker": "o", "markersize": 3.5}
                style["linestyle"] = "--" if kinds[name] == "cpu" else "-"
                share = [None if v is None else 100 * v for v in rows["share"]]
                ttft = [None if v is None else 1e3 * v for v in rows["ttft"]]
                axes[0][col].plot(values, share, label=name, **style)
                axes[1][col].plot(values, ttft, label=name, **style)
            xlabel = "prompt tokens" if axis == "prompt" else "retrievals per request"
            for row in (0, 1):
                axes[row][col].set_xscale("log", base=2)
                axes[row][col].set_xticks(values, [str(v) for v in values])
                axes[row][col].set_xlabel(xlabel)
            axes[0][col].set_ylabel("retrieval share of time (%)")
            axes[0][col].set_ylim(bottom=0)
            axes[1][col].set_ylabel("TTFT (ms)")
            axes[1][col].set_ylim(bottom=0)
        axes[0][0].legend(loc="best")
        fig.suptitle(f"{section['document']['name']}, goal {section['goal']}")
        fig.tight_layout()
        return to_svg(fig)


def table(section: dict) -> tuple[list[str], list[list]]:
    """(columns, rows) of one goal's options."""
    cols = [
        "retrieval",
        "units at equal throughput",
        "TTFT ms",
        "TPOT ms",
        "requests/s",
        "bottleneck",
        "retrieval share %",
        "share of TTFT %",
    ]
    rows = []
    for o in section["document"]["options"]:
        rows.append(
            [
                o["option"],
                o["units"],
                None if o["ttft_seconds"] is None else 1e3 * o["ttft_seconds"],
                None if o["tpot_seconds"] is None else 1e3 * o["tpot_seconds"],
                o["rps"],
                o["bottleneck"],
                100 * o["retrieval_share"],
                None if o["ttft_retrieval_share"] is None else 100 * o["ttft_retrieval_share"],
            ]
        )
    return cols, rows
