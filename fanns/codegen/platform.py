"""The road from a generated project to its board, shared by both accelerators and both faces:
v++ on a Vitis platform (Alveo; a Zynq board with an embedded Vitis platform asked for), or a
Vivado block design (a Zynq board without one).

Why here: the platform a project links for is chosen once, from `--platform` and the board file,
and checked to belong to the board — a platform of another card would give a project whose
build files, memory banks and clock are the board's but whose link targets a different card.
"""

from __future__ import annotations

import re

from fanns.boards import Board, list_boards
from fanns.checks import check_platform
from fanns.errors import FannsError

TEMPLATES = {
    "src/kernel.h": "kernel.h.j2",
    "src/kernel.cpp": "kernel.cpp.j2",
    "src/host_common.h": "host_common.h.j2",
    "src/host.cpp": "host.cpp.j2",
    "src/host_csim.cpp": "host_csim.cpp.j2",
    "src/csim_lib.cpp": "csim_lib.cpp.j2",
    "connectivity.cfg": "connectivity.cfg.j2",
    "Makefile": "Makefile.j2",
    "README.md": "README.md.j2",
}
"""HLS project file -> template; the IVF-PQ (templates/hls) and graph (templates/graph_hls)
projects have the same files, each from its own template folder; the host files and the Makefile
there extend the skeletons both share (templates/hls_common)."""


def uses_block_design(board: Board, platform: str | None) -> bool:
    """Whether the project's road to the board is a Vivado block design (a Zynq board, no Vitis
    platform asked for) rather than v++ on a Vitis platform (Alveo)."""
    return board.block_design is not None and platform is None and board.platform is None


def alveo(board: Board, platform: str | None) -> bool:
    """Whether the road is v++ on a Vitis platform (asked for, or the board file's)."""
    return bool(platform or board.platform)


def project_templates(zynq: bool) -> dict[str, str]:
    """TEMPLATES without connectivity.cfg (a v++ link file) when a block design connects the kernel."""
    return {k: v for k, v in TEMPLATES.items() if not (zynq and k == "connectivity.cfg")}


def _platform_words(platform: str) -> set[str]:
    """The words of a platform name (xilinx_u55c_gen3x16_xdma_3_202210_1 -> xilinx, u55c, gen3x16,
    ...): Xilinx names its platforms after the card."""
    return set(re.split(r"[_.]", platform.lower()))


def platform_board(platform: str, board: Board) -> str | None:
    """The shipped board, other than `board`, that a platform name names, or None (a platform of
    `board`, or a custom platform that names no shipped card)."""
    words = _platform_words(platform)
    if board.name.lower() in words or platform == board.platform:
        return None
    others = sorted(b.name for b in list_boards() if b.name != board.name and b.name.lower() in words)
    return others[0] if others else None


def vitis_platform(board: Board, platform: str | None) -> str:
    """The Vitis platform a project targets: the one asked for, else the board file's; a platform
    that names another shipped board's card is refused."""
    chosen = platform or board.platform
    if not chosen:
        raise FannsError(
            f"board {board.name} has no Vitis platform in its board file",
            hint=(
                "pass --platform NAME (the Vitis platform installed "
                "for the board), or add `platform:` to the board file"
            ),
        )
    what = "--platform" if platform else f"platform of board {board.name}"
    chosen = check_platform(chosen, what)
    other = platform_board(chosen, board) if platform else None
    if other is not None:
        mine = f"its board file's is {board.platform}" if board.platform else "its board file names none"
        raise FannsError(
            f"--platform {chosen}: a platform of board {other}, not of {board.name} (the design's board)",
            hint=f"pass --board {other} for a {other} project, or a Vitis platform of the {board.name} ({mine})",
        )
    return chosen
