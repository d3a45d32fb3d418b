"""The RAG pipeline model (`fanns.model.ivfpq.rag`) beside RAGO's published figures and trends: RAGO's
own workloads (its section 4 and Table 3: Llama-3 1B-405B, 64 billion vectors, XPU-A/B/C, EPYC
hosts) through this model, each figure with the tolerance `fanns.model.ivfpq.rag.rago` states.

    PYTHONPATH=. python benchmarks/rag_rago.py [--json PATH]

Pure model arithmetic and a seeded simulation: the figures do not depend on the machine; the
CPU time printed does.
"""

from __future__ import annotations

import argparse
import time

from record import command_line, write_result
from rich.console import Console
from rich.table import Table

from fanns.model.ivfpq.rag import rago


def readme_row(figures: dict) -> list[tuple[str, str]]:
    """The README figures rows of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    checks = {c["key"]: c for c in figures["checks"]}
    shares = [checks[f"case1_share_{k}"] for k in ("128_128", "256_128", "128_256", "2048_512")]
    ok = sum(c["ok"] for c in figures["checks"])
    return [
        (
            "RAG model (`fanns rag`) vs RAGO's Case I: share of time in retrieval, Llama-3 8B, 64 billion vectors, "
            "prefill/decode 128/128, 256/128, 128/256, 2048/512 tokens (docs/rag.md)",
            "paper " + " / ".join(c["paper"] for c in shares) + ", model " + " / ".join(c["model"] for c in shares),
        ),
        (
            "RAG model vs RAGO: published figures and trends reproduced within their stated tolerance "
            "(retrieval share, QPS/chip, Case II encoder bottleneck, Case III decode idleness, Case IV rewriter)",
            f"{ok} of {len(figures['checks'])}; decode idleness at decode/retrieval batch 64/64 and 64/16: paper "
            f"{checks['case3_idle_64_64']['paper']} / {checks['case3_idle_64_16']['paper']}, model "
            f"{checks['case3_idle_64_64']['model']} / {checks['case3_idle_64_16']['model']}; RAG 8B over LLM-only "
            f"70B QPS/chip: paper {checks['case1_rag8b_vs_llm70b']['paper']}, model "
            f"{checks['case1_rag8b_vs_llm70b']['model']}",
        ),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    start = time.process_time()
    checks = rago.all_checks()
    cpu = time.process_time() - start
    table = Table(title="RAGO (Jiang et al. 2025) vs this model, RAGO's own parameters")
    for col in ("figure", "RAGO", "paper", "model", "tolerance", "ok"):
        table.add_column(col)
    for c in checks:
        table.add_row(c.what, c.source, c.paper, c.model, c.tolerance, "yes" if c.ok else "NO")
    Console(width=220).print(table)
    ok = sum(c.ok for c in checks)
    print(f"{ok} of {len(checks)} within their tolerance; {cpu:.1f} s of CPU")
    write_result(
        args.json,
        "rag_rago",
        command_line(),
        {"checks": [c.as_dict() for c in checks], "within_tolerance": ok, "cpu_seconds": round(cpu, 2)},
    )


if __name__ == "__main__":
    main()
