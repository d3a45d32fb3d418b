"""Bloom filter PE: the visited-node filter of graph search (Falcon 7.3.2.2).

Why a Bloom filter: a visited array in off-chip memory costs a read and a write per checked node;
a Bloom filter answers "maybe visited" on chip, one node id per cycle, at the price of rare false
positives (an unvisited node reported as visited, which the traversal then skips).

Organisation (a *partitioned* Bloom filter, so that h hashes cost one memory access each per
cycle): h hash units, unit i owning its own bank of P = b/h bits (P a power of two, one block RAM
array of P/w words of w bits). Unit i hashes the 32-bit node id with MurmurHash2 and its own seed
``seed_i = (seed + i * 0x9E3779B9) mod 2**32`` and uses the low log2(P) bits of the hash as the
bit index in its bank. A lookup is a *test-and-set*: the id is reported "maybe visited" when all h
bits were already set, and all h bits are set afterwards. After n distinct ids the false-positive
rate of a fresh id is (1 - (1 - 1/P)**n)**h, i.e. (1 - e**(-h n / b))**h (Falcon 7.3.2.2, [39]).

Streams: `i` carries {id, last}; `o` carries {id, visited, last}, in input order. The `last` id of
a query makes the filter clear itself afterwards: it writes zero to all P/w words of every bank
(in parallel across banks), one word per cycle, and accepts no id meanwhile.

Hash pipeline: MurmurHash2 of a 4-byte key is ``k = ((id*M) ^ (id*M >> 24)) * M``,
``x = ((seed ^ 4) * M) ^ k``, ``x ^= x >> 13; x *= M; x ^= x >> 15`` (M = 0x5bd1e995, all mod
2**32). The seed-independent part `k` is shared by the h units; each unit adds one multiplier.

Timing (exact, checked in simulation): II = 1 id per cycle; L = 6 (cycles from the one accepting
an id to the one presenting its result, inclusive: accept, two shared multiply stages, the per-unit
multiply stage that also addresses the block RAM, the test-and-set stage, the output register).
Clearing after a query takes P/w cycles: the first id of the next query is accepted
`L - 1 + P/w` cycles after the last id of the previous one (`query_gap()`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Cat, Const, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from fanns.pe.base import PE

MURMUR_M = 0x5BD1E995
SEED_STEP = 0x9E3779B9
MASK32 = 0xFFFFFFFF


def murmur2(key: bytes, seed: int) -> int:
    """MurmurHash2 (Austin Appleby's 32-bit version, little-endian blocks) of `key`."""
    h = (seed ^ len(key)) & MASK32
    n4 = len(key) // 4 * 4
    for i in range(0, n4, 4):
        k = int.from_bytes(key[i : i + 4], "little")
        k = (k * MURMUR_M) & MASK32
        k ^= k >> 24
        k = (k * MURMUR_M) & MASK32
        h = ((h * MURMUR_M) & MASK32) ^ k
    tail = key[n4:]
    if tail:
        for j in reversed(range(len(tail))):
            h ^= tail[j] << (8 * j)
        h = (h * MURMUR_M) & MASK32
    h ^= h >> 13
    h = (h * MURMUR_M) & MASK32
    h ^= h >> 15
    return h


def murmur2_u32(ids: np.ndarray, seed: int) -> np.ndarray:
    """Vectorised MurmurHash2 of 32-bit ids (each hashed as its 4 little-endian bytes)."""
    mask = np.uint64(MASK32)
    m = np.uint64(MURMUR_M)
    k = (np.asarray(ids, dtype=np.uint64) & mask) * m & mask
    k ^= k >> np.uint64(24)
    k = k * m & mask
    h = np.uint64(((seed ^ 4) * MURMUR_M) & MASK32) ^ k
    h ^= h >> np.uint64(13)
    h = h * m & mask
    h ^= h >> np.uint64(15)
    return h.astype(np.uint32)


@dataclass(frozen=True)
class Bloom(PE):
    h: int = 3
    b: int = 3 * 2**16
    w: int = 64
    seed: int = 0

    name: ClassVar[str] = "bloom"
    summary: ClassVar[str] = (
        "visited-node Bloom filter: h Murmur2 hash units over h banks of b/h bits, test-and-set one id per cycle"
    )
    timing_formula: ClassVar[str] = "II = 1; L = 6; clear after each query: b/(h*w) cycles"
    hls_header: ClassVar[str] = "bloom.h"
    testbench: ClassVar[str] = "tb_bloom"
    calibration_points: ClassVar[tuple] = (
        {"h": 1, "b": 2**14, "w": 32},
        {"h": 2, "b": 2**16, "w": 64},
        {"h": 3, "b": 3 * 2**14, "w": 64},
        {"h": 3, "b": 3 * 2**16, "w": 64},
        {"h": 4, "b": 2**18, "w": 64},
        {"h": 2, "b": 2**15, "w": 16},
        {"h": 3, "b": 3 * 2**17, "w": 64},
    )

    def validate(self) -> None:
        self.require(1 <= self.h <= 16, f"h={self.h} hash units out of range 1..16")
        self.require(
            self.b > 0 and self.b % self.h == 0,
            f"b={self.b} bits is not a multiple of h={self.h}",
            "choose b = h * 2**k, e.g. b=3*65536 for h=3",
        )
        p = self.b // self.h
        self.require(
            p & (p - 1) == 0,
            f"each bank must hold a power-of-two number of bits; b/h = {p}",
            "choose b = h * 2**k, e.g. b=3*65536 for h=3",
        )
        self.require(self.w in (8, 16, 32, 64), f"word width w={self.w} must be 8, 16, 32 or 64")
        self.require(p >= 2 * self.w, f"bank of {p} bits is smaller than two {self.w}-bit words", "raise b or lower w")
        self.require(0 <= self.seed <= MASK32, "seed must be a 32-bit unsigned integer")

    # -- derived sizes --------------------------------------------------------------------------
    @property
    def bank_bits(self) -> int:
        return self.b // self.h

    @property
    def index_bits(self) -> int:
        return self.bank_bits.bit_length() - 1

    @property
    def depth(self) -> int:
        """Words per bank: also the clearing cost in cycles."""
        return self.bank_bits // self.w

    def seeds(self) -> list[int]:
        return [(self.seed + i * SEED_STEP) & MASK32 for i in range(self.h)]

    # -- reference model ------------------------------------------------------------------------
    def positions(self, ids: np.ndarray) -> np.ndarray:
        """Bit index of each id in each bank: int64 [n, h]."""
        ids = np.asarray(ids, dtype=np.uint64)
        cols = [murmur2_u32(ids, s).astype(np.int64) & (self.bank_bits - 1) for s in self.seeds()]
        return np.stack(cols, axis=1) if cols else np.zeros((len(ids), 0), dtype=np.int64)

    def new_state(self) -> np.ndarray:
        """An empty filter: bool [h, bank_bits]."""
        return np.zeros((self.h, self.bank_bits), dtype=bool)

    def test_and_set(self, state: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Process `ids` in order against `state` (updated in place); return "maybe visited" flags.

        An id is reported visited when every one of its h bits was set before it: either already
        in `state` or set by an earlier id of the same call (vectorised with first occurrences).
        """
        pos = self.positions(ids)
        n = len(pos)
        visited = np.ones(n, dtype=bool)
        order = np.arange(n)
        for unit in range(self.h):
            p = pos[:, unit]
            _, first, inverse = np.unique(p, return_index=True, return_inverse=True)
            earlier = first[inverse] < order
            visited &= state[unit, p] | earlier
            state[unit, p] = True
        return visited

    def false_positive_rate(self, n: int) -> float:
        """Probability that a fresh id is reported visited after n distinct ids were inserted."""
        return float((1.0 - (1.0 - 1.0 / self.bank_bits) ** n) ** self.h)

    def false_positive_rate_approx(self, n: int) -> float:
        """The textbook (1 - e^(-h n / b))^h."""
        return float((1.0 - np.exp(-self.h * n / self.b)) ** self.h)

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return 6

    def ii(self) -> int:
        return 1

    def clear_cycles(self) -> int:
        return self.depth

    def query_gap(self) -> int:
        """Cycles from accepting the last id of a query to accepting the first id of the next."""
        return self.latency() - 1 + self.clear_cycles()

    # -- resources ------------------------------------------------------------------------------
    def bram_tiles(self) -> int:
        """18-Kbit block RAMs of the banks by geometry: a bank needs its bits (16 Kbit of data per
        tile) and its width (36 bits per tile)."""
        return self.h * max(math.ceil(self.bank_bits / 16384), math.ceil(self.w / 36))

    def resource_features(self) -> dict[str, float]:
        return {
            "h": self.h,
            "h*w": self.h * self.w,
            "h*index_bits": self.h * self.index_bits,
            "bram_tiles": self.bram_tiles(),
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return BloomComponent(self)


class BloomComponent(wiring.Component):
    """Amaranth implementation of `Bloom` (see the module docstring)."""

    def __init__(self, pe: Bloom):
        self.pe = pe
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"id": 32, "last": 1}))),
                "o": Out(stream.Signature(data.StructLayout({"id": 32, "visited": 1, "last": 1}))),
            }
        )

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        en = Signal()
        m.d.comb += en.eq(~self.o.valid | self.o.ready)

        blocked = Signal()  # a query's last id was accepted: wait until the filter is cleared
        clearing = Signal()
        clr_addr = Signal(range(pe.depth))
        accept = Signal()
        m.d.comb += [self.i.ready.eq(en & ~blocked), accept.eq(self.i.valid & self.i.ready)]
        with m.If(accept & self.i.payload.last):
            m.d.sync += blocked.eq(1)

        def stage(prev_valid, prev_id, prev_last, name):
            v, i, la = Signal(name=f"{name}_valid"), Signal(32, name=f"{name}_id"), Signal(name=f"{name}_last")
            with m.If(en):
                m.d.sync += [v.eq(prev_valid), i.eq(prev_id), la.eq(prev_last)]
            return v, i, la

        # Stage 1 and 2 (shared by all units): k = ((id*M) ^ (id*M >> 24)) * M.
        v1, id1, last1 = stage(accept, self.i.payload.id, self.i.payload.last, "s1")
        k1 = Signal(32)
        with m.If(en):
            m.d.sync += k1.eq((self.i.payload.id * MURMUR_M)[:32])
        v2, id2, last2 = stage(v1, id1, last1, "s2")
        k2 = Signal(32)
        with m.If(en):
            m.d.sync += k2.eq(((k1 ^ (k1 >> 24)) * MURMUR_M)[:32])
        # Stage 3 (per unit): x = C_i ^ k; x = (x ^ x >> 13) * M.
        v3, id3, last3 = stage(v2, id2, last2, "s3")
        x3 = []
        for unit, seed in enumerate(pe.seeds()):
            c = ((seed ^ 4) * MURMUR_M) & MASK32
            x = Signal(32, name=f"x3_{unit}")
            pre = Signal(32, name=f"pre3_{unit}")
            m.d.comb += pre.eq(k2 ^ c)
            with m.If(en):
                m.d.sync += x.eq(((pre ^ (pre >> 13)) * MURMUR_M)[:32])
            x3.append(x)
        # Stage 4: bank read (issued from stage 3), test, set (write back), result register.
        v4, id4, last4 = stage(v3, id3, last3, "s4")
        word_bits = (pe.w - 1).bit_length()
        visited_bits = []
        for unit in range(pe.h):
            mem = Memory(shape=pe.w, depth=pe.depth, init=[])
            m.submodules[f"bank{unit}"] = mem
            wp = mem.write_port()
            rp = mem.read_port(transparent_for=(wp,))
            idx = Signal(pe.index_bits, name=f"idx3_{unit}")
            m.d.comb += idx.eq((x3[unit] ^ (x3[unit] >> 15))[: pe.index_bits])
            m.d.comb += [rp.addr.eq(idx[word_bits:]), rp.en.eq(en)]
            sel = Signal(word_bits, name=f"sel4_{unit}")
            with m.If(en):
                m.d.sync += sel.eq(idx[:word_bits])
            hit = Signal(name=f"hit4_{unit}")
            addr4 = Signal(range(pe.depth), name=f"addr4_{unit}")
            with m.If(en):
                m.d.sync += addr4.eq(idx[word_bits:])
            m.d.comb += hit.eq(rp.data.bit_select(sel, 1))
            visited_bits.append(hit)
            with m.If(clearing):
                m.d.comb += [wp.addr.eq(clr_addr), wp.data.eq(0), wp.en.eq(1)]
            with m.Else():
                m.d.comb += [
                    wp.addr.eq(addr4),
                    wp.data.eq(rp.data | (Const(1, pe.w) << sel)[: pe.w]),
                    wp.en.eq(v4 & en),
                ]
        visited = Signal()
        m.d.comb += visited.eq(Cat(*visited_bits).all())
        with m.If(en):
            m.d.sync += [
                self.o.valid.eq(v4),
                self.o.payload.id.eq(id4),
                self.o.payload.visited.eq(visited),
                self.o.payload.last.eq(last4),
            ]
        # Clearing: starts when the last id of a query has written its bits.
        with m.If(v4 & last4 & en):
            m.d.sync += [clearing.eq(1), clr_addr.eq(0)]
        with m.If(clearing):
            m.d.sync += clr_addr.eq(clr_addr + 1)
            with m.If(clr_addr == pe.depth - 1):
                m.d.sync += [clearing.eq(0), blocked.eq(0)]
        return m
