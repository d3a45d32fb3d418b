"""The road from a generated project to its board, shared by both accelerators and both faces:
v++ on a Vitis platform (Alveo; a Zynq board with an embedded Vitis platform asked for), or a
Vivado block design (a Zynq board without one).

Why here: the platform a project links for is chosen once, from `--platform` and the board file,
and checked to belong to the board — a platform of another card would give a project whose
build files, memory banks and clock are the board's but whose link targets a different card.
The kernel arguments, memory banks and HLS header closure both HLS faces share live here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fanns.boards import HOST_MEMORY, Board, list_boards
from fanns.checks import check_platform
from fanns.errors import FannsError
from fanns.paths import shared_dir

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

VITIS_MEMORY = {"hbm": "HBM", "ddr": "DDR", "ddr4": "DDR", "pl-ddr4": "DDR", HOST_MEMORY: "HOST"}
"""Board memory groups that Vitis connectivity can address (`sp=port:HBM[i]` / `DDR[i]`), and host
memory (`HOST[0]`: the lists of a host-memory design, docs/host_tier.md)."""


@dataclass
class KernelArg:
    """A pointer argument of an HLS kernel (IVF-PQ or graph): its beat type, memory bank and why."""

    name: str
    beat: str
    const: bool
    memory: str
    channel: int
    why: str
    image: str | None = None
    use: str = "io"

    @property
    def bundle(self) -> str:
        """One m_axi bundle per memory channel; host memory gets one per argument (several kernel
        ports on HOST[0], as Vitis' hostmemory_test example connects `sp=...input:HOST[0]` and
        `sp=...output:HOST[0]`; UG1393 "Mapping Kernel Ports to Memory": up to 15 interfaces a bank)."""
        which = self.name if self.memory == HOST_MEMORY else self.channel
        return re.sub(r"[^a-z0-9]", "_", f"{self.memory}_{which}")

    @property
    def vitis_bank(self) -> str:
        """The bank as Vitis connectivity names it (HBM[i], DDR[i]); a Zynq PS memory, reached
        through a block design instead, keeps its group name (ps-ddr4[i])."""
        return f"{VITIS_MEMORY.get(self.memory, self.memory)}[{self.channel}]"

    def record(self) -> dict:
        """The argument's entry in project.json, the same for IVF-PQ and graph kernels so one host driver binds both."""
        return {
            "name": self.name,
            "bundle": self.bundle,
            "memory": self.memory,
            "channel": self.channel,
            "bank": self.vitis_bank,
            "image": self.image,
        }


def vitis_memory(kind: str) -> str:
    """The Vitis connectivity name of a board memory group, or a FannsError naming the groups it has."""
    if kind not in VITIS_MEMORY:
        raise FannsError(
            f"memory group {kind!r} cannot be connected by a Vitis connectivity file",
            hint=f"the HLS project supports {', '.join(sorted(VITIS_MEMORY))} channels (Alveo boards)",
        )
    return VITIS_MEMORY[kind]


def header_closure(names: list[str]) -> list[str]:
    """The HLS headers `names` need, following their `#include "x.h"` lines, sorted."""
    folder = shared_dir("hls")
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += re.findall(r'#include "([^"]+)"', (folder / name).read_text())
    return sorted(seen)


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
