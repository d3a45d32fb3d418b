"""The memory side of the IVF-PQ model: channels at the accelerator clock, how PQ codes and ids
are laid out in beats (`fanns.design.ivfpq_stages.Packing`, the rule the packer `fanns.images.ivfpq` implements), and
the per-query beats and items each PQDist PE gets from the measured probes.

`MEM_LATENCY_CYCLES` is an assumption (see there); the AXI reader configuration is an
architecture choice of docs/ivfpq_architecture.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from fanns.boards import Board
from fanns.design.ivfpq_stages import Packing
from fanns.pe.axi_reader import AxiReader

MEM_LATENCY_CYCLES = 100
"""Assumed read latency of a memory channel in kernel cycles (not in board files, not measured
here; the same assumption as the Falcon model). It sets the AXI readers' outstanding window and
adds to latencies; with READER_OUTSTANDING * READER_BURST >= latency + burst + 3 (AxiReader
docstring) it does not limit throughput."""
READER_BURST, READER_OUTSTANDING = 64, 4
"""AXI read master configuration of every memory channel (architecture choice: a 256-beat window)."""
ADDR_BITS = 64


@dataclass(frozen=True)
class Memory:
    """One group of board memory channels as the accelerator sees it at its clock."""

    kind: str
    count: int
    capacity_bytes: int
    port_bits: int
    beats_per_cycle: float

    @property
    def port_bytes(self) -> int:
        return self.port_bits // 8


def memories(board: Board, clock_mhz: float) -> tuple[Memory, ...]:
    """The board's memory groups: a channel delivers at most one port-wide beat per cycle, no more
    than its bandwidth at this clock, and no more than the AXI reader sustains (`words_per_cycle`)."""
    out = []
    for g in board.memory:
        reader = channel_reader(g.port_bits)
        bw = g.bandwidth_gbps * 1e9 / (clock_mhz * 1e6) / (g.port_bits / 8)
        rate = min(1.0, bw, reader_rate(reader))
        out.append(Memory(g.kind, g.count, g.capacity_bytes, g.port_bits, rate))
    return tuple(out)


@cache  # one reader per port width: the DSE prices it for every channel count it tries
def channel_reader(port_bits: int) -> AxiReader:
    return AxiReader(data_width=port_bits, addr_width=ADDR_BITS, max_burst=READER_BURST, outstanding=READER_OUTSTANDING)


def reader_lead(port_bits: int, rate: float) -> float:
    """Channel cycles a PQ channel's reader can run ahead of its PEs: the beats its data FIFO holds
    (`AxiReader.fifo_depth`, `READER_OUTSTANDING` bursts) at the channel's `rate` beats a cycle."""
    return channel_reader(port_bits).fifo_depth / rate


@cache
def reader_rate(reader: AxiReader) -> float:
    return reader.words_per_cycle(MEM_LATENCY_CYCLES)


@dataclass(frozen=True)
class Probes:
    """The measured probes `sizes` [nq, nprobe] (probed cell sizes, probe order), indexed by their
    distinct values so per-size work is computed once."""

    sizes: np.ndarray
    values: np.ndarray
    inverse: np.ndarray

    @classmethod
    def of(cls, sizes: np.ndarray) -> Probes:
        sizes = np.asarray(sizes, dtype=np.int64)
        values, inverse = np.unique(sizes, return_inverse=True)
        return cls(sizes, values, inverse.reshape(sizes.shape))


@dataclass(frozen=True)
class PqShares:
    """Per sample query and probe, one PQDist PE's share when each list is split over `pes` PEs."""

    items: np.ndarray  # [nq, nprobe] items (codes + padding) per probed cell
    cell_beats: np.ndarray  # [nq, nprobe] memory beats (codes and ids) of the PE's share of each probed cell
    beats: np.ndarray  # [nq] memory beats of the PE's shares of a query's cells

    @property
    def items_per_query(self) -> np.ndarray:
        """Keys the PE emits per query = items on each SelK input stream."""
        return self.items.sum(1)


def pq_shares(m: int, probes: Probes, pes: int, port_bits: int) -> PqShares:
    packing = Packing(m, port_bits)
    items = packing.items(probes.values, pes)[probes.inverse]
    cell_beats = packing.beats(probes.values, pes)[probes.inverse].astype(np.float64)
    return PqShares(items, cell_beats, cell_beats.sum(1))


LIST_TABLE_BYTES = 16
"""Per list and PQ channel: the packer's list-table entry, four uint32 (docs/ivfpq_architecture.md)."""


def pq_channel_bytes(nlist: int, share_beats: int, busiest: int, port_bits: int) -> int:
    """Bytes the busiest PQ-code channel stores: its list table, then its PEs' shares (codes and
    ids) of every list; `share_beats` is one PE's beats over all lists."""
    port_bytes = port_bits // 8
    table = -(-(nlist * LIST_TABLE_BYTES) // port_bytes) * port_bytes
    return table + busiest * share_beats * port_bytes


def index_bytes_per_channel(m: int, list_sizes: np.ndarray, pes: int, busiest: int, port_bits: int) -> int:
    return pq_channel_bytes(
        len(list_sizes), int(Packing(m, port_bits).beats(list_sizes, pes).sum()), busiest, port_bits
    )
