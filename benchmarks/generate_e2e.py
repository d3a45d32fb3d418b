"""`fanns generate` end to end on a user's HDF5 file whose shape needs padded sub-vectors.

Writes a 100-d clustered set (`fanns.datasets.synthetic.clustered`: a two-scale Gaussian mixture
of unit vectors) as an ann-benchmarks HDF5 file, runs the whole flow on it as a user would
(`fanns generate FILE --sim`: exploration, DSE, both faces generated, test queries simulated on
each) and reads back from the project what the DSE chose (the sub-vector length in hardware, the
IVFDist and BuildLUT lanes) and what the simulations found (`report/summary.json`: queries
differing from the reference model per face, the RTL's cycles per query against the model's).

    PYTHONPATH=. python benchmarks/generate_e2e.py [--work DIR] [--json PATH]
"""

from __future__ import annotations

import json
from pathlib import Path

from record import command_line, work_parser, write_result

from fanns.cli import main as fanns
from fanns.datasets import write_hdf5
from fanns.datasets.synthetic import clustered
from fanns.design.ivfpq import IvfPqDesign

D, N, NQ = 100, 6000, 200
ARGS = ["--recall", "R@10=0.3", "--board", "u55c", "--nlist", "32", "--m", "10", "--no-opq"]


def main() -> None:
    ap = work_parser(__doc__, "work/bench-generate", "folder for the HDF5 file and the project")
    ap.add_argument("--sim-queries", type=int, default=8, help="test queries simulated per face (default 8)")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    data, out = work / f"clustered-{D}d.hdf5", work / "project"
    base, queries = clustered(N, NQ, D, seed=D)
    write_hdf5(data, base, queries)
    argv = ["generate", str(data), *ARGS, "--sim", "--sim-queries", str(args.sim_queries), "--out", str(out)]
    code = fanns([*argv, "--force"] if out.exists() else argv)
    summary = json.loads((out / "report" / "summary.json").read_text())
    design = IvfPqDesign.load(out / "design.yaml")
    stages = summary["design"]["stages"]
    figures = {
        "d": D,
        "n": N,
        "command": "fanns " + " ".join(["generate", "DATA.hdf5", *argv[2:-2]]),
        "exit_code": code,
        "index": summary["design"]["index"],
        "board": summary["board"],
        "dsub": D // design.format.m,
        "dsub_hw": design.format.dsub_hw or D // design.format.m,
        "ivf_lanes": stages["ivf_dist"]["lanes"],
        "lut_lanes": stages["build_lut"]["lanes"],
        "simulation": [
            {
                k: s[k]
                for k in ("simulator", "queries", "checked_keys", "mismatched_queries", "predicted_cycles_per_query")
                if k in s
            }
            | ({"cycles_per_query": s["cycles_per_query"]} if "cycles_per_query" in s else {})
            for s in summary["simulation"]
        ],
    }
    print(json.dumps(figures, indent=1))
    write_result(args.json, "generate_e2e", command_line(), figures)


def readme_row(f: dict) -> tuple[str, str]:
    """The README figures row of the recorded run (`benchmarks/readme_figures.py`)."""
    figure = (
        f"`fanns generate` end to end on a {f['d']}-d set ({f['n']:,} Gaussian-mixture vectors, HDF5, "
        f"{f['index']}, {f['board']}: `{f['command']}`)"
    )
    faces = "; ".join(
        f"{s['simulator']}: {s['queries']} queries × {s['checked_keys'] // s['queries']} keys, "
        f"{s['mismatched_queries']} differ"
        + (
            f", {s['cycles_per_query']:,.1f} cycles/query measured vs {s['predicted_cycles_per_query']:,.1f} predicted"
            if "cycles_per_query" in s
            else ""
        )
        for s in f["simulation"]
    )
    pad = f"pads sub-vectors {f['dsub']} → {f['dsub_hw']}" if f["dsub_hw"] != f["dsub"] else "does not pad"
    value = (
        f"the DSE {pad} (IVFDist {f['ivf_lanes']} lanes, BuildLUT {f['lut_lanes']} lanes); {faces}; "
        f"exit code {f['exit_code']}"
    )
    return figure, value


if __name__ == "__main__":
    main()
