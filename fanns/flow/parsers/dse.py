"""The options of `fanns dse` (`fanns.flow.dse_cli` runs it), and the target and SLO options
`fanns generate` and `fanns sweep` share."""

from __future__ import annotations

import argparse

from fanns.checks import MAX_CLOCK_MHZ, arg_float, arg_int, arg_llm_ms
from fanns.choices import DEFAULT_LLM_MS
from fanns.index.goals import parse_goal


def add_target_options(p: argparse.ArgumentParser) -> None:
    """--clock, --util and --llm-ms: the target the DSE designs for, shared with `fanns generate`."""
    p.add_argument(
        "--clock",
        type=arg_float(0, MAX_CLOCK_MHZ, lo_open=True),
        help="accelerator clock in MHz, overriding the default: the board file's sourced clock (`fanns boards`), "
        "lowered to the chosen design's RTL timing estimate when that is below it",
    )
    p.add_argument(
        "--util",
        type=arg_float(0, 1, lo_open=True),
        default=0.6,
        help="utilisation cap per resource and SLR, shell included (default 0.6)",
    )
    p.add_argument(
        "--llm-ms",
        type=arg_llm_ms,
        default=DEFAULT_LLM_MS,
        metavar="MS",
        help="for an index larger than the board's memory (its lists then stay in host memory, read over "
        "PCIe): the time the LLM leaves before retrieval, during which the lists a draft query predicts are "
        "prefetched into an HBM cache; the DSE sizes that cache for it (docs/host_tier.md; "
        f"default {DEFAULT_LLM_MS:g} ms; 0: no hidden prefetch)",
    )


def add_slo_options(p: argparse.ArgumentParser) -> None:
    """The options `parse_slo` reads; shared by `fanns dse` and `fanns sweep`."""
    p.add_argument(
        "--slo-p99",
        metavar="TIME",
        help="keep only designs whose P99 query latency is at most TIME (e.g. 2ms, 500us); a design with its "
        "lists in host memory is held to its latency with prefetch, from the LLM's end (see --llm-ms)",
    )
    p.add_argument("--slo-p95", metavar="TIME", help="keep only designs whose P95 query latency is at most TIME")
    p.add_argument(
        "--load",
        type=arg_float(0, lo_open=True),
        metavar="QPS",
        help="Poisson arrival rate for the latency percentiles and the SLO (default: queries alone, batch 1)",
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dse",
        help=(
            "choose the best IVF-PQ accelerator design (or, with "
            "--graph, graph-search design) for a recall goal on a board"
        ),
        description=(
            "Evaluate every explored index (at its smallest nprobe for the goal, with its measured probes) "
            "against every combination of stage implementations (PE counts, micro-architectures, on-chip or "
            "off-chip storage, memory channels) that fits the board, and write the best design."
        ),
    )
    p.add_argument("explore_dir", metavar="EXPLORE_DIR", help="output folder of `fanns explore` (holds explore.json)")
    p.add_argument("--board", required=True, help="board name (see `fanns boards`) or path of a board YAML file")
    p.add_argument(
        "--recall", required=True, type=parse_goal, metavar="R@k=x", help="the recall goal, e.g. R@10=0.8 or 1-R@10=0.8"
    )
    add_target_options(p)
    p.add_argument(
        "--top", type=arg_int(0, 1000), default=5, help="how many designs to list besides the best (default 5)"
    )
    p.add_argument(
        "--queries", type=arg_int(1), help="use only the first N sample queries of the exploration (default: all)"
    )
    add_slo_options(p)
    p.add_argument(
        "--tiers",
        action="store_true",
        help=(
            "also predict, per top design, hot IVF lists in a faster "
            "memory tier (free UltraRAM or another memory group)"
        ),
    )
    p.add_argument("--out", required=True, help="output folder for dse.json and design.yaml (written atomically)")
    p.add_argument("--force", action="store_true", help="replace OUT if it is an earlier DSE result written by fanns")
    p.add_argument(
        "--graph",
        choices=("hnsw", "nsg"),
        help="graph mode: design a Falcon (DST) accelerator for the graph of this kind that EXPLORE_DIR explored",
    )
    p.add_argument(
        "--dataset",
        help=(
            "graph mode: the dataset the exploration ran on (default: the built-in it names); "
            "it must hold the same vectors"
        ),
    )
    p.add_argument(
        "--objective",
        choices=("latency", "qps"),
        default="latency",
        help="graph mode: minimise latency at batch 1 or maximise QPS at large batches (default latency)",
    )
    p.add_argument(
        "--seed",
        type=arg_int(0, 2**31 - 1),
        default=0,
        help=(
            "graph mode: seed of the split of the queries into the half the design is chosen on and the "
            "held-out half that must confirm its recall (default 0)"
        ),
    )
    p.set_defaults(func="fanns.flow.dse_cli:dse_command")
