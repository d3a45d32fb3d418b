"""The host driver: one search API over a generated accelerator, on a PYNQ board, in RTL
simulation, in C simulation or in the reference model.

    import fanns.driver
    with fanns.driver.open("project", backend="model") as acc:
        acc.load()
        ids, distances = acc.search(queries, k=10)
        print(acc.stats())

Every backend is programmed by the same code (`fanns.driver.plan`: buffers, banks, register
values; `fanns.driver.accelerator`: the session); a backend only executes it.
"""

from __future__ import annotations

from pathlib import Path

from fanns.choices import DRIVER_BACKENDS
from fanns.driver.accelerator import Accelerator
from fanns.driver.csim import CsimBackend
from fanns.driver.graph import GraphAccelerator, is_graph_folder, project_face
from fanns.driver.graph_pynq import XCLBIN as GRAPH_XCLBIN
from fanns.driver.model import ModelBackend
from fanns.driver.project import FACES, Project, face_folder
from fanns.driver.pynq_backend import PynqBackend
from fanns.driver.rtlsim import RtlSimBackend
from fanns.errors import FannsError

BACKENDS = DRIVER_BACKENDS


def make_backend(name: str, kind: str, **options):
    """The backend `name` for a project of `kind` ("hls" or "rtl")."""
    if name == "model":
        return ModelBackend(**options)
    if name == "c-sim":
        if kind != "hls":
            raise FannsError(
                "the c-sim backend runs the HLS kernel; this is an RTL project",
                hint="use backend rtl-sim or model, or generate the project with `fanns generate-hls`",
            )

        return CsimBackend(**options)
    if name == "rtl-sim":
        if kind != "rtl":
            raise FannsError(
                "the rtl-sim backend runs the generated RTL; this is an HLS project",
                hint="use backend c-sim or model, or generate the project with `fanns generate-rtl`",
            )

        return RtlSimBackend(**options)
    if name == "pynq":
        return PynqBackend(**options)
    raise FannsError(f"unknown backend {name!r}", hint=f"choose one of {', '.join(BACKENDS)}")


def open(  # noqa: A001 - the API's name
    project: str | Path, backend: str = "model", batch: int | None = None, face: str | None = None, **options
):
    """The accelerator of a generated `project` on `backend`; `batch` caps the queries per run
    (default: the backend's, at most what the I/O bank holds); `options` go to the backend
    (c-sim: build_dir, threads; rtl-sim: build_dir, latency; pynq: bitstream, device).
    `project` is a single-face project or the folder `fanns generate` writes: then `face` ("hls"
    or "rtl") picks the face, by default the backend's (`fanns.driver.project.face_folder`).
    A graph project (`fanns generate-graph-hls` / `generate-graph-rtl`, or a folder holding them
    as hls/ and rtl/) opens as a `fanns.driver.graph.GraphAccelerator` (model, c-sim, rtl-sim, pynq:
    options bitstream, device, ip, timeout)."""
    if backend not in BACKENDS:
        raise FannsError(f"unknown backend {backend!r}", hint=f"choose one of {', '.join(BACKENDS)}")
    if is_graph_folder(project, FACES):
        path = face_folder(project, backend, face, GRAPH_XCLBIN)
        if face is not None and project_face(path) != face:
            raise FannsError(f"{project} is a graph {project_face(path).upper()} project, not {face}")
        return GraphAccelerator(path, backend, batch, **options)
    proj = Project.open(face_folder(project, backend, face))
    if face is not None and proj.kind != face:
        raise FannsError(f"{project} is an {proj.kind.upper()} project, not {face}", hint=f"pass face={proj.kind!r}")
    return Accelerator(proj, make_backend(backend, proj.kind, **options), batch)
