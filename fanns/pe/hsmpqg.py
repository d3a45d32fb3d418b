"""HSMPQG: hybrid sorting, merging and priority queue group (FANNS 6.4.1.2 option 2, Fig. 6.6).

Why: HPQ needs two level-1 queues per input stream. When many streams (z) must yield few results
(s < z), HSMPQG first reduces the z keys of every cycle to their s smallest with comparator
networks, so only s streams reach the queues: an HPQ over s streams instead of z.

Datapath per cycle (one key from each of the z streams):
  1. ceil(z/l) bitonic sorting networks of width l, the smallest power of two >= s; the last
     one's spare inputs are dummy streams tied to the sentinel (which removes their logic);
  2. a tree of bitonic partial mergers, each keeping the l smallest of two sorted l-arrays (an
     odd array waits in delay registers), ending in the l smallest keys of the cycle, sorted;
  3. the first s of them go, one per stream, to an HPQ with z = s streams and length s
     (`fanns.pe.hpq`), which emits the s smallest keys of the query, ascending.
Steps 1-2 are one comparator network (`fanns.engines.cmpnet`), simplified for the dummy inputs and
pruned to the s outputs used; every stage is a register stage.

Interface (the same as HPQ, so the two are interchangeable): input streams `i0` .. `i{z-1}` and
output stream `o`, all {key, last}. Every stream carries each query (at least one key) framed by
`last`; streams may differ in length: a stream that has delivered its `last` feeds the sentinel
until all streams have. The join takes one key from every unfinished stream per cycle.

Timing of one query whose longest stream has N keys (streams start together, no bubbles, output
always ready), from the first accepted key to the last output (inclusive): II = 1 and
    L = D + L_hpq(z=s, s),   D = log2(l)(1+log2(l))/2 + ceil(log2(ceil(z/l)))·(1 + log2(l))
(D network stages; L_hpq = 4s² + 3s - 2 from `fanns.pe.hpq`). Exact (checked in simulation).
Valid only for s < z: with s >= z the networks cannot discard a key per cycle (use HPQ).

Back to back, a beat leaves the network only when all s HPQ streams have taken their key, so the
next query enters once HPQ stream s-1 restarts, 4s² - 1 cycles into the level-2 collection
(HPQ alone lets its streams restart one by one). Consecutive queries of N keys per stream then
start level-2 collection
    interval(N) = 4s² + s - 2 + max(N, s)
cycles apart, and Q queries take cycles(N) + (Q - 1)·interval(N). Exact (checked in simulation).
The join already moves the streams together; for `fanns.model.ivfpq.selk` every stream may
restart `stream_restart(j)` = 4s² - 1 cycles into the collection and is due `stream_due(j)` = -s
(its last key s cycles before the next collection), level 2 bounding the interval at
`min_interval()` = 4s² + 2s - 2; with N keys per stream these give `interval(N)`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.cmpnet import (
    Network,
    bitonic_sorter,
    build_side,
    build_stages,
    check_keys,
    merge_tree,
    network_features,
)
from fanns.numerics import sentinel
from fanns.pe.base import PE
from fanns.pe.hpq import Hpq
from fanns.pe.systolic_pq import key_stream


@lru_cache(maxsize=64)
def _sorters_and_merge(l: int, sorters: int, s: int) -> Network:
    """`sorters` bitonic sorters of width l beside each other and their merge tree, outputs
    0..s-1: shared by every z with this l, sorter count and s (the DSE asks for many)."""
    return Network.beside([bitonic_sorter(l)] * sorters).then(merge_tree(sorters, l)).pruned(range(s))


@lru_cache(maxsize=16)  # built once for features, latency and the model (the DSE asks for all three)
def _sort_merge_network(z: int, s: int, l: int, sorters: int) -> Network:
    """`_sorters_and_merge` with inputs z.. tied off (the network of `Hsmpqg.network`). The tie-off
    walks only the wires the s outputs need, and pruning again drops what it made unneeded: the
    same network as tying off the whole one and pruning once (`tests/pe/test_hsmpqg.py`)."""
    net = _sorters_and_merge(l, sorters, s)
    return net.with_sentinel_inputs(range(z, sorters * l)).pruned(range(s))


@dataclass(frozen=True)
class Hsmpqg(PE):
    z: int = 36
    s: int = 10
    key_bits: int = 64

    name: ClassVar[str] = "hsmpqg"
    summary: ClassVar[str] = (
        "sort-merge-queue selection: s smallest of z streams via bitonic networks and an HPQ over s streams"
    )
    timing_formula: ClassVar[str] = (
        "II = 1 (per stream); L = D + L_hpq(z=s, s), "
        "D = log2(l)(1+log2 l)/2 + ceil(log2 ceil(z/l))(1+log2 l), l = 2^ceil(log2 s)"
    )
    hls_header: ClassVar[str] = "hsmpqg.h"
    hls_call: ClassVar[str] = "fanns::hsmpqg<{z}, {s}, {key_bits}>"
    testbench: ClassVar[str] = "tb_hpq"  # the HPQ bench: same streams, same contract, model `select`
    calibration_points: ClassVar[tuple] = (
        {"z": 2, "s": 1, "key_bits": 64},
        {"z": 6, "s": 2, "key_bits": 64},
        {"z": 8, "s": 1, "key_bits": 52},
        {"z": 7, "s": 3, "key_bits": 64},
        {"z": 16, "s": 4, "key_bits": 40},
        {"z": 12, "s": 6, "key_bits": 52},
        {"z": 36, "s": 4, "key_bits": 64},
        {"z": 20, "s": 10, "key_bits": 64},
        {"z": 33, "s": 8, "key_bits": 24},
        {"z": 80, "s": 2, "key_bits": 52},
        {"z": 48, "s": 10, "key_bits": 32},
    )

    def validate(self) -> None:
        self.require(
            1 <= self.key_bits <= 64,
            f"key_bits={self.key_bits} out of range 1..64",
            "keys are (dist << 32) | id, at most 64 bits",
        )
        self.require(1 <= self.s <= 256, f"s={self.s} results out of range 1..256")
        self.require(self.z <= 1024, f"z={self.z} input streams out of range (at most 1024)")
        self.require(
            self.s < self.z,
            f"s={self.s} results from z={self.z} streams: HSMPQG needs s < z",
            "with s >= z the sorting networks cannot discard any key per cycle; use the hpq PE",
        )

    # -- structure ------------------------------------------------------------------------------
    @property
    def l(self) -> int:
        """Sorting width: the smallest power of two >= s."""
        return 1 << (self.s - 1).bit_length()

    @property
    def sorters(self) -> int:
        return math.ceil(self.z / self.l)

    @property
    def merge_levels(self) -> int:
        return math.ceil(math.log2(self.sorters)) if self.sorters > 1 else 0

    def network(self) -> Network:
        """Sorters beside each other, the merge tree, dummy inputs tied off, outputs 0..s-1."""
        return _sort_merge_network(self.z, self.s, self.l, self.sorters)

    def hpq(self) -> Hpq:
        """The queue stage: an HPQ over the s network outputs."""
        return Hpq(z=self.s, s=self.s, key_bits=self.key_bits)

    # -- reference model ------------------------------------------------------------------------
    def beats(self, streams: Sequence[Sequence[int]]) -> np.ndarray:
        """The network inputs of one query [N, sorters·l]: finished streams and dummies hold the sentinel."""
        self.require(len(streams) == self.z, f"expected {self.z} streams, got {len(streams)}")
        keys = [
            check_keys(np.asarray(k, dtype=np.uint64), self.key_bits, f"{self.name} stream {j}")
            for j, k in enumerate(streams)
        ]
        self.require(
            all(len(k) >= 1 for k in keys),
            "every stream needs at least one key per query",
            "pad empty streams with the sentinel",
        )
        n = max(len(k) for k in keys)
        out = np.full((n, self.sorters * self.l), sentinel(self.key_bits), dtype=np.uint64)
        for j, k in enumerate(keys):
            out[: len(k), j] = k
        return out

    def per_cycle(self, streams: Sequence[Sequence[int]]) -> np.ndarray:
        """The s smallest keys of every cycle of one query, ascending [N, s] (what enters the HPQ)."""
        return self.network().evaluate(self.beats(streams), self.key_bits)

    def select(self, streams: Sequence[Sequence[int]]) -> np.ndarray:
        """The s keys the hardware emits for one query, ascending (bit-exact model)."""
        lanes = self.per_cycle(streams)
        return self.hpq().select([lanes[:, j] for j in range(self.s)])

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return self.network().depth + self.hpq().latency()

    def ii(self) -> int:
        return 1

    def interval(self, n: int) -> int:
        """Cycles between consecutive queries of n keys per stream, back to back (docstring)."""
        return 4 * self.s * self.s + self.s - 2 + max(n, self.s)

    def stream_restart(self, j: int) -> int:
        """Cycles into the level-2 collection at which the streams may start the next query."""
        return 4 * self.s * self.s - 1

    def stream_due(self, j: int) -> int:
        """A stream's last key is due s cycles before the next collection starts (docstring)."""
        return -self.s

    def min_interval(self) -> int:
        return 4 * self.s * self.s + 2 * self.s - 2

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        """Network comparators, selects and registers, the join multiplexers, and the HPQ's own features."""
        net = network_features(self.network(), self.key_bits)
        hpq = self.hpq().resource_features()
        return {
            "cmp*key_bits": net["cmp*key_bits"],
            "sel*key_bits": net["sel*key_bits"],
            "reg*key_bits": net["reg*key_bits"],
            "z*key_bits": self.z * self.key_bits,
            **{f"hpq:{k}": v for k, v in hpq.items()},
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return HsmpqgComponent(self)


class HsmpqgComponent(wiring.Component):
    """Amaranth implementation of `Hsmpqg`: join, comparator network, fork, HPQ.

    The join forms a beat when every unfinished stream has a key; the network advances while its
    output register is free; the fork hands the s keys of a beat to the s HPQ streams, each as
    soon as that stream is ready, and frees the register when all have taken theirs.
    """

    def __init__(self, pe: Hsmpqg):
        self.pe = pe
        ports = {f"i{j}": In(key_stream(pe.key_bits)) for j in range(pe.z)}
        super().__init__(ports | {"o": Out(key_stream(pe.key_bits))})

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        m.submodules.hpq = hpq = pe.hpq().component()
        net = pe.network()
        top = sentinel(pe.key_bits)
        srcs = [getattr(self, f"i{j}") for j in range(pe.z)]
        en = Signal()

        # Join: one key from every stream that has not yet delivered its `last`.
        done = [Signal(name=f"done{j}") for j in range(pe.z)]
        have, ends, take = Signal(), Signal(), Signal()
        m.d.comb += [
            have.eq(Cat(d | src.valid for d, src in zip(done, srcs)).all()),
            ends.eq(Cat(d | src.payload.last for d, src in zip(done, srcs)).all()),
            take.eq(have & en),
        ]
        for d, src in zip(done, srcs):
            m.d.comb += src.ready.eq(take & ~d)
            with m.If(take):
                m.d.sync += d.eq(~ends & (d | src.payload.last))
        keys = [Mux(d, top, src.payload.key) for d, src in zip(done, srcs)]
        keys += [keys[0]] * (net.width - pe.z)  # dummy inputs: tied to the sentinel inside the network

        outs = build_stages(m, en, net, keys, pe.key_bits, "net")
        side = build_side(m, en, net.depth, Cat(take, ends), "net")

        # Fork: each HPQ stream takes its key once; the beat retires when all have.
        lanes = [getattr(hpq, f"i{j}") for j in range(pe.s)]
        taken = [Signal(name=f"taken{j}") for j in range(pe.s)]
        for lane, t, key in zip(lanes, taken, outs):
            m.d.comb += [lane.valid.eq(side[0] & ~t), lane.payload.key.eq(key), lane.payload.last.eq(side[1])]
        m.d.comb += en.eq(~side[0] | Cat(t | lane.ready for t, lane in zip(taken, lanes)).all())
        for lane, t in zip(lanes, taken):
            m.d.sync += t.eq(Mux(en, 0, t | lane.ready))

        wiring.connect(m, hpq.o, wiring.flipped(self.o))
        return m
