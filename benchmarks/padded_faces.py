"""Both faces of the padded-sub-vector designs (`fanns.sim.ivfpq.faces.PADDED_CASES`, which
`tests/codegen/test_padded_faces.py` checks), measured.

The test asserts; this records what it checks, case by case: the queries whose keys differ from
the reference model in HLS C simulation and in the RTL (fast harness, one Verilator build per
case), and the RTL's cycles per query beside the model's (which prices the padded beats).

    python benchmarks/padded_faces.py [--work DIR] [--json PATH]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from record import command_line, work_parser, write_result

from fanns.sim.ivfpq.faces import PADDED_CASES, hls_csim_keys, padded_case, rtl_fast_run


def differ(keys: np.ndarray, expected: np.ndarray) -> int:
    """Queries with at least one key unlike the reference model's."""
    return int(np.any(np.asarray(keys).reshape(expected.shape) != expected, axis=1).sum())


def main() -> None:
    ap = work_parser(__doc__, "work/bench-padded", "folder for the projects and builds")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    rows = []
    for name in sorted(PADDED_CASES):
        case, tmp = padded_case(name), work / name
        d, m, dsub_hw, opq, ivf, lut = PADDED_CASES[name]
        row = {"case": name, "d": d, "m": m, "dsub_hw": dsub_hw, "opq": opq, "ivf": list(ivf), "lut": list(lut)}
        row["queries"] = len(case["queries"])
        row["hls_differ"] = differ(hls_csim_keys(case, tmp, work / "builds"), case["keys"])
        run, model, measured = rtl_fast_run(case, tmp, work / "builds")
        row |= {"rtl_differ": differ(run["keys"], case["keys"]), "measured": measured, "predicted": model.interval}
        print(row)
        rows.append(row)
    write_result(args.json, "padded_faces", command_line(), {"cases": rows})


def readme_row(f: dict) -> tuple[str, str]:
    """The README figures row of the recorded cases (`benchmarks/readme_figures.py`)."""
    figure = (
        "padded designs, both faces (tests/codegen/test_padded_faces.py's cases: pinned designs on random "
        "indexes whose lanes divide neither d nor d/m; PEs × lanes; RTL in the fast harness)"
    )
    parts = []
    for c in f["cases"]:
        head = (
            f"{c['case']} (d = {c['d']}, m = {c['m']}{', OPQ' if c['opq'] else ''}"
            f"{' matrix streamed' if c['opq'] == 'stream' else ''}, sub-vectors "
            f"{c['d'] // c['m']} → {c['dsub_hw']}, IVFDist {c['ivf'][0]}×{c['ivf'][1]} centroids {c['ivf'][2]}, "
            f"BuildLUT {c['lut'][0]}×{c['lut'][1]} centroids {c['lut'][2]}): HLS {c['hls_differ']} of "
            f"{c['queries']} queries differ"
        )
        err = 100 * (c["measured"] - c["predicted"]) / c["predicted"]
        head += (
            f", RTL {c['rtl_differ']} differ, {c['measured']:,.1f} cycles/query measured vs "
            f"{c['predicted']:,.1f} predicted ({err:+.2f} %)"
        )
        parts.append(head)
    return figure, "; ".join(parts)


if __name__ == "__main__":
    main()
