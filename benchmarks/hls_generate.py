"""HLS generation on builtin:sift-10k: time to pack and render a project, generated code sizes,
g++ build time of the C simulation, and the C simulation's speed (sequential, and threaded with
FIFOs of their declared depths) with its agreement with the reference model.

    PYTHONPATH=. python benchmarks/hls_generate.py [--nlist 32] [--queries 200] [--json PATH]

The speeds are of a C program on this host (a check of the generated code), not of the
accelerator; the accelerator's throughput is the model's prediction (`fanns dse`).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from record import command_line, write_result

from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.datasets import load_dataset
from fanns.index.ivfpq import extract, host_vectors, train_index
from fanns.index.ivfpq_format import choose_format
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim

DESIGNS = {  # name: pinned_design keyword arguments
    "5 PQ PEs, on-chip centroids": dict(ivf=(3, 16, "bram"), lut=(2, 16, "bram"), pq=(5, 2)),
    "11 IVF PEs streamed, 11 PQ PEs": dict(ivf=(11, 16, "stream"), lut=(2, 32, "memory"), pq=(11, 4)),
    "HSMPQG + AHPQ, 13 PQ PEs": dict(
        ivf=(8, 16, "bram"), lut=(3, 16, "uram"), pq=(13, 4), sel_cells="hsmpqg", sel_k="ahpq"
    ),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nlist", type=int, default=32, help="IVF cells (default 32)")
    ap.add_argument("--nprobe", type=int, default=4, help="cells probed per query (default 4)")
    ap.add_argument("--queries", type=int, default=200, help="test queries (default 200)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    figures = {"queries": args.queries, "nlist": args.nlist, "nprobe": args.nprobe, "designs": []}
    ds = load_dataset("builtin:sift-10k")
    base = np.asarray(ds.base)
    t = time.perf_counter()
    data = extract(train_index(base, ds.metric, args.nlist, 16, False, base, 0), ds.metric)
    fmt = choose_format(data, base[:1000], nprobe=args.nprobe)
    queries = host_vectors(np.asarray(ds.queries[: args.queries]), ds.metric)
    test = TestQueries(queries, ds.groundtruth(10)[: args.queries])
    print(
        f"builtin:sift-10k IVF{args.nlist},PQ16 trained in {time.perf_counter() - t:.1f} "
        f"s; {len(queries)} queries, nprobe {args.nprobe}, K 10"
    )
    ref = IvfPqReference(data, fmt)
    with tempfile.TemporaryDirectory() as tmp:
        for name, kw in DESIGNS.items():
            design = pinned_design(data, fmt, nprobe=args.nprobe, k=10, **kw)
            folder = Path(tmp) / name.replace(" ", "_").replace(",", "")
            t = time.perf_counter()
            project = generate_hls(design, data, test, folder)
            t_gen = time.perf_counter() - t
            code = project.code_sizes()
            print(
                f"\n{name}: generated in {t_gen:.2f} s, {len(project.files)} files, kernel.cpp "
                f"{code['src/kernel.cpp'][0]} lines, images {sum(i.nbytes for i in project.images.images):,} bytes"
            )
            row = {"design": name, "generate_s": round(t_gen, 2), "modes": []}
            figures["designs"].append(row)
            expected = DesignReference(design, ref).search_keys(queries)
            if design.stages.sel_k.s1 < design.k:
                exact = ref.search_keys(queries, design.nprobe, design.k)
                print(
                    f"  AHPQ level-1 length {design.stages.sel_k.s1} < K: {int((expected != exact).any(1).sum())} "
                    f"of {len(queries)} queries differ from the exact top K"
                )
            for threads in (False, True):
                t = time.perf_counter()
                with HlsCsim(folder, Path(tmp) / "build", threads=threads) as sim:
                    t_build = time.perf_counter() - t
                    sim.search_keys(queries[:1])  # index load
                    t = time.perf_counter()
                    keys = sim.search_keys(queries)
                    t_run = time.perf_counter() - t
                mode = "threaded, declared FIFO depths" if threads else "sequential"
                differ = int((keys != expected).any(1).sum())
                row["modes"].append(
                    {
                        "threads": threads,
                        "build_s": round(t_build, 1),
                        "qps": round(len(queries) / t_run),
                        "differ": differ,
                    }
                )
                print(
                    f"  C simulation ({mode}): g++ build {t_build:.1f} s, {len(queries) / t_run:,.0f} queries/s, "
                    f"{differ} of {len(queries)} queries differ from the model"
                )
    write_result(args.json, "hls_generate", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    designs, n = figures["designs"], figures["queries"]
    differ = sorted({m["differ"] for d in designs for m in d["modes"]})
    gen = [d["generate_s"] for d in designs]
    seq = [m["qps"] for d in designs for m in d["modes"] if not m["threads"]]
    thr = [m["qps"] for d in designs for m in d["modes"] if m["threads"]]
    figure = f"HLS faces in C simulation ({len(designs)} designs, {n} queries each, builtin:sift-10k)"
    value = (
        f"{' / '.join(map(str, differ))} of {n} queries differ from the reference model, sequential and threaded "
        f"(FIFOs of their declared depths); generation {min(gen):.1f}–{max(gen):.1f} s; "
        f"{min(seq):,}–{max(seq):,} queries/s sequential, {min(thr):,}–{max(thr):,} threaded"
    )
    return figure, value


if __name__ == "__main__":
    main()
