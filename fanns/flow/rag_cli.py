"""`fanns rag RAG.yaml [--json]` (options: `fanns.flow.parsers.rag`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from fanns.model.ivfpq.rag import schema
from fanns.model.ivfpq.rag.report import document, print_report
from fanns.model.ivfpq.rag.units import all_units
from fanns.progress import step


def rag_command(args: argparse.Namespace) -> int:
    """Read the description, build every retrieval option's units, print the pipeline."""
    step(1, 2, "read", f"reading {args.description}")
    spec = schema.load(Path(args.description))
    units = all_units(spec)
    step(2, 2, "model", "modelling the pipeline")
    doc = document(spec, units)
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        return 0
    print_report(doc, Console(width=None if sys.stdout.isatty() else 200))
    return 0
