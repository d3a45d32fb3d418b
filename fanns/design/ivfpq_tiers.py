"""Where an IVF-PQ design keeps its PQ-code lists besides its PQ channels: a fast tier of hot lists
(`PqTiers`), or host memory with an HBM cache (`PqHostTier`); both are fields of
`stages.pq_dist` (`fanns.design.ivfpq.PqDistStage`), split out of that module to keep it short.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from fanns.design.base import MAX_UNITS, check_int, fail, from_mapping


def _list_ids(where: str, ids: Any) -> None:
    if not isinstance(ids, tuple) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        fail(where, "must be a list of list ids")


@dataclass(frozen=True)
class PqTiers:
    """Tiered placement of the PQ codes: the lists `hot` (sorted list ids) live in the fast tier,
    `channels` channels of the board memory group `memory` (paired with the stage's channels:
    fast channel c feeds the same PEs as channel c); every other list stays on the stage's
    channels. The fast channels are read at the stage's `port_bits`, like the others. Chosen by
    `fanns.model.ivfpq.skew.place` from a query sample's access profile (`fanns.model.ivfpq.skew.with_tiers`)."""

    memory: str
    channels: int
    hot: tuple[int, ...]

    def validate(self, where: str, channels: int, nlist: int | None = None) -> None:
        if not isinstance(self.memory, str) or not self.memory:
            fail(f"{where}.memory", "must name a memory group of the board (e.g. hbm)")
        check_int(f"{where}.channels", self.channels, 1, MAX_UNITS)
        if self.channels != channels:
            fail(
                f"{where}.channels",
                f"is {self.channels}; the fast tier pairs one channel with each of the stage's {channels}",
                hint=f"set it to {channels}",
            )
        _list_ids(f"{where}.hot", self.hot)
        if list(self.hot) != sorted(set(self.hot)):
            fail(f"{where}.hot", "must be sorted and without repeats")
        if self.hot and (self.hot[0] < 0 or (nlist is not None and self.hot[-1] >= nlist)):
            fail(f"{where}.hot", f"list ids must lie in 0..{(nlist or 1) - 1}")

    def to_dict(self) -> dict:
        return {"memory": self.memory, "channels": self.channels, "hot": list(self.hot)}

    @classmethod
    def from_dict(cls, where: str, data: Any) -> PqTiers:
        t = from_mapping(cls, where, data)
        if not isinstance(t.hot, (list, tuple)):
            fail(f"{where}.hot", "must be a list of list ids")
        return dataclasses.replace(t, hot=tuple(t.hot))


@dataclass(frozen=True)
class PqHostTier:
    """The PQ-code lists in host memory with an HBM cache of `cache_bytes` (docs/host_tier.md, "The
    faces"): each PQ channel holds a cache region of `cache_beats` beats, written only by the
    prefetch command; a probed list is read from the cache where the on-chip location table has it,
    else from host memory. The lists `pinned` (the hottest by the workload's access profile) stay
    in a region at the end of every channel's cache for good, in this order, placed by the driver
    after each index load; the prefetched ring is the rest (`fanns.model.ivfpq.prefetch.PinnedRing`).
    Whether their beats fit is checked where the list sizes are known (the packer,
    `fanns.images.ivfpq.pack`). Chosen by the DSE (`fanns.model.ivfpq.host_cache`) for an index
    larger than the board's memory."""

    cache_bytes: int
    pinned: tuple[int, ...] = ()

    def validate(self, where: str, nlist: int | None = None) -> None:
        check_int(f"{where}.cache_bytes", self.cache_bytes, 1)
        _list_ids(f"{where}.pinned", self.pinned)
        if len(set(self.pinned)) != len(self.pinned):
            twice = sorted({i for i in self.pinned if self.pinned.count(i) > 1})
            fail(f"{where}.pinned", f"names list {twice[0]} more than once", hint="name each pinned list once")
        bad = [i for i in self.pinned if i < 0 or (nlist is not None and i >= nlist)]
        if bad:
            fail(f"{where}.pinned", f"list id {bad[0]} is not a list of the index", hint=f"use 0..{(nlist or 1) - 1}")

    def cache_beats(self, channels: int, port_bits: int) -> int:
        """Beats of each PQ channel's cache region: the cache split evenly over the channels."""
        return self.cache_bytes // (channels * (port_bits // 8))

    def to_dict(self) -> dict:
        # a design without pinned lists keeps the schema it always had
        return {"cache_bytes": self.cache_bytes, **({"pinned": list(self.pinned)} if self.pinned else {})}

    @classmethod
    def from_dict(cls, where: str, data: Any) -> PqHostTier:
        t = from_mapping(cls, where, data, optional=("pinned",))
        if not isinstance(t.pinned, (list, tuple)):
            fail(f"{where}.pinned", "must be a list of list ids")
        return dataclasses.replace(t, pinned=tuple(t.pinned))
