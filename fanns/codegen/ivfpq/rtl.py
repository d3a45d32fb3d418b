"""An IVF-PQ design as Verilog: the Amaranth accelerator (`fanns.arch.ivfpq.top`) emitted into
`PROJECT/rtl/` with its register map (Markdown for people, JSON for the host driver) and a port
map saying which board memory channel each AXI master serves.

The project folder follows the HLS project's layout (`fanns.codegen.ivfpq.hls`), so both generators
can share one project: `images/` (the packer's memory images and manifest.json), `data/`
(quantised test queries, their exact neighbours, the reference model's result keys),
`design.yaml`, and `fanns_project.json` (what a host driver needs). Everything is deterministic:
Verilog without source locations, sorted JSON, no timestamps or absolute paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.arch.ivfpq.top import IvfPqAccelerator
from fanns.boards import HOST_MEMORY, Board
from fanns.codegen.ivfpq.driver_files import add_driver
from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl_kernel import kernel, kernel_files
from fanns.codegen.ivfpq.shared import project_record, shared_files
from fanns.codegen.project_files import add_record, json_bytes, write_files
from fanns.codegen.rtl_kernel import CONTROL, port_args, port_signals, vlnv
from fanns.design.ivfpq import IvfPqDesign
from fanns.hdl.verilog import KERNEL_CLOCK, KERNEL_RESET, to_kernel_verilog
from fanns.images import ivfpq as memimage
from fanns.index.ivfpq import IvfPqIndexData
from fanns.outputs import FileContent
from fanns.tools.verilogcache import VerilogModuleCache

TOP = "fanns_ivfpq"
RTL_FILES = ("rtl/fanns_ivfpq.v", "rtl/regmap.md", "rtl/regmap.json", "rtl/ports.json", "rtl/kernel.xml")


def verilog(hw: IvfPqHw) -> str:
    """The Verilog of the accelerator as a Xilinx RTL kernel (module `fanns_ivfpq`: ports `ap_clk`,
    `ap_rst_n`, `s_axi_control_*`, `m_axi_<name>_*`, `interrupt`), deterministic."""
    return to_kernel_verilog(IvfPqAccelerator(hw), TOP, {"s_axil": CONTROL}, VerilogModuleCache(), hw)


def port_map(hw: IvfPqHw) -> dict:
    """Every AXI port of the top level: role, width, and the board channel it must be wired to."""
    design = hw.design
    io = next(ch for ch in design.memory if ch.use == "io")
    pq = [ch for ch in design.memory if ch.use == "pq_codes"]
    ports = {
        CONTROL: {"role": "control", "bus": "axi4-lite", "addr_bits": hw.regmap.addr_width, "data_bits": 32},
        "m_axi_io": {
            "role": "host I/O (ROM images at load, queries, results)",
            "bus": "axi4",
            "data_bits": hw.io_port_bits,
            "memory": io.memory,
            "channel": io.channel,
        },
    }
    for c, ch in enumerate(pq):
        ports[f"m_axi_pq{c}"] = {
            "role": f"PQ codes of PEs {list(ch.pes)} (image pq_codes_{c})",
            "bus": "axi4 read",
            "data_bits": hw.stages.pq_dist.port_bits,
            "memory": ch.memory,
            "channel": ch.channel,
        }
        if hw.host_tier:  # the lists in host memory, the channel holds the cache region
            ports[f"m_axi_pq{c}"] |= {"memory": HOST_MEMORY, "channel": 0}
            ports[f"m_axi_cache{c}"] = {
                "role": f"cache region of PEs {list(ch.pes)}: prefetch writes, cached lists read (image pq_cache_{c})",
                "bus": "axi4",
                "data_bits": hw.stages.pq_dist.port_bits,
                "memory": ch.memory,
                "channel": ch.channel,
            }
    for c, ch in enumerate(c for c in design.memory if c.use == "pq_hot"):
        ports[f"m_axi_hot{c}"] = {
            "role": f"hot lists (fast tier) of PEs {list(ch.pes)} (image pq_hot_{c})",
            "bus": "axi4 read",
            "data_bits": hw.stages.pq_dist.port_bits,
            "memory": ch.memory,
            "channel": ch.channel,
        }
    streamed = [ch for ch in design.memory if ch.use == "ivf_centroids"]
    for c, (ch, lay) in enumerate(zip(streamed, hw.ivf_stream_layouts, strict=True)):
        ports[f"m_axi_ivf{c}"] = {
            "role": f"streamed IVF centroids of IVFDist PEs {list(lay.channel_pes)} (image ivf_centroids_{c})",
            "bus": "axi4 read",
            "data_bits": lay.port_bits,
            "memory": ch.memory,
            "channel": ch.channel,
        }
    for ch in (c for c in design.memory if c.use == "lut_centroids"):
        ports["m_axi_lutc"] = {
            "role": "BuildLUT's centroids, one cell read per probe (image lut_centroids)",
            "bus": "axi4 read",
            "data_bits": hw.io_port_bits,
            "memory": ch.memory,
            "channel": ch.channel,
        }
    for ch in (c for c in design.memory if c.use == "opq_matrix"):
        ports["m_axi_opq"] = {
            "role": "the streamed OPQ matrix, read once per query (image opq_matrix)",
            "bus": "axi4 read",
            "data_bits": hw.opq_stream_layout.port_bits,
            "memory": ch.memory,
            "channel": ch.channel,
        }
    for name, port in ports.items():
        port["args"] = port_args(hw.regmap, hw.pointer_ports(), name)
    for name, signals in port_signals(kernel(hw, {"ports": ports}, TOP).interfaces()).items():
        ports[name]["signals"] = signals
    return {
        "top": TOP,
        "vlnv": vlnv(TOP),
        "clock": KERNEL_CLOCK,
        "clock_hz": round(design.clock_mhz * 1e6),
        "reset": f"{KERNEL_RESET} (active low, synchronous)",
        "interrupt": "interrupt",
        "addr_bits": 64,
        "ports": ports,
    }


def rtl_files(
    hw: IvfPqHw, images: memimage.MemoryImages, test: dict, platform: str | None = None
) -> dict[str, FileContent]:
    """The files of `PROJECT/rtl/` and the Alveo road's (`fanns.codegen.ivfpq.rtl_kernel`, `fanns.codegen.rtl_kernel`;
    `platform`: the Vitis platform, default the board file's)."""
    ports = port_map(hw)
    return {
        "rtl/fanns_ivfpq.v": verilog(hw).encode(),
        "rtl/regmap.md": hw.regmap.to_markdown().encode(),
        "rtl/regmap.json": hw.regmap.to_json().encode(),
        "rtl/ports.json": json_bytes(ports),
    } | kernel_files(hw, ports, images, test, TOP, platform)


@dataclass(frozen=True)
class RtlProject:
    """A written project: its folder, every file with its size, the RTL view and the images."""

    path: Path
    files: dict[str, int]
    hw: IvfPqHw
    images: memimage.MemoryImages


def render_rtl_project(
    design: IvfPqDesign,
    data: IvfPqIndexData,
    test: TestQueries,
    board: Board | None = None,
    platform: str | None = None,
) -> tuple[dict[str, FileContent], IvfPqHw, memimage.MemoryImages]:
    """Every file of the RTL project (relative path -> bytes), its RTL view and its images."""
    board = board or design.target_board()
    hw = IvfPqHw.from_design(design, board)
    images = memimage.pack(design, data, board)
    shared, plan = shared_files(design, data, test, images)
    record = project_record(design, data, test, images, "generate-rtl", plan)
    files = rtl_files(hw, images, record["test"], platform) | shared
    record |= {
        "rtl": {"top": TOP, "verilog": "rtl/fanns_ivfpq.v", "regmap": "rtl/regmap.json", "ports": "rtl/ports.json"},
    }
    add_driver(files, record, "rtl")
    add_record(files, record)
    return files, hw, images


def generate_rtl(
    design: IvfPqDesign, data: IvfPqIndexData, test: TestQueries, out: Path, *, force: bool = False
) -> RtlProject:
    """Render and write the RTL project of `design` into `out` (atomically)."""
    files, hw, images = render_rtl_project(design, data, test)
    write_files(files, Path(out), force)
    return RtlProject(Path(out), {k: len(v) for k, v in sorted(files.items())}, hw, images)
