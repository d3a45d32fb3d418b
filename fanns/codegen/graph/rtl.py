"""A graph design as Verilog: one Falcon query processing pipeline (`fanns.arch.graph.top`) — or,
for an across-query design of P > 1 pipelines, P of them behind one control port
(`fanns.arch.graph.across`) — with its register map, port map, the graph's memory images and
test data, as a project folder.

Why a project and not just Verilog: `fanns sim PROJECT` must be able to check the RTL from the
folder alone — the design, the packer's images (`fanns.images.graph`, shared with the
HLS side), the quantised test queries and what the DST reference returns for them at the
design's run-time (l, k, mg, mc). The layout follows the IVF-PQ RTL project
(`fanns.codegen.ivfpq.rtl`): `rtl/`, `images/`, `data/`, `design.yaml`, `fanns_project.json`
(here with ``"kind": "graph"``). Deterministic: no timestamps, sorted JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.arch.graph.across import QPP_WINDOW, FalconAcross, across_addr_bits
from fanns.arch.graph.top import FalconQpp
from fanns.codegen.project_files import (
    PROJECT_FILE,
    add_record,
    design_and_images,
    generator,
    json_bytes,
    query_count,
    read_data,
    read_record,
    write_files,
)
from fanns.design.graph import GraphDesign
from fanns.design.graph_hw import QppHw
from fanns.errors import FannsError
from fanns.hdl.verilog import to_verilog
from fanns.images.graph import GraphImages, pack
from fanns.index.graph import GraphImage
from fanns.reference.graph import STATS, reference

TOP = "fanns_falcon_qpp"
ACROSS_TOP = "fanns_falcon_across"


def is_across(design: GraphDesign) -> bool:
    """An across-query design of several pipelines gets the multi-QPP top level."""
    return design.mode == "across" and design.pipelines > 1


def top_name(design: GraphDesign) -> str:
    return ACROSS_TOP if is_across(design) else TOP


def verilog(hw: QppHw) -> str:

    design = hw.design
    top = FalconAcross(hw, design.pipelines) if is_across(design) else FalconQpp(hw)
    return to_verilog(top, top_name(design))


def port_map(hw: QppHw) -> dict:
    """Every port of the top level: role, bus, width and the memory channels it reads or writes."""

    mem = hw.design.memory
    masters = {
        "io": {
            "role": "queries in, result rows out",
            "bus": "axi4",
            "data_bits": hw.port_bits,
            "memory": mem.kind,
            "channel": mem.io_channel,
        },
        "list": {
            "role": "neighbour lists (adjacency images of every graph channel)",
            "bus": "axi4 read",
            "data_bits": hw.port_bits,
            "memory": mem.kind,
            "channels": list(mem.channels),
        },
    }
    for u in range(hw.units):
        masters[f"vec{u}"] = {
            "role": f"vectors of the nodes checked by BFC unit {u} (vector images)",
            "bus": "axi4 read",
            "data_bits": hw.port_bits,
            "memory": mem.kind,
            "channels": list(mem.channels),
        }
    record = {"top": top_name(hw.design), "clock": "clk", "reset": "rst (active high, synchronous)", "addr_bits": 64}
    if not is_across(hw.design):
        ports = {"s_axil": {"role": "control", "bus": "axi4-lite", "addr_bits": hw.regmap.addr_width, "data_bits": 32}}
        ports |= {f"m_axi_{role}": spec for role, spec in masters.items()}
        return record | {"ports": ports, "interrupt": "ap_done"}
    pipes = hw.design.pipelines
    ports = {
        "s_axil": {
            "role": f"control: QPP p's register map (regmap.json) at byte offset p x {QPP_WINDOW:#x}; "
            "SLVERR past the last QPP",
            "bus": "axi4-lite",
            "addr_bits": across_addr_bits(pipes),
            "data_bits": 32,
        }
    }
    for p in range(pipes):
        ports |= {
            f"m_axi_p{p}_{role}": spec | {"role": f"QPP {p}: {spec['role']}", "qpp": p}
            for role, spec in masters.items()
        }
    return record | {
        "ports": ports,
        "interrupt": f"{pipes} bits: bit p is QPP p's ap_done",
        "pipelines": pipes,
        "qpp_window": QPP_WINDOW,
        "sharing": "every master is mapped to the channels it reads; the channels' bandwidth is shared "
        "outside the kernel, by the platform's memory interconnect",
    }


@dataclass(frozen=True)
class GraphRtlProject:
    path: Path
    files: dict[str, int]
    hw: QppHw
    images: GraphImages


def shared_files(
    design: GraphDesign, graph: GraphImage, queries_fx: np.ndarray, groundtruth: np.ndarray | None = None
) -> tuple[dict[str, bytes], GraphImages]:
    """The files a graph project of either face (RTL, HLS) shares: design.yaml, the packer's images,
    the quantised test queries and the DST reference's keys and statistics for them."""
    q = np.asarray(queries_fx)
    if q.ndim != 2 or q.shape[1] != design.graph.d or len(q) < 1:
        raise FannsError(f"test queries must be [nq >= 1, {design.graph.d}], got {q.shape}")
    images = pack(design, graph)
    ref = reference(design, graph, q)
    files = design_and_images(design, images) | {
        "data/queries.bin": images.io.pack_queries(q),
        "data/reference_keys.bin": np.ascontiguousarray(ref.keys.astype("<u8")).tobytes(),
        "data/reference_stats.bin": np.ascontiguousarray(
            np.stack([ref.stats[s] for s in STATS], 1).astype("<u4")
        ).tobytes(),
    }
    if groundtruth is not None:
        files["data/groundtruth.bin"] = np.ascontiguousarray(
            np.asarray(groundtruth)[:, : design.runtime.k].astype("<u4")
        ).tobytes()
    return files, images


def project_record(
    design: GraphDesign, graph: GraphImage, images: GraphImages, nq: int, groundtruth: bool, command: str
) -> dict:
    """The fanns_project.json keys both faces write; each face adds its own (hls or rtl)."""
    rt = design.runtime
    return {
        "generator": generator(command),
        "kind": "graph",
        "graph": {"kind": graph.kind, "nodes": graph.n, "max_degree": graph.max_degree, "entry": graph.entry},
        "runtime": {"l": rt.l, "k": rt.k, "mg": rt.mg, "mc": rt.mc},
        "io": images.manifest()["io"],
        "test": {"nq": nq, "stats": list(STATS), "groundtruth": groundtruth},
    }


def render(
    design: GraphDesign, graph: GraphImage, queries_fx: np.ndarray, groundtruth: np.ndarray | None = None
) -> tuple[dict[str, bytes], QppHw, GraphImages]:
    """Every file of the project (relative path -> bytes)."""
    q = np.asarray(queries_fx)
    files, images = shared_files(design, graph, q, groundtruth)
    hw = QppHw(design)
    top = top_name(design)
    regmap_md = hw.regmap.to_markdown()
    if is_across(design):
        regmap_md = (
            f"{design.pipelines} query processing pipelines (across-query mode): QPP p's registers below are at "
            f"byte offset p x {QPP_WINDOW:#x} of `s_axil`; each QPP runs its own queries (its own nq, query_addr, "
            f"result_addr, ap_start, ap_done = interrupt bit p).\n\n"
        ) + regmap_md
    files.update(
        {
            f"rtl/{top}.v": verilog(hw).encode(),
            "rtl/regmap.md": regmap_md.encode(),
            "rtl/regmap.json": hw.regmap.to_json().encode(),
            "rtl/ports.json": json_bytes(port_map(hw)),
        }
    )
    record = project_record(design, graph, images, int(len(q)), groundtruth is not None, "generate-graph-rtl") | {
        "rtl": {
            "top": top,
            "verilog": f"rtl/{top}.v",
            "regmap": "rtl/regmap.json",
            "ports": "rtl/ports.json",
            "pipelines": design.pipelines if is_across(design) else 1,
        },
    }
    add_record(files, record)
    return files, hw, images


def generate_graph_rtl(
    design: GraphDesign,
    graph: GraphImage,
    queries_fx: np.ndarray,
    out: Path,
    *,
    groundtruth: np.ndarray | None = None,
    force: bool = False,
) -> GraphRtlProject:
    """Render and write the project into `out` (atomically)."""
    files, hw, images = render(design, graph, queries_fx, groundtruth)
    write_files(files, Path(out), force)
    return GraphRtlProject(Path(out), {k: len(v) for k, v in sorted(files.items())}, hw, images)


def is_graph_project(project: Path) -> bool:
    try:
        record = json.loads((Path(project) / PROJECT_FILE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("kind") == "graph"


@dataclass
class GraphProjectData:
    """A written project read back: what `fanns sim` needs."""

    design: GraphDesign
    images: GraphImages
    queries_fx: np.ndarray
    keys: np.ndarray
    stats: dict[str, np.ndarray]
    groundtruth: np.ndarray | None


def read_project(project: Path) -> GraphProjectData:
    """The project's design, images and test data, every file checked against the record (sizes)
    and the manifests (images) before anything simulates."""
    project = Path(project)
    record = read_record(project)
    design = GraphDesign.load(project / "design.yaml")
    images = GraphImages.read(project / "images")
    nq, io = query_count(project, record), images.io
    why = f"{nq} test queries"
    raw = read_data(project, "queries.bin", "u1", (nq, io.query_row_bytes), why)
    keys = read_data(project, "reference_keys.bin", "<u8", (nq, io.k_max), f"{why}, k_max {io.k_max}")
    stats = read_data(project, "reference_stats.bin", "<u4", (nq, len(STATS)), why).astype(np.int64)
    dtype = np.dtype(f"<{'i' if io.signed else 'u'}{io.elem_bytes}")
    q = np.ascontiguousarray(raw[:, : io.d * io.elem_bytes]).view(dtype).reshape(nq, io.d).astype(np.int64)
    gt = None
    if record["test"].get("groundtruth"):
        k = design.runtime.k
        gt = read_data(project, "groundtruth.bin", "<u4", (nq, k), f"{why}, k {k}").astype(np.int64)
    return GraphProjectData(design, images, q, keys, {s: stats[:, i] for i, s in enumerate(STATS)}, gt)
