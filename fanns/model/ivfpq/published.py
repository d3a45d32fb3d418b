"""The published FANNS example (thesis Table 6.3) re-run through this model.

FANNS chose, for SIFT100M on the Alveo U55C (140 MHz, 60 % cap, m = 16), one index and nprobe
per K and predicted 31,876 / 11,098 / 3,818 QPS for K = 1 / 10 / 100. Here the same index,
nprobe and K go through our DSE on a synthetic workload at that scale (N = 1e8, d = 128;
`synthetic_workload`: log-normal list sizes, size-biased probes), so the chosen designs and QPS
can be set beside the published ones. They are expected to differ: the published PEs are
Vitis HLS with their own cycle counts and resources; ours are Amaranth RTL whose resources
yosys measured and whose cycles the PE classes define. This compares designs, not models: the
model on the published designs themselves is `fanns.model.ivfpq.published_eval`.
"""

from __future__ import annotations

import json
import re

from rich.console import Console
from rich.table import Table

from fanns.boards import load_board
from fanns.model.ivfpq import dse
from fanns.model.ivfpq.report import stage_summary
from fanns.model.ivfpq.workload import DEFAULT_IMBALANCE, synthetic_workload
from fanns.pe.calibration_table import TABLE_DIR

TABLE = TABLE_DIR / "published_fanns_u55c.json"
SIFT100M = {"n": 100_000_000, "d": 128, "m": 16}
CLOCK_MHZ, UTIL = 140.0, 0.6


def published_designs() -> list[dict]:
    """The FANNS-generated rows of Table 6.3 (index, nprobe, K, per-stage columns, QPS)."""
    data = json.loads(TABLE.read_text())
    return [d for d in data["designs"] if d["index"] is not None]


def parse_factory(factory: str) -> tuple[int, bool]:
    m = re.fullmatch(r"(OPQ\d+,)?IVF(\d+),PQ\d+", factory)
    if not m:
        raise ValueError(f"not an IVF-PQ factory string: {factory}")
    return int(m.group(2)), m.group(1) is not None


def reproduce(
    queries: int = 1000, imbalance: float = DEFAULT_IMBALANCE, board: str = "u55c", seed: int = 0
) -> list[tuple[dict, dse.Outcome]]:
    """Each published design with the outcome of our DSE at its index, nprobe and K."""
    b = load_board(board)
    out = []
    for row in published_designs():
        nlist, opq = parse_factory(row["index"])
        w = synthetic_workload(
            SIFT100M["n"],
            SIFT100M["d"],
            SIFT100M["m"],
            nlist,
            row["nprobe"],
            row["k"],
            opq,
            queries=queries,
            imbalance=imbalance,
            seed=seed,
        )
        out.append((row, dse.run([w], b, f"K={row['k']} (published index)", CLOCK_MHZ, UTIL, top=1)))
    return out


def comparison_rows(row: dict, outcome: dse.Outcome) -> list[list[str]]:
    """Two table rows (published, ours) in the columns of Table 6.3."""
    device_lut = outcome.budget.device.lut
    pub = [
        f"{row['opq'][0]} / {row['opq'][1]}%",
        f"{row['ivf_dist'][0]} {row['ivf_dist'][1]} / {row['ivf_dist'][2]}%",
        f"{row['sel_cells'][0]} x{row['sel_cells'][1]} / {row['sel_cells'][2]}%",
        f"{row['build_lut'][0]} {row['build_lut'][1]} / {row['build_lut'][2]}%",
        f"{row['pq_dist'][0]} / {row['pq_dist'][1]}%",
        f"{row['sel_k'][0]} x{row['sel_k'][1]} / {row['sel_k'][2]}%",
        "-",
        f"{row['predicted_qps']:,}",
    ]
    p = outcome.best
    if p is None:
        return [pub, ["no design fits"] + [""] * 7]
    cells = []
    for name in ("opq", "ivf_dist", "sel_cells", "build_lut", "pq_dist", "sel_k"):
        s = stage_summary(p, name)
        pct = f"{100 * p.stage_resources(name).lut / device_lut:.1f}%"
        if name in ("sel_cells", "sel_k"):
            cells.append(f"{s['arch'].upper()} x{s['streams']} / {pct}")
        elif name == "opq":
            cells.append(f"{s['pes']} / {pct}")
        elif name == "pq_dist":
            cells.append(f"{s['pes']} ({s['channels']} ch) / {pct}")
        else:
            cells.append(f"{s['pes']} {s['store']} / {pct}")
    ours = cells + [p.bottleneck, f"{p.qps:,.0f}"]
    return [pub, ours]


def print_comparison(results: list[tuple[dict, dse.Outcome]], console=None) -> None:

    console = console or Console(width=200)
    table = Table(
        title=(
            "FANNS Table 6.3 (HLS, published) beside this model (Amaranth "
            "RTL, yosys resources), SIFT100M scale, U55C, 140 MHz, 60% cap"
        )
    )
    for col in (
        "K",
        "index, nprobe",
        "",
        "OPQ",
        "IVFDist",
        "SelCells",
        "BuildLUT",
        "PQDist",
        "SelK",
        "bottleneck",
        "QPS",
    ):
        table.add_column(col)
    for row, outcome in results:
        pub, ours = comparison_rows(row, outcome)
        label = f"{row['index']}, {row['nprobe']}"
        table.add_row(str(row["k"]), label, "published", *pub)
        table.add_row("", "", "this model", *ours, end_section=True)
    console.print(table)
