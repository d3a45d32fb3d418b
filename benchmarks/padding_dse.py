"""What padded sub-vectors gain: the DSE's best design on u55c for shapes with few power-of-two
factors, with only the unpadded sub-vectors offered (before) and with the paddings (after).

A d/m with no power-of-two factor (49 for 784-d, m = 16) leaves IVFDist and BuildLUT one lane per
PE unless the hardware holds each sub-vector in a longer, zero-padded one (`fanns.numerics`,
"Padded sub-vectors"; issue 16). For each shape this runs `fanns.model.ivfpq.dse.run` twice on a
synthetic workload (`synthetic_workload`: list sizes drawn with the default imbalance, seed 0) and
prints the predicted QPS, the sub-vector length in hardware and the IVFDist / BuildLUT PEs and
lanes of each best design.

    PYTHONPATH=. python benchmarks/padding_dse.py [--json PATH]
"""

from __future__ import annotations

import argparse

from record import command_line, write_result

from fanns.boards import load_board
from fanns.model.ivfpq import dse
from fanns.model.ivfpq.workload import synthetic_workload

BOARD, GOAL, CLOCK_MHZ, K, QUERIES = "u55c", "R@10=0.9", 200.0, 10, 20
# (d, m, vectors, nlist, nprobe)
SHAPES = ((784, 16, 60_000, 256, 8), (100, 10, 60_000, 256, 8), (300, 10, 60_000, 256, 8), (1024, 16, 10**6, 1024, 8))


def best(d: int, m: int, n: int, nlist: int, nprobe: int, padding: bool) -> dict:
    """The DSE's best design for one shape, as the figures of one side of the comparison."""
    w = synthetic_workload(n, d, m, nlist, nprobe, K, False, queries=QUERIES, seed=0)
    p = dse.run([w], load_board(BOARD), GOAL, CLOCK_MHZ, top=1, padding=padding).best
    if p is None:
        return {"qps": 0.0}
    st = p.stages
    return {
        "qps": p.qps,
        "dsub_hw": p.ctx.fmt.dsub_hw or d // m,
        "ivf_dist": [st.ivf_dist.pes, st.ivf_dist.lanes],
        "build_lut": [st.build_lut.pes, st.build_lut.lanes],
        "bottleneck": p.bottleneck,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    rows = []
    for d, m, n, nlist, nprobe in SHAPES:
        before, after = (best(d, m, n, nlist, nprobe, padding) for padding in (False, True))
        rows.append({"d": d, "m": m, "n": n, "nlist": nlist, "nprobe": nprobe, "before": before, "after": after})
        print(f"{d}-d m={m} ({n:,} vectors, IVF{nlist} nprobe {nprobe}): before {before}\n  after {after}")
    figures = {"board": BOARD, "goal": GOAL, "clock_mhz": CLOCK_MHZ, "k": K, "rows": rows}
    write_result(args.json, "padding_dse", command_line(), figures)


def _pes(side: dict) -> str:
    (ip, il), (lp, ll) = side["ivf_dist"], side["build_lut"]
    return f"IVFDist {ip}×{il}, BuildLUT {lp}×{ll}"


def readme_row(f: dict) -> tuple[str, str]:
    """The README figures row of the recorded comparison (`benchmarks/readme_figures.py`)."""
    figure = (
        f"DSE on {f['board']} for shapes with few power-of-two factors (synthetic workloads, K {f['k']}, "
        f"{f['goal']}, {f['clock_mhz']:g} MHz), best design before → after padded sub-vectors "
        "(PEs × lanes per PE)"
    )
    parts = []
    for r in f["rows"]:
        b, a = r["before"], r["after"]
        dsub = r["d"] // r["m"]
        pad = f"sub-vectors {dsub} → {a['dsub_hw']}" if a["dsub_hw"] != dsub else f"sub-vectors {dsub}, not padded"
        parts.append(
            f"{r['d']}-d m={r['m']} ({r['n']:,} vectors, IVF{r['nlist']} nprobe {r['nprobe']}): "
            f"{b['qps']:,.0f} → {a['qps']:,.0f} QPS ({pad}; before {_pes(b)}; after {_pes(a)}, "
            f"bottleneck {a['bottleneck']})"
        )
    return figure, "; ".join(parts)


if __name__ == "__main__":
    main()
