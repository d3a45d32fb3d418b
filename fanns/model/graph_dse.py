"""Design-space exploration of graph-search (Falcon / DST) accelerators.

(work in progress: the memory plan only)
"""
from __future__ import annotations

from fanns.arch.graph_design import GraphMemory
from fanns.boards import Board
from fanns.errors import FannsError


def memory_plan(board: Board, channels: int | None = None, outstanding: int = 64) -> GraphMemory:
    """The graph's channels: the first `channels` of the board's first memory group (default: the
    largest power of two available); the host I/O buffers share channel 0."""
    mem = board.memory[0]
    if channels is None:
        channels = 1 << (mem.count.bit_length() - 1)
    if not 1 <= channels <= mem.count:
        raise FannsError(f"{channels} graph channels: {board.name} has {mem.count} {mem.kind} channels")
    return GraphMemory(kind=mem.kind, channels=tuple(range(channels)), io_channel=0, port_bits=mem.port_bits, outstanding=outstanding)
