"""What fixed point costs in recall: the hardware-faithful search against faiss's float search.

Why: the resource model prices a PQ-decode PE with 16-bit fixed-point LUT entries and an integer
adder tree (316 LUTs, no DSP) where the published FANNS designs use floating point (about 5,500
LUTs a PE); that is why fanns's designs come out faster (README, FANNS Table 6.3 rows). It is a
fair choice only if it costs no recall where FANNS ran: SIFT100M, 16-byte codes, the Table 6.3
indexes. Quantisation error matters more the denser the data (smaller gaps between the K-th and
the next candidate), so this measures the gap at growing N and at the published designs'
probed fraction of the lists (nprobe / nlist of Table 6.3: 5/4096 for K = 1, 17/8192 for K = 10,
33/16384 for K = 100, with OPQ for K = 10 and 100), on SIFT-like sets of 100,000 and 1,000,000
vectors (the largest built here; no real 100M set is on this machine). For each it reports faiss's
float R@K, the bit-accurate reference model's R@K at the explorer's number format (16-bit vectors
and LUT entries), the same at narrower LUT entries (how much margin 16 bits leaves), the share of
queries whose K results equal faiss's, and the lists' imbalance (faiss's imbalance factor; the
published-design evaluation assumes 1.2 for SIFT100M).

    PYTHONPATH=. python benchmarks/fixed_point_recall.py [--sizes 100000,1000000] [--queries 1000] [--json PATH]
"""

from __future__ import annotations

import argparse
import time

import faiss
import numpy as np
from record import command_line, write_result

from fanns.datasets.synthetic import sift_like
from fanns.index.ivfpq import extract, host_vectors, train_index
from fanns.index.ivfpq_format import choose_format
from fanns.index.recall import hits
from fanns.reference.ivfpq import IvfPqReference

PUBLISHED = ((1, 5 / 4096, False), (10, 17 / 8192, True), (100, 33 / 16384, True))
"""(K, nprobe / nlist, OPQ) of the FANNS-generated designs of Table 6.3 (SIFT100M, m = 16)."""
LUT_BITS = (16, 12, 10)
PAD_ID = 2**32 - 1
"""The reference model's id for a result slot no code filled (faiss returns -1 there)."""
TRAIN = 65_536


def nlist_for(n: int) -> int:
    """About 4·sqrt(N) cells, a power of two (4,096 at 1M; the published 100M indexes have 4,096-16,384)."""
    return 2 ** round(np.log2(4 * np.sqrt(n)))


def measure(n: int, nq: int, seed: int) -> list[dict]:
    base, queries = sift_like(n, nq, seed)
    xb, xq = host_vectors(base, "l2"), host_vectors(queries, "l2")
    gt = faiss.knn(xq, xb, 100)[1]
    nlist = nlist_for(n)
    rng = np.random.default_rng(seed)
    train = xb[np.sort(rng.permutation(n)[: min(n, TRAIN)])]
    rows = []
    for opq in (False, True):
        designs = [(k, frac) for k, frac, with_opq in PUBLISHED if with_opq == opq]
        t0 = time.perf_counter()
        index = train_index(xb, "l2", nlist, 16, opq, train, seed)
        data = extract(index, "l2")
        sizes = data.list_sizes
        imbalance = float(nlist * np.sum(sizes.astype(np.float64) ** 2) / float(sizes.sum()) ** 2)
        print(f"N={n:,}: {'OPQ16,' if opq else ''}IVF{nlist},PQ16 trained in {time.perf_counter() - t0:.0f} s")
        ivf = faiss.extract_index_ivf(index)
        for k, frac in designs:
            nprobe = max(1, round(frac * nlist))
            ivf.nprobe = nprobe
            float_ids = index.search(xq, k)[1]
            row = {
                "n": n,
                "index": f"{'OPQ16,' if opq else ''}IVF{nlist},PQ16",
                "k": k,
                "nprobe": nprobe,
                "imbalance": round(imbalance, 3),
                "float_recall": float(hits(float_ids, gt[:, :k]).mean() / k),
            }
            for lut_bits in LUT_BITS:
                fmt = choose_format(data, train[:10_000], nprobe=nprobe, vec_bits=16, lut_bits=lut_bits, seed=seed)
                _, ids = IvfPqReference(data, fmt).search(xq, nprobe, k)
                ids[ids >= PAD_ID] = -1  # fewer than K codes scanned: padding, as faiss's -1
                same = np.mean([set(a) == set(b) for a, b in zip(ids.tolist(), float_ids.tolist())])
                row[f"lut{lut_bits}"] = {"recall": float(hits(ids, gt[:, :k]).mean() / k), "same_results": float(same)}
            rows.append(row)
            fixed = " ".join(
                f"{b}-bit {row[f'lut{b}']['recall']:.4f} (same {row[f'lut{b}']['same_results']:.3f})" for b in LUT_BITS
            )
            print(f"  K={k:<3} nprobe {nprobe:<3} float R@{k} {row['float_recall']:.4f}; fixed LUTs: {fixed}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000", help="base vectors of each SIFT-like set")
    ap.add_argument("--queries", type=int, default=1000, help="queries (default 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    rows = [r for n in args.sizes.split(",") for r in measure(int(n), args.queries, args.seed)]
    write_result(
        args.json,
        "fixed_point_recall",
        command_line(),
        {"queries": args.queries, "lut_bits": list(LUT_BITS), "rows": rows},
    )


def readme_row(f: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    parts = []
    for r in f["rows"]:
        fixed = r["lut16"]
        narrow = ", ".join(f"{b}-bit {r[f'lut{b}']['recall']:.4f}" for b in f["lut_bits"] if b != 16)
        parts.append(
            f"N={r['n']:,} {r['index']} K={r['k']} nprobe {r['nprobe']}: float {r['float_recall']:.4f}, fixed "
            f"{fixed['recall']:.4f} ({fixed['recall'] - r['float_recall']:+.4f}; {100 * fixed['same_results']:.1f} % "
            f"of queries return faiss's results; {narrow})"
        )
    imbalance = sorted({r["imbalance"] for r in f["rows"]})
    figure = (
        "recall of the 16-bit fixed-point LUTs (bit-accurate reference model) vs faiss's float search, at the "
        f"published designs' K and probed fraction of the lists (SIFT-like sets, {f['queries']} queries; list "
        f"imbalance {imbalance[0]:.2f}–{imbalance[-1]:.2f})"
    )
    return figure, "; ".join(parts)


if __name__ == "__main__":
    main()
