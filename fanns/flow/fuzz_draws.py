"""The draws of the IVF-PQ design fuzz (`fanns.flow.design_fuzz`): (board, dataset shape, goal,
clock, cap) from a seed, a corner of the option space (`draw_corner_case`) or a host-memory draw
(`draw_host_case`), and the board a draw runs on (`case_board`).

Why a host-memory draw: the DSE keeps an index's lists in host memory only when no index fits the
board's memory (`fanns.model.ivfpq.host_cache.host_mode`), which no draw of a 2,500-vector set on a
shipped board reaches. A host draw runs on its board's file with every memory group cut to a few
channels holding together `MEMORY_SHARE` of the index's lists (`HOST_CHANNELS`, `host_board_spec`), so the
DSE's choice is a host-memory design, generated and checked as every other draw.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from fanns.boards import Board, load_board
from fanns.model.ivfpq.corners import CORNERS
from fanns.numerics import ID_BITS

BOARDS = ("u55c", "u250", "u280", "u50", "zcu104", "zcu102", "kv260", "pynq-z2")
"""Every built-in board (boards/*.yaml)."""

MAX_D = 2048
MAX_K = 1000
MAX_M = 128
"""Largest m drawn: codes up to 1024 bits, several memory beats on every board (m = 48..128 is
what 768-d embeddings use); BuildLUT's LUT FIFO takes m <= 255."""
BASE_VECTORS = 2500
"""Base vectors of a draw's dataset; a corner draw with more lists than a quarter of them gets four
per list (faiss's IVF trains at most N / 4 lists: nlist 1024 needs 4,096)."""


@dataclass(frozen=True)
class FuzzCase:
    """One draw of the design space."""

    seed: int
    board: str
    d: int
    m: int
    nlist: int
    k: int
    goal: str
    clock_mhz: float
    util: float
    opq: bool
    corner: str = ""
    """A corner of the option space (`fanns.model.ivfpq.corners.CORNERS`) built instead of the
    DSE's choice; "": the DSE's choice and its runners-up."""
    host: bool = False
    """A host-memory draw: the board's memory shrunk below the index (`case_board`), so the DSE
    keeps the lists in host memory with a prefetch cache on its PQ channels."""

    @property
    def label(self) -> str:
        return (
            f"#{self.seed} {self.board} d={self.d} m={self.m} nlist={self.nlist} {self.goal}"
            f"{' OPQ' if self.opq else ''} {self.clock_mhz:g} MHz cap {self.util:g}"
            f"{f' corner {self.corner}' if self.corner else ''}{' host memory' if self.host else ''}"
        )

    @property
    def folder(self) -> str:
        """The draw's work folder name: a corner or host draw and the plain draw of one seed run
        side by side (`run_draws`), and each empties its own folder first, so they must not share one."""
        return f"{'corner' if self.corner else 'host' if self.host else 'draw'}{self.seed}"


def _log_uniform(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def draw_case(seed: int, max_d: int = MAX_D, max_k: int = MAX_K) -> FuzzCase:
    """The draw of `seed`: d log-uniform in 1..max_d, m a divisor of d up to `MAX_M` (faiss's PQ needs
    d % m == 0; codes wider than a memory beat included),
    K log-uniform in 1..max_k, a recall goal low enough for a 2,500-vector synthetic set to reach.
    The fast test tier draws from a smaller box (small d and K build in seconds); the slow tier and
    `benchmarks/design_fuzz.py` from the whole space."""
    rng = np.random.default_rng(seed)
    board = str(rng.choice(BOARDS))
    d = _log_uniform(rng, 1, max_d)
    divisors = [m for m in range(1, min(d, MAX_M) + 1) if d % m == 0]
    m = int(rng.choice(divisors))
    nlist = int(rng.choice([4, 8, 16, 32]))
    k = _log_uniform(rng, 1, max_k)
    goal = f"R@{k}={rng.uniform(0.05, 0.35):.2f}" if rng.random() < 0.5 else f"1-R@{k}={rng.uniform(0.1, 0.5):.2f}"
    clock = float(round(rng.uniform(100, 300)))
    util = round(float(rng.uniform(0.3, 0.9)), 2)
    opq = bool(rng.random() < 0.25 and d >= 2)
    return FuzzCase(seed, board, d, m, nlist, k, goal, clock, util, opq)


CORNER_NLISTS = (64, 128, 256, 512, 1024)
"""nlist of a corner draw: up to 1024 IVFDist PEs (one cell each) and SelCells streams."""
LARGE_BOARDS = ("u55c", "u250", "u280", "u50")
"""The Alveo cards, where the corners' PE counts are largest: three corner draws in four use one."""


def draw_corner_case(seed: int, max_d: int = MAX_D, max_k: int = MAX_K) -> FuzzCase:
    """The corner draw of `seed`: the shape, goal, clock and cap of `draw_case(seed, ...)` with the
    corner `CORNERS` lists at position seed mod their count (so consecutive seeds visit every
    corner), nlist from `CORNER_NLISTS`, and OPQ exactly for the OPQ corner."""
    case = draw_case(seed, max_d, max_k)
    names = sorted(CORNERS)
    corner = names[seed % len(names)]
    rng = np.random.default_rng([seed, 1])
    nlist = int(rng.choice(CORNER_NLISTS))
    board = str(rng.choice(LARGE_BOARDS)) if rng.random() < 0.75 else case.board
    opq = CORNERS[corner].group == "opq" and case.d >= 2
    return dataclasses.replace(case, board=board, nlist=nlist, opq=opq, corner=corner)


def base_vectors(case: FuzzCase) -> int:
    """The base vectors of the draw's dataset (`BASE_VECTORS`, or four per list); a host draw's
    lists are its board's channels of `channel_floor` bytes over `MEMORY_SHARE` (`host_board_spec`)."""
    n = max(BASE_VECTORS, 4 * case.nlist)
    if case.host:
        need = host_channels(case.board) * channel_floor(case) / MEMORY_SHARE
        n = max(n, math.ceil(need / (case.m + ID_BITS // 8)))
    return n


HOST_BOARDS = ("u55c", "u250", "u280")
"""The built-in boards whose files give a host link (`host:`): those a host-memory draw uses."""
HOST_CHANNELS = 3
"""Channels of each memory group of a host draw's board (tests/model/test_dse_cli.py's host-memory
U55C has 3 of 64 kB): the DSE's PQ channel counts stay small, and so do the simulated memories."""
HOST_MAX_D = MAX_M
"""Largest d of a host draw, whose m is d: the board's channels must hold the I/O images (the
codebook, 256 x d elements, is the largest) while all of them hold less than the lists, n x (m + 4)
bytes; one-element sub-vectors make the lists largest beside the codebook."""
MEMORY_SHARE = 0.75
"""The share of a host draw's index lists its board's memory holds: less than all, so the DSE keeps
the lists in host memory; not much less, so the PQ channels hold a cache of a few queries' lists
and the DSE's cache curve (up to 16 x a query's probed bytes) is not cut at the channels' whole
capacity (at half, draw 0's U280 cache took all of it)."""
IO_BYTES = 64 * 1024
"""Room on a host draw's I/O channel beside the images for the driver's I/O buffers: a 4 kB page
each for queries, results, cells and seeds, the images' pages (`fanns.driver.ivfpq.plan.PAGE`) and a
batch (a channel of twice the codebook and no more left none on draw 0's U280)."""


def draw_host_case(seed: int, max_d: int = MAX_D, max_k: int = MAX_K) -> FuzzCase:
    """The host-memory draw of `seed`: the shape (d up to `HOST_MAX_D`, m = d), goal, clock and cap
    of `draw_case(seed, ...)` on a board of `HOST_BOARDS` whose memory `case_board` shrinks below
    the index."""
    case = draw_case(seed, min(max_d, HOST_MAX_D), max_k)
    board = str(np.random.default_rng([seed, 2]).choice(HOST_BOARDS))
    return dataclasses.replace(case, board=board, m=case.d, host=True)


def rom_bytes(case: FuzzCase) -> int:
    """Bytes of the codebook, the largest image on the I/O channel: 256 x d elements of at most 4
    bytes (`fanns.images.ivfpq_layout.elem_dtype`); nlist <= 32 centroids and a d x d OPQ matrix of
    2-byte elements are smaller."""
    return 256 * case.d * 4


def channel_floor(case: FuzzCase) -> int:
    """The least a host draw's channel holds: twice `rom_bytes` (padded sub-vectors) and `IO_BYTES`."""
    return 2 * rom_bytes(case) + IO_BYTES


def host_channels(board: str) -> int:
    """Channels of a host draw's board: every memory group of `board` cut to `HOST_CHANNELS`."""
    return sum(min(g.count, HOST_CHANNELS) for g in load_board(board).memory)


def index_bytes(case: FuzzCase) -> int:
    """Bytes of the draw's index lists as the DSE counts them (`host_cache.index_bytes`): an m-byte
    code and an id per base vector."""
    return base_vectors(case) * (case.m + ID_BITS // 8)


def host_board_spec(case: FuzzCase) -> dict:
    """The board file of a host draw: its board's, every memory group cut to `HOST_CHANNELS`
    channels of equal size, together `MEMORY_SHARE` of the index's lists, so no index of the draw fits
    (`host_mode`), each at least `channel_floor` (`base_vectors`), so the I/O images and buffers fit;
    the host link and every other figure unchanged."""
    spec = dict(load_board(case.board).spec)
    groups = [dict(g, count=min(g["count"], HOST_CHANNELS)) for g in spec["memory"]]
    per_channel = int(MEMORY_SHARE * index_bytes(case) / host_channels(case.board))
    spec["memory"] = [dict(g, capacity_gb=per_channel / 2**30) for g in groups]
    spec["name"] = f"{case.board}-small"
    return spec


def case_board(case: FuzzCase, work: Path) -> Board:
    """The board a draw runs on: its built-in board, or for a host draw `host_board_spec` written
    to `work` (a design made for it carries the file's content)."""
    if not case.host:
        return load_board(case.board)
    path = Path(work) / f"{case.board}-small.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(host_board_spec(case), sort_keys=False))
    return load_board(str(path))
