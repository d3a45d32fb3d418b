"""Inverted lists in RAM against on disk (`fanns explore --lists-on-disk`): the peak memory and time
of filling one index, and its search speed, on a memory-mapped base.

A seeded clustered set of `--n` x `--d` float32 vectors is written once to a .npy file in the work
folder and opened memory-mapped. One `IVF{nlist},PQ{m}` index is trained on a 65,536-vector
sample and stored empty. Then each way of filling it runs in a fresh process, so that its peak
resident memory (`ru_maxrss`) is its own:

- `ram`: faiss's lists in RAM (`fanns.index.ivfpq.add_base`, what `fanns explore` does by default);
- `disk`: shards of `--shard-rows` vectors, merged into one on-disk lists file
  (`fanns.index.ivfpq_lists.ListsOnDisk`).

Each process reports, before and at the peak of the fill (sampled every 10 ms from
/proc/self/status), its anonymous resident memory (`RssAnon`: what must stay in RAM, there being
no swap) and its file-backed resident memory (`RssFile`: pages of the memory-mapped base and of the
lists file, which the kernel can drop and read again); the fill's wall time; and faiss-cpu's QPS of
the filled index (1,000 queries, nprobe `--nprobe`, K 10; one thread on its CPU clock and all
cores on the wall clock, medians of 7 windows, `fanns.model.cpu_baseline.measure_qps`). Plain RSS
(their sum) does not tell the two apart: the base's and the lists file's pages count in it.

    PYTHONPATH=. python benchmarks/lists_on_disk.py [--n 4000000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import faiss
import numpy as np
from numpy.lib.format import open_memmap
from record import command_line, work_parser, write_result

from fanns.datasets.synthetic import clustered
from fanns.index.ivfpq import add_base, train_index
from fanns.index.ivfpq_lists import ListsOnDisk, read_index
from fanns.model.cpu_baseline import all_threads, measure_qps
from fanns.progress import status

MODES = ("ram", "disk")
WRITE_ROWS = 1 << 20
"""Base rows made and written at a time."""
QUERIES = 1000


SAMPLE_SECONDS = 0.01


def resident_mib() -> dict[str, float]:
    """This process's anonymous and file-backed resident memory now (from /proc), in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {key: int(fields[key].split()[0]) / 1024 for key in ("RssAnon", "RssFile")}


class PeakMemory:
    """The largest `resident_mib` of each kind while the block runs (a sampling thread)."""

    def __enter__(self) -> PeakMemory:
        self.peak = resident_mib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self.peak = {k: max(v, self.peak[k]) for k, v in resident_mib().items()}

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def make_base(path: Path, n: int, d: int) -> None:
    """The seeded set, written `WRITE_ROWS` at a time (never whole in RAM)."""
    if path.is_file() and np.load(path, mmap_mode="r").shape == (n, d):
        return
    out = open_memmap(path, mode="w+", dtype=np.float32, shape=(n, d))
    for i, start in enumerate(range(0, n, WRITE_ROWS)):
        rows = min(WRITE_ROWS, n - start)
        out[start : start + rows], _ = clustered(rows, 1, d, seed=i)
    out.flush()
    del out


def child(mode: str, work: Path, shard_rows: int, nprobe: int) -> dict:
    """Fill the stored empty index one way, in this process; its figures."""
    base = np.load(work / "base.npy", mmap_mode="r")
    queries = np.ascontiguousarray(base[:: base.shape[0] // QUERIES][:QUERIES] + 0.01)
    index = read_index(work / "trained.faissindex")
    before = resident_mib()
    start = time.perf_counter()
    with PeakMemory() as memory:
        if mode == "ram":
            add_base(index, base, "l2")
        else:
            ListsOnDisk(work / "lists.ivfdata", shard_rows).fill(index, base, "l2", None, None)
    seconds = time.perf_counter() - start
    qps = {
        str(threads): measure_qps(index, queries, nprobe, 10, threads=threads).as_dict()
        for threads in (1, all_threads())
    }
    return {
        "before_mib": {k: round(v, 1) for k, v in before.items()},
        "peak_mib": {k: round(v, 1) for k, v in memory.peak.items()},
        "fill_s": round(seconds, 2),
        "qps": qps,
    }


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    figure = (
        f"`fanns explore --lists-on-disk`: one IVF{figures['nlist']},PQ{figures['m']} index of "
        f"{figures['n']:,} x {figures['d']} (memory-mapped base, {figures['lists_mib']:,.0f} MiB of lists) filled "
        f"in RAM vs on disk in shards of {figures['shard_rows']:,}, each in a fresh process; faiss-cpu QPS at "
        "nprobe 16, K 10 (one thread on its CPU clock, all cores on the wall clock; median, IQR)"
    )
    parts = []
    for mode, name in (("ram", "in RAM"), ("disk", "on disk")):
        f = figures[mode]
        rise = f["peak_mib"]["RssAnon"] - f["before_mib"]["RssAnon"]
        qps = ", ".join(
            f"{q['qps']:,.0f} QPS on {t} thread(s) (IQR {q['q1']:,.0f}-{q['q3']:,.0f})" for t, q in f["qps"].items()
        )
        parts.append(
            f"{name}: anonymous memory +{rise:,.0f} MiB (peak {f['peak_mib']['RssAnon']:,.0f}; file-backed peak "
            f"{f['peak_mib']['RssFile']:,.0f}), fill {f['fill_s']:.1f} s, {qps}"
        )
    return figure, "; ".join(parts)


def main() -> None:
    ap = work_parser(__doc__, "work/lists_on_disk", "folder for the base, the index and the lists")
    ap.add_argument("--n", type=int, default=4_000_000, help="base vectors (default 4,000,000)")
    ap.add_argument("--d", type=int, default=32, help="dimension (default 32)")
    ap.add_argument("--m", type=int, default=32, help="PQ sub-quantizers (default 32: 40 bytes of list a vector)")
    ap.add_argument("--nlist", type=int, default=1024, help="IVF cells (default 1024)")
    ap.add_argument("--shard-rows", type=int, default=1 << 20, help="rows a shard on disk (default 1,048,576)")
    ap.add_argument("--nprobe", type=int, default=16, help="nprobe of the QPS measurement (default 16)")
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)  # the per-mode worker
    args = ap.parse_args()
    work = Path(args.work).resolve()
    if args.child:
        print(json.dumps(child(args.child, work, args.shard_rows, args.nprobe)))
        return
    work.mkdir(parents=True, exist_ok=True)
    status(f"writing {args.n:,} x {args.d} to {work / 'base.npy'}")
    make_base(work / "base.npy", args.n, args.d)
    base = np.load(work / "base.npy", mmap_mode="r")
    sample = np.ascontiguousarray(base[:: max(1, args.n // 65_536)][:65_536])
    empty = train_index(sample[:0], "l2", args.nlist, args.m, False, sample, 0)
    faiss.write_index(empty, str(work / "trained.faissindex"))
    figures = {"n": args.n, "d": args.d, "m": args.m, "nlist": args.nlist, "shard_rows": args.shard_rows}
    figures["lists_mib"] = round(args.n * (args.m + 8) / 2**20, 1)
    for mode in MODES:
        status(f"filling with the lists in {mode}")
        cmd = [sys.executable, __file__, "--child", mode, "--work", str(work)]
        cmd += ["--shard-rows", str(args.shard_rows), "--nprobe", str(args.nprobe)]
        figures[mode] = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    for mode in MODES:
        f = figures[mode]
        qps = "; ".join(f"{t} thread(s) {q['qps']:,.0f} QPS" for t, q in f["qps"].items())
        peak, before = f["peak_mib"], f["before_mib"]
        print(
            f"{mode}: peak anonymous {peak['RssAnon']:,.0f} MiB ({before['RssAnon']:,.0f} before the fill), "
            f"peak file-backed {peak['RssFile']:,.0f} MiB; fill {f['fill_s']:.1f} s; {qps}"
        )
    saved = figures["ram"]["peak_mib"]["RssAnon"] - figures["disk"]["peak_mib"]["RssAnon"]
    print(f"lists: {figures['lists_mib']:,.0f} MiB; the peaks of anonymous memory differ by {saved:,.0f} MiB")
    write_result(args.json, "lists_on_disk", command_line(), figures)


if __name__ == "__main__":
    main()
