"""`fanns rag RAG.yaml`: what retrieval hardware does to a RAG pipeline.

Reads a RAG description (the LLM, sequence lengths, retrievals per request and query vectors per
retrieval, optional rewriter, encoder and reranker, the inference accelerators, the database and
the retrieval hardware to compare: CPU servers by RAGO's roofline, fanns designs, faiss-cpu
measured on a design's index) and prints, for every retrieval option, the time to first token,
the time per output token, requests per second, the bottleneck stage and the share of time spent
retrieving, each stage's time, and how many boards replace how many CPU servers at equal
throughput and at the same TTFT. docs/rag.md describes the model and every key of RAG.yaml;
examples/rag/ holds complete descriptions.

This module holds the options; `fanns.flow.rag_cli` runs the command.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rag",
        help="RAG pipeline model: TTFT, TPOT, throughput and bottleneck with CPU servers or fanns boards",
        description=__doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("description", metavar="RAG.yaml", help="the RAG description (docs/rag.md, examples/rag/)")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON instead of the tables")
    p.set_defaults(func="fanns.flow.rag_cli:rag_command")
