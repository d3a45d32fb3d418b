"""The prefetch command of a host-memory design: the driver's plan as descriptors the accelerator runs.

Why in the driver, not on chip: the eviction policy (`fanns.model.ivfpq.prefetch.RingCache`) needs a
FIFO and a write pointer; the hardware needs only a descriptor walker, a copy loop per PQ channel and
the cell -> location table (docs/host_tier.md, "The faces"). So the host plans every prefetch in the
ring's units — beats of the PQ port, one offset for every channel, a list taking `list_beats[cell]`
(`fanns.images.ivfpq.cache_list_beats`) — and sends descriptors of four little-endian uint32 words
`(cell, op, at, source)`, executed in order:

* `EVICT` (0): the table entry of `cell` becomes invalid;
* `FROM_HOST` (1): copy each channel's share of the list from host memory to the cache region at
  `at`, then table[cell] = at;
* `MOVE` (2): the same copy from the cache region at `source` (at <= source or no overlap), then
  table[cell] = at.

A placement's evictions come before its copy. The driver mirrors the table (`CachePlan.table`)
from the descriptors it sent, so it knows which probed cells hit without asking the device.

Pinned lists (`PqHostTier.pinned`): the same FROM_HOST descriptors, sent once after each index
load (`CachePlan.reset`), place them at fixed offsets at the end of the region; the ring runs in
the beats before them, a prefetch skips them and nothing evicts them, so no hardware knows they
are special.
"""

from __future__ import annotations

import numpy as np

from fanns.errors import FannsError
from fanns.model.ivfpq.prefetch import PinnedRing, RingCache

EVICT, FROM_HOST, MOVE = 0, 1, 2
"""The descriptor ops (the `op` word)."""
DESCRIPTOR_WORDS = 4


def prefetch_descriptors(cache: PinnedRing, order: np.ndarray, budget_beats: float) -> np.ndarray:
    """[n, 4] uint32 descriptors (cell, op, at, source) of one `PinnedRing.plan` over `order` (cells,
    nearest first) within `budget_beats`; `cache` (in beats) is advanced."""
    rows = []
    for cell, at, source, evicted in cache.plan(order, budget_beats):
        rows += [(old, EVICT, 0, 0) for old in evicted]
        rows.append((cell, FROM_HOST, at, 0) if source is None else (cell, MOVE, at, source))
    return np.array(rows, dtype="<u4").reshape(-1, DESCRIPTOR_WORDS)


def apply_table(table: dict[int, int], descriptors: np.ndarray) -> dict[int, int]:
    """The location table after `descriptors` (what the accelerator's on-chip table does)."""
    for cell, op, at, _source in np.asarray(descriptors, dtype=np.int64).tolist():
        if op == EVICT:
            table.pop(cell, None)
        elif op in (FROM_HOST, MOVE):
            table[cell] = at
        else:
            raise FannsError(f"prefetch descriptor of cell {cell}: unknown op {op}")
    return table


def apply_regions(
    descriptors: np.ndarray, host: list[np.ndarray], caches: list[np.ndarray], tables: list[np.ndarray], port_bytes: int
) -> None:
    """Run the copies of `descriptors` on array models of the memories: per PQ channel c its host
    image `host[c]` and cache region `caches[c]` (uint8), and its list table `tables[c]` [nlist, 4]
    (start_beat, beats, ...): the copy loop of each channel, beat by beat, forward."""
    for cell, op, at, source in np.asarray(descriptors, dtype=np.int64).tolist():
        if op == EVICT:
            continue
        for img, cache, table in zip(host, caches, tables):
            start, beats = int(table[cell, 0]), int(table[cell, 1])
            src = (img, start) if op == FROM_HOST else (cache, source)
            for b in range(beats):
                cache[(at + b) * port_bytes : (at + b + 1) * port_bytes] = src[0][
                    (src[1] + b) * port_bytes : (src[1] + b + 1) * port_bytes
                ]


class CachePlan:
    """The driver's side of one device's cache: `cache_beats` beats a channel, the lists'
    `list_beats`, the lists `pinned` at the region's end for good and the ring in the rest
    (`PinnedRing`), and the mirrored location table; `bytes_per_beat` is a beat of every channel
    together (channels x port bytes), how a byte budget becomes beats. The plan starts as a device
    just loaded: the pinned lists placed (`reset`)."""

    def __init__(self, cache_beats: int, list_beats: np.ndarray, bytes_per_beat: int, pinned=()):
        self.cache_beats = int(cache_beats)
        self.list_beats = np.asarray(list_beats, dtype=np.int64)
        self.bytes_per_beat = int(bytes_per_beat)
        self.pinned_cells = tuple(int(c) for c in pinned)
        self.last = np.zeros((0, DESCRIPTOR_WORDS), dtype="<u4")  # the last prefetch's descriptors
        self.reset()

    @property
    def ring(self) -> RingCache:
        return self.cache.ring

    @property
    def pinned(self) -> dict[int, int]:
        """cell -> offset of the pinned lists (empty lists are never cached)."""
        return self.cache.pinned

    def reset(self) -> np.ndarray:
        """An index load empties the device's table: the ring starts over and the pinned lists are
        placed again; returns their FROM_HOST descriptors (what the driver sends after a load)."""
        self.cache = PinnedRing(
            self.cache_beats, self.list_beats, self.pinned_cells, "stages.pq_dist.host_tier.pinned (in beats)"
        )
        rows = [(cell, FROM_HOST, at, 0) for cell, at in self.cache.pinned.items()]
        desc = np.array(rows, dtype="<u4").reshape(-1, DESCRIPTOR_WORDS)
        self.table = apply_table({}, desc)
        return desc

    def prefetch(self, order: np.ndarray, budget_bytes: float) -> np.ndarray:
        """The descriptors of one prefetch of `order` within `budget_bytes` (pinned cells skipped);
        the mirror follows them."""
        desc = prefetch_descriptors(self.cache, order, budget_bytes / self.bytes_per_beat)
        apply_table(self.table, desc)
        self.last = desc
        return desc

    def cached(self, cells: np.ndarray) -> np.ndarray:
        """bool, the shape of `cells`: which cells the (mirrored) table holds; -1 (no cell) never."""
        flat = [int(c) in self.table for c in np.ravel(cells)]
        return np.array(flat, dtype=bool).reshape(np.shape(cells))
