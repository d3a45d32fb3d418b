"""`fanns run PROJECT --backend B --queries FILE`: search a generated project's accelerator through
the host driver and print recall (with ground truth), QPS, latency and device cycles.

The generated `PROJECT/driver/run_on_board.py` is this command with the pynq backend as default
(`board_main`), so the board script and the CLI are one piece of code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml

import fanns.driver
from fanns.datasets.formats import read_vectors
from fanns.design.graph import GraphDesign
from fanns.design.ivfpq import IvfPqDesign
from fanns.driver.graph import GraphAccelerator
from fanns.driver.project import face_folder
from fanns.errors import FannsError
from fanns.flow.parsers.run import add_options
from fanns.index.recall import recall_at
from fanns.numerics import first_true


def load_design(path: Path) -> GraphDesign | IvfPqDesign:
    """An IVF-PQ or graph design, by the `kind` key of the file."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        data = None
    return GraphDesign.load(path) if isinstance(data, dict) and data.get("kind") == "graph" else IvfPqDesign.load(path)


def read_groundtruth(path: Path, project: Path, nq: int) -> np.ndarray:
    """Exact neighbour ids [>= nq, k] of the queries, checked against the project's index size
    before anything runs: integers, one row per query, every id an id of the index."""
    gt = np.asarray(read_vectors(path))
    if gt.dtype.kind not in "iu":
        raise FannsError(
            f"{path}: ground truth of dtype {gt.dtype}: expected integer ids", hint="use .ivecs/.ibin/.npy"
        )
    if gt.shape[0] < nq:
        raise FannsError(f"{path}: ground truth for {gt.shape[0]} queries, fewer than the {nq} queries")
    design = load_design(project / "design.yaml")
    n = design.graph.n if isinstance(design, GraphDesign) else design.index.n
    bad = (gt < 0) | (gt >= n)
    if bad.any():
        row, col = first_true(bad)
        raise FannsError(
            f"{path}: ground-truth id {int(gt[row, col])} (query {row}, rank {col}) is not an id of the "
            f"index ({n} vectors, ids 0..{n - 1})",
            hint="pass the ground truth of these queries against the indexed base vectors",
        )
    return gt.astype(np.int64)


def run(project: Path, args: argparse.Namespace, out=print) -> int:
    """Open, load, search, report (see the module docstring)."""

    face = getattr(args, "face", None)
    project = face_folder(project, args.backend, face)  # the face of a `fanns generate` folder
    queries = read_vectors(Path(args.queries))
    gt = read_groundtruth(Path(args.groundtruth), Path(project), queries.shape[0]) if args.groundtruth else None
    options = {}
    if args.backend == "pynq" and args.bitstream:
        options["bitstream"] = args.bitstream
    if args.backend in ("c-sim", "rtl-sim") and args.build_dir:
        options["build_dir"] = args.build_dir
    with fanns.driver.open(project, backend=args.backend, batch=args.batch, face=face, **options) as acc:
        if isinstance(acc, GraphAccelerator):
            return run_graph(acc, args, queries, gt, out)
        acc.set_params(nprobe=args.nprobe, k=args.k)
        acc.load()
        ids, _ = acc.search(queries)
        stats = acc.stats()
    out(
        f"{ids.shape[0]} queries, k = {ids.shape[1]}, nprobe = {acc.nprobe}, backend {stats['backend']} "
        f"({stats['project']} project), {stats['runs']} device runs of up to {stats['batch']} queries"
    )
    if stats["clipped"]:
        out(
            f"note: {100 * stats['clipped']:.3f}% of the query elements lay outside the number format's range "
            "and were clipped (saturated) as the device does"
        )
    if gt is not None:
        if gt.shape[0] < ids.shape[0] or gt.shape[1] < ids.shape[1]:
            raise FannsError(f"ground truth {gt.shape} does not cover {ids.shape[0]} queries x k = {ids.shape[1]}")
        out(f"R@{ids.shape[1]} = {recall_at(ids, gt[: ids.shape[0]], ids.shape[1]):.6f}")
    lat = stats["latency_ms"]
    out(
        f"QPS {stats['qps']:,.1f} (host wall clock); latency per call p50 "
        f"{lat['p50']:.3f} ms, p95 {lat['p95']:.3f} ms, p99 {lat['p99']:.3f} ms"
    )
    if stats["cycles"]:
        cyc = stats["cycles"]
        out(f"device cycles: {cyc['total']:,} over all runs, index load {cyc.get('load_cycles', 0):,}")
    return 0


def run_graph(acc: GraphAccelerator, args: argparse.Namespace, queries: np.ndarray, gt, out=print) -> int:
    """`fanns run` on a graph project: search at the design's l, mg, mc (k: --k or the design's)."""
    if args.nprobe is not None:
        raise FannsError("--nprobe: a graph project has no nprobe", hint="drop --nprobe (k: --k)")
    acc.set_params(k=args.k)
    ids, _ = acc.search(queries)
    stats = acc.stats()
    rt = stats["runtime"]
    out(
        f"{ids.shape[0]} queries, k = {ids.shape[1]}, l = {rt['l']}, mg = {rt['mg']}, mc = {rt['mc']}, backend "
        f"{stats['backend']} ({stats['project']} project), {stats['runs']} runs"
    )
    if gt is not None:
        if gt.shape[1] < ids.shape[1]:
            raise FannsError(f"ground truth {gt.shape} does not cover k = {ids.shape[1]}")
        out(f"R@{ids.shape[1]} = {recall_at(ids, gt[: ids.shape[0]], ids.shape[1]):.6f}")
    out(f"QPS {stats['qps']:,.1f} (host wall clock)")
    if stats["cycles"]:
        out(f"device cycles: {stats['cycles']:,} over all runs")
    return 0


def board_main(project: Path, argv: list[str]) -> int:
    """The generated `driver/run_on_board.py`: `fanns run` on this project, pynq by default."""

    p = argparse.ArgumentParser(
        prog="run_on_board.py", description=f"search the accelerator of {project} through fanns.driver"
    )
    add_options(p, "pynq")
    args = p.parse_args(argv)
    try:
        return run(Path(project), args)
    except FannsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


def run_command(args: argparse.Namespace) -> int:
    """`fanns run` (options: `fanns.flow.parsers.run`)."""
    return run(Path(args.project), args)
