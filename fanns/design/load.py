"""Loading a design file of either accelerator, by its `kind` key.

Why its own module: `fanns run` and the other commands that take any project read its design here,
so neither accelerator's schema imports the other's.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from fanns.design.graph import GraphDesign
from fanns.design.ivfpq import IvfPqDesign


def load_design(path: Path) -> GraphDesign | IvfPqDesign:
    """An IVF-PQ or graph design, by the `kind` key of the file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        data = None
    return GraphDesign.load(path) if isinstance(data, dict) and data.get("kind") == "graph" else IvfPqDesign.load(path)
