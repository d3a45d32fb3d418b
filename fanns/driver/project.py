"""A generated project's folder as the host drivers of both accelerators see it: its faces
(`hls/`, `rtl/` of the folder `fanns generate` writes), the face a backend opens, the bitstream
`make` builds, the Zynq block-design record and the memory banks it names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fanns.codegen.block_design import PLAN_FILE
from fanns.codegen.project_files import PROJECT_FILE
from fanns.errors import FannsError


@dataclass(frozen=True)
class Bank:
    """One memory channel of the board: group kind (design.yaml `memory`) and channel index."""

    memory: str
    channel: int

    def __str__(self) -> str:
        return f"{self.memory}[{self.channel}]"


def read_board_plan(project: Path) -> dict | None:
    """A project's Zynq block-design record (`zynq/board_plan.json`: instance names, base addresses,
    HP ports, registers), None without one (an Alveo build)."""
    path = Path(project) / PLAN_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise FannsError(f"{path}: invalid JSON ({exc})", hint="regenerate the project") from None


FACES = ("hls", "rtl")
FACE_OF_BACKEND = {"c-sim": "hls", "rtl-sim": "rtl"}
BITSTREAM = "build/hw/fanns_ivfpq.xclbin"
"""Where a face's `make hw` puts the xclbin (HLS and RTL faces alike)."""


def built_bitstream(project: Path, xclbin: str = BITSTREAM) -> Path:
    """The bitstream `make` builds in a single-face project: the block design's .bit on a Zynq board
    (`zynq/board_plan.json`), else the `xclbin` of `make hw`."""
    plan = read_board_plan(project)
    return Path(project) / (plan["bitstream"] if plan is not None else xclbin)


def face_folder(path: Path | str, backend: str, face: str | None = None, xclbin: str = BITSTREAM) -> Path:
    """The single-face project to open for `path`: `path` itself when it is one, else the face of
    the folder `fanns generate` writes (`hls/`, `rtl/`) that `face` names or, without `face`, that
    the backend runs (c-sim: hls; rtl-sim: rtl; pynq: the face whose bitstream was built — the
    Zynq .bit, or the `xclbin`; model: hls when there is one)."""
    path = Path(path)
    if face is not None and face not in FACES:
        raise FannsError(f"unknown face {face!r}", hint=f"choose one of {', '.join(FACES)}")
    if (path / PROJECT_FILE).is_file() or not path.is_dir():
        return path  # a single-face project (or nothing: Project.open says what is wrong)
    faces = [f for f in FACES if (path / f / PROJECT_FILE).is_file()]
    if not faces:
        return path
    if face is None:
        face = FACE_OF_BACKEND.get(backend)
    if face is None and backend == "pynq":
        built = [f for f in faces if built_bitstream(path / f, xclbin).is_file()]
        if len(built) != 1:
            which = "both faces have" if built else "no face has"
            raise FannsError(
                f"{path}: {which} a built bitstream ({xclbin} or the Zynq .bit), "
                "so the face to run on the board is not known",
                hint=f"build one (make -C {path}/hls hw, or make -C {path}/rtl hw) or pass face= / --face",
            )
        face = built[0]
    if face is None:
        face = faces[0]
    if face not in faces:
        raise FannsError(
            f"{path} has no {face} face (it has: {', '.join(faces)})",
            hint="generate it with `fanns generate --backends hls,rtl`, or choose another face / backend",
        )
    return path / face
