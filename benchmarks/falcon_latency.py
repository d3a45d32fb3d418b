"""The Falcon cycle model's per-query latency beside Falcon's measured hardware latencies.

Falcon's public repository (fpgasystems/Falcon-accelerate-graph-vector-search) stores the
per-query latencies its U250 builds measured at batch 1 (`plots/saved_latency/`, raw float64
arrays of milliseconds per batch, read by its `plots/plot_latency_FPGA.py`): HNSW and NSG graphs of
maximum degree 64 searched with ef 64 on SIFT, Deep and SPACEV at 1M and 10M vectors, by the
intra-query build (`FPGA_intra_query_v1_5`, one pipeline with four BFC units) and the inter-query
build (`FPGA_inter_query_v1_3`, four one-unit pipelines, one per DDR4 channel). This reads those
files from a copy of the repository (a bare git directory or a checkout, --falcon), summarises
each (count, median, P95) and takes each build's kernel clock from its v++ configuration
(`networked_FPGA/kernel/user_krnl/<build>/config_sp_<build>.txt`, `kernel_frequency`).

Beside them it runs the model in the same configuration on the closest graphs buildable here —
builtin:deep / builtin:sift (100,000 x 96 / 128, synthetic Deep- and SIFT-like), the 10,000-vector
sets and builtin:deep-1m for the trend with graph size — at each build's clock on the U250's
memory (`MemorySystem.from_board`), batch 1: one query in flight, so one pipeline alone on the
memory in both modes. Falcon's launcher picks (mg, mc) "auto" from a measured latency profile;
the model takes the fastest (mg, mc) of mg 1..7, mc 1..4 on the first --choose queries whose
recall is not below BFS's, then times every query there.

What differs, and is printed: the data (synthetic here, real there), the graph size (hops grow
with log N), the vector width (8-bit here, float32 in Falcon: 6 / 8 beats per Deep / SIFT vector
against 2 / 2), and what is timed (the measured latency is end to end, from a CPU client over
100 Gb/s TCP to the FPGA's network stack and back; the model times the kernel alone).

    PYTHONPATH=. python benchmarks/falcon_latency.py [--falcon PATH] [--sets deep,sift,deep-10k,sift-10k,deep-1m]
"""

from __future__ import annotations

import argparse
import io
import pickle
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from record import command_line, write_result

from fanns.boards import load_board
from fanns.datasets import BUILTINS, load_dataset
from fanns.errors import FannsError
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.explore.graph_sweep import MODES, SweepSetup
from fanns.index.recall import recall_at_k
from fanns.model.graph import published
from fanns.model.graph.across import shared_search_batch
from fanns.model.graph.qpp import MemorySystem

MIRROR = "/work/.mirror/fpgasystems+Falcon-accelerate-graph-vector-search/repo"
FALCON_COMMIT = "74c7c3d66a4a8a210b76fd3d05ca7e48ee5007a6"
"""The snapshot of Falcon's repository these figures were read from (`git rev-parse HEAD`)."""
LATENCY_DIR = "plots/saved_latency"
BUILDS = {"intra": "FPGA_intra_query_v1_5", "across": "FPGA_inter_query_v1_3"}
"""The two builds whose latencies `plots/plot_latency_FPGA.py` plots, by the model's mode name."""
FOLDER = "{build}_4_chan"
CLOCK_FILE = "networked_FPGA/kernel/user_krnl/{build}/config_sp_{build}.txt"
THESIS_CLOCK_MHZ = 200.0  # Falcon 7.5.1: used only when a build's configuration is missing
NAME = re.compile(
    r"latency_ms_per_batch_(?P<set>[A-Za-z]+)(?P<size>\d+M)_(?P<graph>HNSW|NSG)"
    r"_MD(?P<degree>\d+)_ef(?P<ef>\d+)_batch_size(?P<batch>\d+)\.double$"
)
PROFILE_FILE = "perf_test_scripts/saved_df/latency_{mode}_4_chan.pickle"
PROFILE_MODES = {"intra": "FPGA_intra_query", "across": "FPGA_inter_query"}
"""Falcon's kernel-only latency profiles (`perf_test_scripts/perf_test_latency.py`): the PCIe builds
timed by Vitis (summary.csv) over 10,000 queries at batch 1, at (1, 1) and the best (mc, mg)."""
FALCON_VECTOR_BYTES = 4  # float32 (FLOAT_PER_AXI in the builds' constants.hpp)
PORT_BYTES = 64
MAX_DEGREE, EF, VEC_BITS = 64, 64, 8
MG, MC = tuple(range(1, 8)), tuple(range(1, 5))


class FalconTree:
    """Files of Falcon's repository, from a bare git directory (read at HEAD) or a checkout."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise FannsError(
                f"--falcon {path}: no such directory",
                hint="give a checkout or bare clone of fpgasystems/Falcon-accelerate-graph-vector-search",
            )
        self.bare = (self.path / "HEAD").is_file() and (self.path / "objects").is_dir()

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, check=True).stdout

    def commit(self) -> str | None:
        """HEAD's commit of a git copy (None for a plain folder)."""
        try:
            return self._git("rev-parse", "HEAD").decode().strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    def names(self, folder: str) -> list[str]:
        """File names in `folder` (empty when it is absent)."""
        if self.bare:
            out = self._git("ls-tree", "--name-only", f"HEAD:{folder}") if self._has(folder) else b""
            return sorted(out.decode().split())
        where = self.path / folder
        return sorted(p.name for p in where.iterdir()) if where.is_dir() else []

    def _has(self, path: str) -> bool:
        try:
            self._git("cat-file", "-e", f"HEAD:{path}")
            return True
        except subprocess.CalledProcessError:
            return False

    def read(self, path: str) -> bytes | None:
        """A file's bytes (None when it is absent)."""
        if self.bare:
            return self._git("show", f"HEAD:{path}") if self._has(path) else None
        p = self.path / path
        return p.read_bytes() if p.is_file() else None


def summarise(ms: np.ndarray) -> dict:
    """Count, median, P95 (and the extremes) of per-query latencies in milliseconds."""
    ms = np.asarray(ms, dtype=np.float64)
    if ms.size == 0 or not np.all(np.isfinite(ms)):
        raise FannsError(f"a latency array of {ms.size} values is empty or not finite")
    return {
        "count": int(ms.size),
        "median_ms": float(np.median(ms)),
        "p95_ms": float(np.percentile(ms, 95)),
        "min_ms": float(ms.min()),
        "max_ms": float(ms.max()),
    }


def kernel_clock(tree: FalconTree, build: str) -> tuple[float, str]:
    """A build's requested kernel clock in MHz and where it was read (the thesis's 200 MHz when
    the repository has no configuration of the build)."""
    path = CLOCK_FILE.format(build=build)
    text = tree.read(path)
    found = re.search(r"^\s*kernel_frequency\s*=\s*(\d+(?:\.\d+)?)", text.decode(), re.M) if text else None
    if found is None:
        return THESIS_CLOCK_MHZ, "Falcon thesis 7.5.1 (no kernel_frequency in the repository)"
    return float(found.group(1)), f"{path}: kernel_frequency={found.group(1)} (requested from v++; no timing report)"


def read_measured(tree: FalconTree, batch: int = 1) -> list[dict]:
    """Every measured latency file of the two builds at `batch`, summarised, in a stable order."""
    rows = []
    for mode, build in BUILDS.items():
        folder = f"{LATENCY_DIR}/{FOLDER.format(build=build)}"
        for name in tree.names(folder):
            m = NAME.match(name)
            if not m or int(m["batch"]) != batch:
                continue
            data = tree.read(f"{folder}/{name}")
            ms = np.frombuffer(data, dtype=np.float64) if data and len(data) % 8 == 0 else np.zeros(0)
            rows.append(
                {
                    "mode": mode,
                    "build": build,
                    "file": f"{folder}/{name}",
                    "set": m["set"],
                    "size": m["size"],
                    "graph": m["graph"].lower(),
                    "max_degree": int(m["degree"]),
                    "ef": int(m["ef"]),
                    **summarise(ms),
                }
            )
    if not rows:
        raise FannsError(
            f"no batch-{batch} latency files under {tree.path}/{LATENCY_DIR}",
            hint="give a copy of Falcon's repository at commit 74c7c3d or later",
        )
    return rows


class _Frame:
    """A pandas object rebuilt without pandas: it keeps what it was given."""

    def __init__(self, *args) -> None:
        self.args = args

    def __setstate__(self, state) -> None:
        self.state = state


_ALLOWED = {
    ("pandas.core.frame", "DataFrame"): _Frame,
    ("pandas.core.internals.managers", "BlockManager"): _Frame,
    ("pandas.core.indexes.base", "Index"): _Frame,
    ("pandas.core.indexes.range", "RangeIndex"): _Frame,
    ("pandas._libs.internals", "_unpickle_block"): lambda values, placement, ndim: (values, placement),
    ("pandas.core.indexes.base", "_new_Index"): lambda cls, d: d.get("data", d),
    ("numpy.core.multiarray", "_reconstruct"): np.ndarray.__new__,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("builtins", "slice"): slice,
}


class _FrameUnpickler(pickle.Unpickler):
    """Reads a pickled pandas DataFrame of plain columns without pandas, and refuses any other
    class (a pickle runs what it names: only these harmless constructors are let through)."""

    def find_class(self, module: str, name: str):
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not a DataFrame part")
        return _ALLOWED[module, name]


def read_frame(data: bytes) -> dict[str, list]:
    """The columns of a pickled pandas DataFrame (name -> values)."""
    frame = _FrameUnpickler(io.BytesIO(data)).load()
    blocks, names = [], []

    def walk(obj) -> None:
        if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], np.ndarray) and isinstance(obj[1], slice):
            blocks.append(obj)
        elif isinstance(obj, np.ndarray) and obj.dtype == object and obj.ndim == 1:
            names.append(list(obj))
        elif isinstance(obj, list | tuple):
            for x in obj:
                walk(x)
        elif isinstance(obj, dict | _Frame):
            for x in (obj if isinstance(obj, dict) else vars(obj)).values():
                walk(x)

    walk(frame)
    if not names or not blocks:
        raise FannsError("the latency profile is not a pickled DataFrame of columns")
    columns = {}
    for values, where in blocks:
        for i, col in zip(range(where.start, where.stop, where.step or 1), values):
            columns[names[0][i]] = list(col)
    return columns


def read_profiles(tree: FalconTree) -> list[dict]:
    """Falcon's kernel-only latency at batch 1 per set, graph, mode and (mg, mc), from its profiles."""
    rows = []
    for mode, name in PROFILE_MODES.items():
        data = tree.read(PROFILE_FILE.format(mode=name))
        if data is None:
            continue
        cols = read_frame(data)
        for i in range(len(cols["dataset"])):
            if cols["batch_size"][i] != 1 or cols["max_degree"][i] != MAX_DEGREE or cols["ef"][i] != EF:
                continue
            m = re.fullmatch(r"([A-Za-z]+)(\d+M)", cols["dataset"][i])
            visited = cols.get("avg_visited", [None] * len(cols["dataset"]))[i]
            rows.append(
                {
                    "mode": mode,
                    "set": m[1] if m else cols["dataset"][i],
                    "size": m[2] if m else "",
                    "graph": str(cols["graph_type"][i]).lower(),
                    "mg": int(cols["max_group_num_in_pipe"][i]),
                    "mc": int(cols["max_cand_per_group"][i]),
                    "kernel_ms": float(cols["avg_latency_per_batch_ms"][i]),
                    "hops": float(cols["avg_hops"][i]),
                    "visited": float(visited) if visited is not None and np.isfinite(visited) else None,
                    "recall_at_10": float(cols["recall_10"][i]),
                }
            )
    return rows


def _cell(graph, q_fx, setup: SweepSetup, mode: str, mg: int, mc: int, qpp=None):
    qpp = qpp or setup.qpp(graph, mode)
    res, _ = shared_search_batch(graph, q_fx, setup.traversal(mg, mc, mode), [qpp], [1], setup.capacity, threads=1)
    return res


def model_latency(
    name: str, kind: str, mode: str, clock_mhz: float, board: str, falcon: tuple[int, int], choose: int
) -> dict:
    """The model's per-query latency of builtin:`name`'s `kind` graph in `mode` at batch 1, at
    Falcon's (mg, mc) `falcon` and at the model's own fastest (mg, mc) (module docstring)."""
    ds = load_dataset(f"builtin:{name}")
    graph = load_or_build(ds, kind, MAX_DEGREE, EF, VEC_BITS)
    _, q = prepare_vectors(ds)
    q_fx = graph.fmt.quantize(q)
    gt = ds.groundtruth(10)
    memory = MemorySystem.from_board(load_board(board), freq_mhz=clock_mhz)
    setup = SweepSetup(memory=memory, l=EF, pipelines=1)
    qpp = setup.qpp(graph, mode)
    to_ms = 1.0 / (clock_mhz * 1e3)
    sample = slice(0, min(choose, len(q_fx)))
    means = {}
    for mg in MG:
        for mc in MC:
            res = _cell(graph, q_fx[sample], setup, mode, mg, mc)
            means[mg, mc] = (float(res.latency[:, 0].mean()), recall_at_k(res.ids, gt[sample], 10))
    own = min((p for p, (_, r) in means.items() if r >= means[1, 1][1]), key=lambda p: (means[p][0], p))
    res = _cell(graph, q_fx, setup, mode, *falcon)
    best = _cell(graph, q_fx, setup, mode, *own)
    bfs = _cell(graph, q_fx, setup, mode, 1, 1)
    widths = {f"{8 * b}-bit": _cell(graph, q_fx, setup, mode, *falcon, replace(qpp, elem_bytes=b)) for b in (2, 3)}
    return {
        "set": name,
        "graph": kind,
        "mode": mode,
        "nodes": int(graph.n),
        "d": int(graph.fmt.d),
        "queries": int(len(q_fx)),
        "clock_mhz": clock_mhz,
        "memory_latency_cycles": memory.latency_cycles,
        "mg": falcon[0],
        "mc": falcon[1],
        "recall_at_10": recall_at_k(res.ids, gt, 10),
        "hops_mean": float(res.hops.mean()),
        "visited_mean": float(res.visited.mean()),
        "cycles_per_visited": float(res.latency[:, 0].mean() / res.visited.mean()),
        "vector_beats": qpp.vector_beats(),
        **summarise(res.latency[:, 0] * to_ms),
        "mean_ms": float(res.latency[:, 0].mean() * to_ms),
        "bfs_median_ms": float(np.median(bfs.latency[:, 0]) * to_ms),
        "bfs_hops_mean": float(bfs.hops.mean()),
        "own_best": {"mg": own[0], "mc": own[1], "median_ms": float(np.median(best.latency[:, 0]) * to_ms)},
        "wider_vectors": {
            w: {
                "vector_beats": replace(qpp, elem_bytes=b).vector_beats(),
                "median_ms": float(np.median(r.latency[:, 0]) * to_ms),
            }
            for (w, r), b in zip(widths.items(), (2, 3))
        },
    }


def _falcon_set(name: str) -> str:
    return "Deep" if name.startswith("deep") else "SIFT"


def falcon_profile(profiles: list[dict], name: str, kind: str, mode: str, size: str = "1M") -> dict | None:
    """Falcon's kernel-only profile row at its best (mg, mc) for the set closest to builtin:`name`."""
    rows = [
        r for r in profiles if (r["set"], r["size"], r["graph"], r["mode"]) == (_falcon_set(name), size, kind, mode)
    ]
    return min(rows, key=lambda r: r["kernel_ms"]) if rows else None


def differs(model: dict) -> str:
    """What separates a model row from Falcon's measurement of the same configuration."""
    falcon_beats = -(-model["d"] * FALCON_VECTOR_BYTES // PORT_BYTES)
    spec = BUILTINS.get(model["set"])
    data = spec.description.split(":")[0] if spec else model["set"]
    return (
        f"data {data} vs real {_falcon_set(model['set'])}; {model['nodes']:,} nodes vs 1M/10M; "
        f"8-bit vectors ({model['vector_beats']} beats) vs float32 ({falcon_beats}); "
        "model: kernel only; Falcon: end to end over TCP (kernel only: PCIe profile)"
    )


def comparison(measured: list[dict], profiles: list[dict], models: list[dict]) -> list[dict]:
    """One row per model run beside Falcon's 1M and 10M measurements of the same set, graph, mode."""
    rows = []
    for m in models:
        same = {
            r["size"]: r
            for r in measured
            if r["set"] == _falcon_set(m["set"]) and r["graph"] == m["graph"] and r["mode"] == m["mode"]
        }
        one, ten = same.get("1M"), same.get("10M")
        kernel = falcon_profile(profiles, m["set"], m["graph"], m["mode"])
        visited = kernel["visited"] if kernel else None
        per_visited = kernel["kernel_ms"] * m["clock_mhz"] * 1e3 / visited if visited else None
        rows.append(
            {
                "set": m["set"],
                "graph": m["graph"],
                "mode": m["mode"],
                "nodes": m["nodes"],
                "mg": m["mg"],
                "mc": m["mc"],
                "falcon_1m": [one["median_ms"], one["p95_ms"]] if one else None,
                "falcon_10m": [ten["median_ms"], ten["p95_ms"]] if ten else None,
                "falcon_kernel_1m_mean_ms": kernel["kernel_ms"] if kernel else None,
                "falcon_hops_1m": kernel["hops"] if kernel else None,
                "falcon_cycles_per_visited_1m": per_visited,
                "model_cycles_per_visited": m["cycles_per_visited"],
                "model": [m["median_ms"], m["p95_ms"]],
                "model_mean_ms": m["mean_ms"],
                "model_hops": m["hops_mean"],
                "ratio_1m": one["median_ms"] / m["median_ms"] if one else None,
                "ratio_kernel": kernel["kernel_ms"] / m["mean_ms"] if kernel else None,
                "differs": differs(m),
            }
        )
    return rows


def _pair(v: list[float] | None) -> str:
    return f"{v[0] * 1e3:4.0f} /{v[1] * 1e3:4.0f}" if v else "   – /   –"


def _x(v: float | None, fmt: str = "{:5.1f}x") -> str:
    return fmt.format(v) if v is not None else "–"


def print_tables(measured: list[dict], profiles: list[dict], models: list[dict], rows: list[dict]) -> None:
    print("Falcon measured end to end (CPU client - TCP - U250 - CPU), batch 1, µs median / P95 (count):")
    for r in measured:
        print(
            f"  {r['set']:>6s}{r['size']:<4s} {r['graph']:<4s} {r['mode']:<6s} "
            f"{_pair([r['median_ms'], r['p95_ms']])}  ({r['count']})"
        )
    print("\nFalcon kernel only (PCIe build, Vitis kernel time / 10,000 queries), batch 1, mean µs:")
    for r in profiles:
        print(
            f"  {r['set']:>6s}{r['size']:<4s} {r['graph']:<4s} {r['mode']:<6s} mg={r['mg']} mc={r['mc']}: "
            f"{r['kernel_ms'] * 1e3:5.1f} µs, hops {r['hops']:.1f}, R@10 {r['recall_at_10']:.4f}"
        )
    print("\nmodel, batch 1 (at Falcon's (mg, mc) of the 1M set):")
    for m in models:
        wide = ", ".join(f"{w} {v['median_ms'] * 1e3:.1f}" for w, v in m["wider_vectors"].items())
        own = m["own_best"]
        print(
            f"  {m['set']:>8s} {m['graph']:<4s} {m['mode']:<6s} {m['nodes']:>9,d} nodes, mg={m['mg']} mc={m['mc']}, "
            f"{m['clock_mhz']:g} MHz: {_pair([m['median_ms'], m['p95_ms']])} µs, mean {m['mean_ms'] * 1e3:.1f}; hops "
            f"{m['hops_mean']:.1f} (BFS {m['bfs_hops_mean']:.1f}, {m['bfs_median_ms'] * 1e3:.1f} µs), visited "
            f"{m['visited_mean']:.0f}, R@10 {m['recall_at_10']:.3f}; wider vectors: {wide}; model's own best "
            f"mg={own['mg']} mc={own['mc']} {own['median_ms'] * 1e3:.1f} µs"
        )
    print(
        "\nset       graph mode   mg,mc  Falcon 1M e2e  10M e2e    1M kernel  hops F/m     model       "
        "e2e/model kernel/model  cycles/visited F/m  what differs"
    )
    for r in rows:
        hops = f"{r['falcon_hops_1m']:.0f}/{r['model_hops']:.0f}" if r["falcon_hops_1m"] else "–"
        kernel = f"{r['falcon_kernel_1m_mean_ms'] * 1e3:6.1f}" if r["falcon_kernel_1m_mean_ms"] else "     –"
        per = r["falcon_cycles_per_visited_1m"]
        visited = f"{per:.1f}/{r['model_cycles_per_visited']:.1f}" if per else f"–/{r['model_cycles_per_visited']:.1f}"
        print(
            f"{r['set']:<9s} {r['graph']:<5s} {r['mode']:<6s} {r['mg']},{r['mc']}   {_pair(r['falcon_1m'])}  "
            f"{_pair(r['falcon_10m'])}  {kernel}    {hops:>8s}  {_pair(r['model'])}  {_x(r['ratio_1m']):>7s}  "
            f"{_x(r['ratio_kernel']):>7s}    {visited:>10s}  {r['differs']}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--falcon", default=MIRROR, help=f"copy of Falcon's repository (default {MIRROR})")
    ap.add_argument(
        "--sets",
        default="deep,sift",
        help="built-in sets of the model (default deep,sift; also deep-10k, sift-10k, deep-1m)",
    )
    ap.add_argument("--graphs", default="hnsw,nsg", help="graph kinds (default hnsw,nsg)")
    ap.add_argument("--choose", type=int, default=200, help="queries of the model's own (mg, mc) choice (default 200)")
    ap.add_argument("--board", default="u250", help="board of the memory model (default u250, Falcon's)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    try:
        tree = FalconTree(args.falcon)
        measured = read_measured(tree)
        profiles = read_profiles(tree)
        clocks = {mode: kernel_clock(tree, build) for mode, build in BUILDS.items()}
        models = []
        for name in args.sets.split(","):
            for kind in args.graphs.split(","):
                for mode in MODES:
                    falcon = falcon_profile(profiles, name, kind, mode)
                    setting = (falcon["mg"], falcon["mc"]) if falcon else published.best(mode)
                    models.append(model_latency(name, kind, mode, clocks[mode][0], args.board, setting, args.choose))
    except FannsError as exc:
        sys.exit(f"error: {exc}")
    rows = comparison(measured, profiles, models)
    print_tables(measured, profiles, models, rows)
    figures = {
        "falcon_commit": tree.commit() or "unknown",
        "clocks": {mode: {"mhz": mhz, "source": src} for mode, (mhz, src) in clocks.items()},
        "measured": measured,
        "profiles": profiles,
        "models": models,
        "rows": rows,
    }
    write_result(args.json, "falcon_latency", command_line(), figures)


def readme_row(f: dict) -> list[tuple[str, str]]:
    """The README figures rows (one per mode) of this benchmark's recorded `figures`
    (`benchmarks/readme_figures.py`)."""

    def us(v: list[float] | None) -> str:
        return f"{v[0] * 1e3:.0f}/{v[1] * 1e3:.0f}" if v else "–"

    out = []
    for mode in MODES:
        c = f["clocks"][mode]
        rows = [r for r in f["rows"] if r["mode"] == mode]
        groups = {}
        for r in rows:
            groups.setdefault((_falcon_set(r["set"]), r["graph"]), []).append(r)
        parts = []
        for (name, graph), rs in groups.items():
            r = rs[0]
            k = r["falcon_kernel_1m_mean_ms"]
            more = f"{(r['falcon_1m'][0] - k) * 1e3:.0f} more end to end" if k else ""
            kernel = f" (kernel-only mean {k * 1e3:.0f}; {more})" if k else ""
            model = ", ".join(f"{x['set']} ({x['nodes']:,}) {us(x['model'])}" for x in rs)
            parts.append(
                f"{name} {graph.upper()} (mg={r['mg']}, mc={r['mc']}): Falcon 1M {us(r['falcon_1m'])}{kernel}, "
                f"10M {us(r['falcon_10m'])}; model {model}"
            )
        figure = (
            f"Per-query latency at batch 1, {mode}-query, the Falcon cycle model beside Falcon's measured U250 "
            f"(its repository at {f['falcon_commit'][:7]}: plots/saved_latency, end to end from a CPU client over "
            "TCP; kernel: perf_test_scripts/saved_df, Vitis kernel time over PCIe, mean; degree 64, ef 64, "
            f"Falcon's (mg, mc); {c['mhz']:g} MHz from its v++ config). Model: kernel only, synthetic sets, "
            "8-bit vectors (Falcon: float32, 3-4x the beats per vector)"
        )
        out.append((figure, "µs median/P95: " + "; ".join(parts)))
    return out


if __name__ == "__main__":
    main()
