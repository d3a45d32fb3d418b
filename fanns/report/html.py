"""The sweep report as one self-contained HTML page, rendered from `templates/report/`.

Why self-contained: a report is mailed, archived and opened offline, so it fetches nothing —
the stylesheet is inlined and every figure is an SVG data URI. The page's tables come from
`fanns.report.tables`, the same definitions the CSV files are written from.
"""

from __future__ import annotations

import base64
import re

from fanns import __version__
from fanns.index.holdout import PROMISE_LEVEL
from fanns.report import rag, tables
from fanns.templating import environment


def data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode("ascii")


def cell(column: str, value) -> str:
    """A table value as text, formatted by its column: percentages to 0.1, recall to 0.001,
    throughput and counts with thousands separators, '-' for none."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, str):
        return value
    if "%" in column:
        return "<0.1" if 0 < value < 0.05 else f"{value:.1f}"
    if column == "FPGA / CPU":
        return f"{value:,.1f}x"
    if "recall" in column:
        return f"{value:.3f}"
    if isinstance(value, int) or "QPS" in column:
        return f"{value:,.0f}"
    return f"{value:,.1f}"


def display(columns: list[str], rows: list[list]) -> list[list[dict]]:
    """Rows as cells {text, cls} for the template (text cells are left-aligned)."""
    return [
        [{"text": cell(c, v), "cls": "text" if isinstance(v, str) else ""} for c, v in zip(columns, row)]
        for row in rows
    ]


def num(value) -> str:
    return f"{int(value):,}"


def measure_text(measure: str) -> str:
    """What a recall measure (R@k or 1-R@k) means, in words."""
    k = int(measure.split("@")[1])
    if measure.startswith("1-") or k == 1:
        return f"{measure} is the share of queries whose true nearest neighbour is among the top {k} result(s)."
    return f"{measure} is the mean share of the true {k} nearest neighbours among the {k} results."


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def render(
    data: dict,
    figures: dict[str, str],
    graph_figures: dict[str, str],
    beyond_figures: list[dict[str, str]],
    rag_figures: list[str] = (),
) -> str:
    """The report page: `figures` holds the SVGs 'recall', 'qps', 'resources'; `graph_figures`
    one SVG per graph kind; `beyond_figures` the latency/skew/tiers/scale-out SVGs of each entry
    of `data["beyond"]`; `rag_figures` the SVG of each goal of `data["rag"]`."""
    cols, rows = tables.summary_table(data)
    design_tables = []
    for goal in data["settings"]["goals"]:
        dcols, drows = tables.design_table(data, goal)
        design_tables.append(
            {
                "goal": goal,
                "slug": slug(goal),
                "rows": display(dcols, drows),
                "lead": tables.DESIGN_LEAD,
                "groups": tables.STAGE_GROUPS,
                "tail": tables.DESIGN_TAIL,
            }
        )
    measures = sorted({g.split("=")[0] for g in data["settings"]["goals"]})
    measures_text = " ".join(measure_text(m) for m in measures)
    explain = [{"board": s["board"], "goal": s["goal"], "lines": s["explain"]} for s in data["summary"] if s["explain"]]
    graphs = [{**g, "figure": data_uri(graph_figures[g["graph"]])} for g in data["graphs"]]
    bcols, brows = tables.beyond_table(data)
    pcols, prows = tables.prefetch_table(data)
    gcols, grows = tables.graph_designs_table(data)
    beyond = [
        {
            "board": e["board"],
            "goal": e["goal"],
            "slug": slug(f"{e['board']} {e['goal']}"),
            "cpu": e["cpu"],
            "tiers": e["tiers"],
            "host_tier": e.get("host_tier"),
            "kinds": e.get("kinds"),
            "load_qps": e["latency"]["load_qps"],
            "figures": {k: data_uri(v) for k, v in svg.items()},
        }
        for e, svg in zip(data["beyond"], beyond_figures)
    ]
    rag_sections = []
    for section, svg in zip(data.get("rag", []), rag_figures):
        rcols, rrows = rag.table(section)
        rag_sections.append(
            {
                "goal": section["goal"],
                "slug": slug(section["goal"]),
                "table": {"columns": rcols, "rows": display(rcols, rrows)},
                "comparison": section["comparison_text"],
                "figure": data_uri(svg),
                "doc": section["document"],
            }
        )
    return (
        environment("report", autoescape=True, filters={"num": num})
        .get_template("report.html.j2")
        .render(
            ds=data["dataset"],
            settings=data["settings"],
            generator=f"fanns {__version__} sweep",
            summary={"columns": cols, "rows": display(cols, rows)},
            explain=explain,
            figures={k: data_uri(v) for k, v in figures.items()},
            hw_queries=sorted({c["hw_queries"] for c in data["curves"]}),
            cpu=data["cpu_setup"],
            design_tables=design_tables,
            graphs=graphs,
            measures_text=measures_text,
            promise_level=PROMISE_LEVEL,
            csv_files=list(tables.CSV_FILES),
            beyond=beyond,
            beyond_table={"columns": bcols, "rows": display(bcols, brows)},
            prefetch_table={"columns": pcols, "rows": display(pcols, prows)} if prows else None,
            graph_designs={"columns": gcols, "rows": display(gcols, grows)},
            rag=rag_sections,
        )
    )
