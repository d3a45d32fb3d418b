"""The sweep report's RAG section (`fanns.report.rag`) on retrieval units made by hand: one goal's
record, its table and its figure (deterministic SVG), without running a sweep (tests/report/
test_sweep.py runs `fanns sweep --rag` end to end in the slow tier)."""

from pathlib import Path

import numpy as np
import yaml

from fanns.model.ivfpq.rag.hardware import CPU_SERVERS
from fanns.model.ivfpq.rag.retrieval import RooflineServers, ShardedUnits
from fanns.model.ivfpq.rag.schema import parse
from fanns.report import html, rag

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag" / "rago_case1.yaml"


def section() -> dict:
    d = yaml.safe_load(EXAMPLE.read_text())
    d["retrieval"]["database"].update(vectors=4e6, bytes_per_vector=16, scan_fraction=0.01, dim=128)
    spec = parse(d)
    board = ShardedUnits("u55c", "fpga", 10**6, 2e5, np.linspace(20e-6, 40e-6, 50), "by hand")
    units = {"cpu": RooflineServers("cpu", CPU_SERVERS["epyc-milan"]), "u55c": board}
    return rag.goal_section(spec, "R@10=0.8", units)


def test_goal_section_and_figure():
    s = section()
    g = s["grid"]
    assert g["prompt"]["values"] == list(rag.PROMPTS) and g["frequency"]["values"] == list(rag.FREQUENCIES)
    cpu_share = g["prompt"]["options"]["cpu"]["share"]
    assert all(a > b for a, b in zip(cpu_share, cpu_share[1:]))  # longer prompts: less time retrieving
    assert s["comparison_text"][0].startswith("u55c: 4 boards replace")
    cols, rows = rag.table(s)
    assert [r[0] for r in rows] == ["cpu", "u55c"] and len(cols) == len(rows[0])
    assert rows[1][1] == 4  # four shards of a million vectors
    svg = rag.figure(s)
    assert svg == rag.figure(section()) and "retrieval share" in svg and "u55c" in svg
    assert html.display(cols, rows)[1][0]["text"] == "u55c"


def test_figure_draws_every_option_on_both_axes(monkeypatch):
    """Each panel holds one line per option carrying the grid's figures (share in %, TTFT in ms)
    at the grid's prompt lengths and frequencies, the CPU dashed."""
    drawn = []
    monkeypatch.setattr(rag, "to_svg", lambda fig: drawn.append(fig) or "")
    s = section()
    rag.figure(s)
    (fig,) = drawn
    g = s["grid"]
    panels = {(0, "prompt"): "share", (1, "prompt"): "ttft", (0, "frequency"): "share", (1, "frequency"): "ttft"}
    axes = fig.axes
    for (row, axis), key in panels.items():
        ax = axes[2 * row + (axis == "frequency")]
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert set(lines) == {"cpu", "u55c"}
        for name, line in lines.items():
            scale = 100 if key == "share" else 1e3
            assert list(line.get_xdata()) == g[axis]["values"]
            assert np.allclose(np.asarray(line.get_ydata(), float), scale * np.asarray(g[axis]["options"][name][key]))
            assert line.get_linestyle() == ("--" if name == "cpu" else "-")
