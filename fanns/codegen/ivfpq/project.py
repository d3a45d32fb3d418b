"""The IVF-PQ project folder `fanns generate` writes: one design, its HLS and RTL faces side by
side in the shared layout (`fanns.codegen.project_layout`: `hls/` is what `fanns generate-hls`
writes, `rtl/` what `fanns generate-rtl` writes), the report, and a README. `driver/` is the host
driver folder of a face when the generators provide one (`fanns.driver`): a link to the HLS
face's (the one that runs on the board), else the RTL face's; without it there is no driver/.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from fanns.codegen.ivfpq.hls import render_project
from fanns.codegen.ivfpq.rtl import render_rtl_project
from fanns.codegen.project_layout import ProjectLayout

if TYPE_CHECKING:  # the generators are imported when a project is laid out, not when the CLI starts
    from fanns.codegen.ivfpq.hls import TestQueries
    from fanns.design.ivfpq import IvfPqDesign
    from fanns.index.ivfpq import IvfPqIndexData


def in_face(design: IvfPqDesign) -> IvfPqDesign:
    """The design as a face's design.yaml holds it: the trained index's relative path, which is
    relative to the project folder, made relative to the face's folder one level below."""
    path = design.index.path
    if path is None or os.path.isabs(path):
        return design
    return dataclasses.replace(design, index=dataclasses.replace(design.index, path=os.path.join("..", path)))


def layout(
    design: IvfPqDesign, data: IvfPqIndexData, test: TestQueries, backends: tuple[str, ...], platform: str | None = None
) -> ProjectLayout:
    """The project's files for `backends` (without README, report and marker)."""

    out = ProjectLayout()
    face = in_face(design)
    if "hls" in backends:
        files, _ = render_project(face, data, test, platform=platform)
        out.add_face("hls", files)
    if "rtl" in backends:
        files, _, _ = render_rtl_project(face, data, test, platform=platform)
        out.add_face("rtl", files)
    out.files["design.yaml"] = design.to_yaml().encode()
    driver = out.driver_face()
    if driver is not None:
        out.links["driver"] = f"{driver}/driver"
    return out
