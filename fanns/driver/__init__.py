"""The host driver: one search API over a generated accelerator, on a PYNQ board, in RTL
simulation, in C simulation or in the reference model.

    import fanns.driver
    with fanns.driver.open("project", backend="model") as acc:
        acc.load()
        ids, distances = acc.search(queries, k=10)
        print(acc.stats())

Every backend of an IVF-PQ project is programmed by the same code (`fanns.driver.ivfpq.plan`:
buffers, banks, register values; `fanns.driver.ivfpq.accelerator`: the session); a backend only
executes it. A graph project opens as `fanns.driver.graph.GraphAccelerator`.

Why this module imports both accelerators' drivers: `open` is the one entry a host program uses
for any project, so it is orchestration (like `fanns.flow`), the one driver module the accelerator
axis of `tests/test_layers.py` exempts; it holds nothing but that dispatch.
"""

from __future__ import annotations

from pathlib import Path

from fanns.choices import DRIVER_BACKENDS
from fanns.driver.graph import GraphAccelerator, is_graph_folder, project_face
from fanns.driver.graph_pynq import XCLBIN as GRAPH_XCLBIN
from fanns.driver.ivfpq.accelerator import Accelerator
from fanns.driver.ivfpq.backends import make_backend
from fanns.driver.ivfpq.project import Project
from fanns.driver.project import FACES, face_folder
from fanns.errors import FannsError


def open(  # noqa: A001 - the API's name
    project: str | Path, backend: str = "model", batch: int | None = None, face: str | None = None, **options
):
    """The accelerator of a generated `project` on `backend`; `batch` caps the queries per run
    (default: the backend's, at most what the I/O bank holds); `options` go to the backend
    (model: cache_bytes, the host-memory tier of docs/host_tier.md; c-sim: build_dir, threads;
    rtl-sim: build_dir, latency; pynq: bitstream, device; another option is refused).
    `project` is a single-face project or the folder `fanns generate` writes: then `face` ("hls"
    or "rtl") picks the face, by default the backend's (`fanns.driver.project.face_folder`).
    A graph project (`fanns generate-graph-hls` / `generate-graph-rtl`, or a folder holding them
    as hls/ and rtl/) opens as a `fanns.driver.graph.GraphAccelerator` (model, c-sim, rtl-sim, pynq:
    options bitstream, device, ip, timeout)."""
    if backend not in DRIVER_BACKENDS:
        raise FannsError(f"unknown backend {backend!r}", hint=f"choose one of {', '.join(DRIVER_BACKENDS)}")
    if is_graph_folder(project, FACES):
        path = face_folder(project, backend, face, GRAPH_XCLBIN)
        if face is not None and project_face(path) != face:
            raise FannsError(f"{project} is a graph {project_face(path).upper()} project, not {face}")
        return GraphAccelerator(path, backend, batch, **options)
    proj = Project.open(face_folder(project, backend, face))
    if face is not None and proj.kind != face:
        raise FannsError(f"{project} is an {proj.kind.upper()} project, not {face}", hint=f"pass face={proj.kind!r}")
    return Accelerator(proj, make_backend(backend, proj.kind, **options), batch)
