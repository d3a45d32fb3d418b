"""A graph design as a Vitis HLS project: the Falcon QPP with DST in HLS C++ (`hls/falcon_qpp.h`),
its kernel, XRT host, C simulation, build files, the graph's memory images and test data,
rendered from `templates/graph_hls/`.

Why this shape: it is the IVF-PQ HLS project (`fanns.codegen.ivfpq.hls`) for a graph design — a
standalone folder (its own copy of the headers, so `make csim` needs only g++), deterministic
(no timestamps, no absolute paths) — holding the same images and test data as the graph RTL
project (`fanns.codegen.graph.rtl.shared_files`: one packer, one reference), so `fanns sim` checks
both faces against the same DST reference. The kernel takes l, k, mg, mc (and nq, nodes, entry)
as s_axilite arguments; queue sizes, Bloom filter and BFC units are compile-time constants of
`src/kernel.h`; one m_axi bundle per memory channel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.boards import Board
from fanns.codegen.block_design import hls_plan, zynq_files
from fanns.codegen.graph.shared import project_record, shared_files
from fanns.codegen.platform import (
    KernelArg,
    header_closure,
    project_templates,
    uses_block_design,
    vitis_memory,
    vitis_platform,
)
from fanns.codegen.project_files import PROJECT_FILE, add_record, write_files
from fanns.design.graph import GraphDesign
from fanns.errors import FannsError
from fanns.hdl.regmap import vitis_hls_regmap
from fanns.images.graph import GraphImages
from fanns.index.graph import GraphImage
from fanns.paths import shared_dir
from fanns.templating import environment

KERNEL = "fanns_falcon_qpp"
SCALARS = ("nq", "nodes", "entry", "l", "k", "mg", "mc")
"""The kernel's s_axilite scalar arguments, in order (after the pointers)."""


@dataclass(frozen=True)
class GraphHlsProject:
    path: Path
    files: dict[str, int]
    images: GraphImages


def kernel_args(design: GraphDesign, board: Board, zynq: bool = False) -> list[KernelArg]:
    """Pointer arguments in order: queries, results, then adjacency and vectors of each graph
    channel. `zynq`: a block design connects them (its record checks the HP ports), not v++."""
    mem = design.memory
    if not zynq:
        vitis_memory(mem.kind)
    channels = sum(g.count for g in board.memory if g.kind == mem.kind)
    for ch in (*mem.channels, mem.io_channel):
        if ch >= channels:
            raise FannsError(
                f"memory channel {mem.kind}[{ch}] of the design does not exist on {board.name} ({channels} channels)",
                hint="re-run the DSE for this board",
            )
    args = [
        KernelArg("queries", "GraphWord", True, mem.kind, mem.io_channel, "query rows in (d elements each)"),
        KernelArg("results", "GraphWord", False, mem.kind, mem.io_channel, "result rows out (k_max keys, statistics)"),
    ]
    for c, ch in enumerate(mem.channels):
        args.append(
            KernelArg(
                f"adj_{c}",
                "GraphWord",
                True,
                mem.kind,
                ch,
                f"adjacency rows of nodes i % {design.channels} == {c}",
                f"adjacency_{c}",
                "graph",
            )
        )
        args.append(
            KernelArg(
                f"vec_{c}",
                "GraphWord",
                True,
                mem.kind,
                ch,
                f"vector rows of nodes i % {design.channels} == {c}",
                f"vectors_{c}",
                "graph",
            )
        )
    return args


def template_values(design: GraphDesign, board: Board, platform: str | None, nq: int, gt_k: int) -> dict:
    """Everything the templates read: beats per row, Bloom bank size, ports (see the module
    docstring); `platform` None: the Zynq road (`zynq`: the block-design record)."""
    port = design.port_bytes
    args = kernel_args(design, board, zynq=platform is None)
    cus = design.pipelines if design.mode == "across" else 1
    plan = None
    if platform is None:
        regmap = vitis_hls_regmap(KERNEL, [a.name for a in args], [(s, f"scalar argument {s}") for s in SCALARS])
        plan = hls_plan(board, KERNEL, design.clock_mhz, args, regmap, instances=cus)
    return {
        "kernel": KERNEL,
        "design": design,
        "board": board,
        "platform": platform,
        "clock_hz": int(round(design.clock_mhz * 1e6)),
        "eb": design.graph.elem_bytes,
        "signed": design.graph.signed,
        "channels": design.channels,
        "port_bytes": port,
        "adj_beats": design.adjacency_row_bytes // port,
        "vec_beats": design.vector_row_bytes // port,
        "query_beats": design.query_row_bytes // port,
        "result_beats": design.result_row_bytes // port,
        "bank_bits": design.bloom.b // design.bloom.h,
        "args": args,
        "image_args": [a for a in args if a.image is not None],
        "scalars": SCALARS,
        "graph_channels": [{"index": c, "bank": f"{a.vitis_bank}"} for c, a in enumerate(args[2::2])],
        "test": {"nq": nq, "gt_k": gt_k},
        "cus": cus,
        "zynq": plan,
    }


def render(
    design: GraphDesign,
    graph: GraphImage,
    queries_fx: np.ndarray,
    groundtruth: np.ndarray | None = None,
    *,
    platform: str | None = None,
) -> tuple[dict[str, bytes], GraphImages]:
    """Every file of the project (relative path -> bytes) and the packed images."""
    board = design.target_board()
    zynq = uses_block_design(board, platform)
    platform = None if zynq else vitis_platform(board, platform)
    files, images = shared_files(design, graph, queries_fx, groundtruth)
    nq = int(len(queries_fx))
    values = template_values(design, board, platform, nq, design.runtime.k if groundtruth is not None else 0)
    if zynq:
        files.update(zynq_files(values["zynq"], ["src/kernel.cpp"]))
    env = environment("graph_hls", shared=["hls_common"])
    for path, template in project_templates(zynq).items():
        files[path] = env.get_template(template).render(values).encode()
    for header in header_closure(["falcon_qpp.h"]):
        files[f"src/{header}"] = (shared_dir("hls") / header).read_bytes()
    record = project_record(design, graph, images, nq, groundtruth is not None, "generate-graph-hls") | {
        "hls": {
            "kernel": KERNEL,
            "scalars": list(SCALARS),
            "args": [a.record() for a in values["args"]],
        },
    }
    add_record(files, record)
    return files, images


def generate_graph_hls(
    design: GraphDesign,
    graph: GraphImage,
    queries_fx: np.ndarray,
    out: Path,
    *,
    groundtruth: np.ndarray | None = None,
    platform: str | None = None,
    force: bool = False,
) -> GraphHlsProject:
    """Render and write the project into `out` (atomically)."""
    files, images = render(design, graph, queries_fx, groundtruth, platform=platform)
    write_files(files, Path(out), force)
    return GraphHlsProject(Path(out), {k: len(v) for k, v in sorted(files.items())}, images)


def is_graph_hls_project(project: Path) -> bool:
    try:
        record = json.loads((Path(project) / PROJECT_FILE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("kind") == "graph" and "hls" in record
