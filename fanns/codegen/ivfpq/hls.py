"""An IVF-PQ design as a Vitis HLS project (FANNS 6.5.4): kernel, hosts, build files, memory
images and test data, rendered from `templates/hls/`.

Why this shape: the generated project must stand alone (its own copy of the PE headers and of
the portability header, so `make csim` needs only g++), be readable (named PEs, a comment on
every FIFO) and be deterministic (the same design, index and queries give the same bytes: no
timestamps, no absolute paths, sorted everything). The kernel embeds no index data (the index
is a run-time input, loaded from the ROM images), so its source depends only on the design and
the shape of the index. The decisions live in
`fanns.codegen.ivfpq.hls_context`; this module packs the memory images, renders the templates, adds
the test data the hosts check against (quantised queries, exact neighbours, the reference
model's result keys) and writes the folder atomically — a failure never leaves half a project.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.boards import Board
from fanns.codegen.block_design import hls_plan, zynq_files
from fanns.codegen.ivfpq.driver_files import add_driver
from fanns.codegen.ivfpq.hls_context import KERNEL, SCALARS, build_context
from fanns.codegen.ivfpq.shared import project_record, shared_files
from fanns.codegen.platform import TEMPLATES, project_templates, uses_block_design, vitis_platform
from fanns.codegen.project_files import add_record, write_files
from fanns.design.ivfpq import IvfPqDesign
from fanns.errors import FannsError
from fanns.hdl.regmap import vitis_hls_regmap
from fanns.images import ivfpq as memimage
from fanns.index.ivfpq import IvfPqIndexData
from fanns.outputs import FileContent
from fanns.paths import shared_dir
from fanns.templating import environment


@dataclass(frozen=True)
class TestQueries:
    """Host queries (float, as the dataset gives them) and their exact nearest neighbours."""

    __test__ = False  # not a pytest test class

    queries: np.ndarray  # [nq, d]
    groundtruth: np.ndarray  # [nq, >= K] ids, nearest first


@dataclass(frozen=True)
class HlsProject:
    """A written project: its folder, every file with its size, and the packed images."""

    path: Path
    files: dict[str, int]
    images: memimage.MemoryImages

    def code_sizes(self) -> dict[str, tuple[int, int]]:
        """(lines, bytes) of every generated source file (src/, not the copied PE headers)."""
        out = {}
        for name in sorted(n for n in TEMPLATES if (self.path / n).is_file()):
            text = (self.path / name).read_bytes()
            out[name] = (text.count(b"\n"), len(text))
        return out


def _single_slr(design: IvfPqDesign) -> str | None:
    used = [name for name, groups in sorted(design.slr.items()) if groups]
    return used[0] if len(used) == 1 else None


def check_design(design: IvfPqDesign) -> None:
    """What the HLS kernel needs of a valid design.yaml beyond its schema: an untiered PQ stage,
    and lanes that divide the hardware's d (d_hw with padded sub-vectors; the kernel's
    `static_assert`s: each stage takes the query in d_hw/lanes words, and `regroup` needs both
    lane counts to divide d_hw)."""
    st = design.stages
    if st.pq_dist.tiers is not None:
        raise FannsError(
            "tiered PQ-code placement (stages.pq_dist.tiers) is not supported by "
            "the HLS generator: its kernel reads every list from one memory group",
            hint=(
                "generate the RTL project (`fanns generate-rtl`), or "
                "drop `tiers` from design.yaml for an untiered HLS kernel"
            ),
        )
    d = design.format.d_hw
    for name in ("opq", "ivf_dist", "build_lut"):
        stage = getattr(st, name)
        if stage is not None and d % stage.lanes:
            raise FannsError(
                f"stages.{name}.lanes = {stage.lanes} does not divide d = {d} (in hardware)",
                hint="choose lanes among the divisors of d, pad the sub-vectors (format.dsub_hw), or re-run fanns dse",
            )


def render_project(
    design: IvfPqDesign,
    data: IvfPqIndexData,
    test: TestQueries,
    *,
    board: Board | None = None,
    platform: str | None = None,
) -> tuple[dict[str, FileContent], memimage.MemoryImages]:
    """Every file of the project as bytes (relative path -> content), and the packed images."""
    check_design(design)
    board = board or design.target_board()
    zynq = uses_block_design(board, platform)
    platform = None if zynq else vitis_platform(board, platform)
    images = memimage.pack(design, data, board)
    ctx = build_context(design, images, board, platform)
    files, tier_plan = shared_files(design, data, test, images)
    record = _project_record(design, data, test, ctx, images, tier_plan)
    plan = None
    if zynq:
        regmap = vitis_hls_regmap(KERNEL, [a.name for a in ctx.args], list(SCALARS.items()))
        plan = hls_plan(board, KERNEL, design.clock_mhz, ctx.args, regmap)
        files.update(zynq_files(plan, ["src/kernel.cpp"]))
    values = ctx.as_dict()
    image_args = [a for a in ctx.args if a.image is not None]
    values.update(
        images=images,
        image_args=image_args,
        image_bytes=sum(img.nbytes for img in images.images),
        test=record["test"],
        host_plan=tier_plan,
        # the XRT host's prefetch (mode 2) of `m` descriptors in `cells_bo`, and the cells argument
        prefetch_call=", ".join(
            ["query_bo", "result_bo", *(f"images[{i}]" for i in range(len(image_args))), "cells_bo"]
            + ["query_bo", "m", "0u", "2u"]
        ),
        cells_arg="2 + host::NUM_IMAGES",
        slr=_single_slr(design),
        zynq=plan,
    )
    env = environment("hls", shared=["hls_common"])
    for path, template in project_templates(zynq).items():
        files[path] = env.get_template(template).render(values).encode()
    hls = shared_dir("hls")
    for header in ctx.headers:
        files[f"src/{header}"] = (hls / header).read_bytes()
    add_driver(files, record, "hls", plan)
    add_record(files, record)
    return files, images


def _project_record(
    design: IvfPqDesign, data: IvfPqIndexData, test: TestQueries, ctx, images: memimage.MemoryImages, plan: dict | None
) -> dict:
    """What a host driver needs to use the project: formats, I/O layout, arguments and test set."""
    return project_record(design, data, test, images, "generate-hls", plan) | {
        "kernel": KERNEL,
        "args": [a.record() for a in ctx.args],
    }


def generate_hls(
    design: IvfPqDesign,
    data: IvfPqIndexData,
    test: TestQueries,
    out: Path,
    *,
    platform: str | None = None,
    force: bool = False,
) -> HlsProject:
    """Render and write the project of `design` into `out` (see the module docstring)."""
    files, images = render_project(design, data, test, platform=platform)
    write_files(files, Path(out), force)
    return HlsProject(Path(out), {k: len(v) for k, v in sorted(files.items())}, images)
