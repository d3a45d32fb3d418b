"""Comparator networks: the one mechanism behind the bitonic sorter, the partial merger and HSMPQG.

A network is a sequence of registered stages. Each wire of a stage is computed from the wires of
the stage before by one operation:

* ``("min", i, j)`` / ``("max", i, j)``: the smaller / larger of wires i and j. A min and a max of
  the same pair form a compare-exchange and share one comparator in hardware;
* ``("pass", i)``: a copy of wire i (a delay register);
* ``("sentinel",)``: the all-ones key (a constant: no register, no logic).

The same description is evaluated by numpy (the reference model), elaborated into Amaranth
(`build_stages`) and costed (`Network.cost`, the resource features). Two transformations keep
the hardware minimal and the cost exact: `with_sentinel_inputs` propagates the sentinel of padding
inputs (min(x, all-ones) = x, max(x, all-ones) = all-ones, so a compare-exchange against padding
needs no comparator), and `pruned` drops every wire that no kept output depends on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from amaranth import Const, Module, Mux, Signal, Value

from fanns.errors import FannsError
from fanns.numerics import sentinel

Op = tuple
Stage = tuple[Op, ...]


def _sources(op: Op) -> tuple[int, ...]:
    return tuple(op[1:])


@dataclass(frozen=True)
class Network:
    """`width` input wires, then `stages` (see the module docstring); `const_inputs` hold the sentinel."""

    width: int
    stages: tuple[Stage, ...] = ()
    const_inputs: frozenset[int] = frozenset()

    # -- shape ----------------------------------------------------------------------------------
    @property
    def depth(self) -> int:
        return len(self.stages)

    @property
    def out_width(self) -> int:
        return len(self.stages[-1]) if self.stages else self.width

    # -- composition ----------------------------------------------------------------------------
    def then(self, other: Network) -> Network:
        """`other` applied to the outputs of this network (widths must agree)."""
        if other.width != self.out_width or other.const_inputs:
            raise ValueError(f"cannot chain a {self.out_width}-wire output into a {other.width}-wire network")
        return Network(self.width, self.stages + other.stages, self.const_inputs)

    def delayed(self, depth: int) -> Network:
        """This network followed by pass stages up to `depth` stages in total."""
        extra = tuple(tuple(("pass", k) for k in range(self.out_width)) for _ in range(depth - self.depth))
        return Network(self.width, self.stages + extra, self.const_inputs)

    @staticmethod
    def beside(nets: Sequence[Network]) -> Network:
        """The networks side by side (inputs and outputs concatenated), equalised in depth."""
        depth = max(n.depth for n in nets)
        nets = [n.delayed(depth) for n in nets]
        stages = []
        for t in range(depth):
            ops: list[Op] = []
            base = 0
            for n in nets:
                ops += [(op[0], *(base + s for s in _sources(op))) for op in n.stages[t]]
                base += len(n.stages[t - 1]) if t else n.width
            stages.append(tuple(ops))
        offsets = np.cumsum([0] + [n.width for n in nets])
        const = frozenset(int(o) + c for o, n in zip(offsets, nets) for c in n.const_inputs)
        return Network(int(offsets[-1]), tuple(stages), const)

    # -- simplification -------------------------------------------------------------------------
    def with_sentinel_inputs(self, inputs: Sequence[int]) -> Network:
        """The same network with the given inputs tied to the sentinel, simplified accordingly."""
        const = set(self.const_inputs) | set(inputs)
        known = [k in const for k in range(self.width)]
        stages = []
        for stage in self.stages:
            ops, nxt = [], []
            for op in stage:
                srcs = _sources(op)
                if op[0] == "sentinel" or all(known[s] for s in srcs):
                    ops.append(("sentinel",))
                elif op[0] in ("min", "max") and any(known[s] for s in srcs):
                    other = srcs[1] if known[srcs[0]] else srcs[0]
                    ops.append(("pass", other) if op[0] == "min" else ("sentinel",))
                else:
                    ops.append(op)
                nxt.append(ops[-1][0] == "sentinel")
            stages.append(tuple(ops))
            known = nxt
        return Network(self.width, tuple(stages), frozenset(const))

    def pruned(self, keep: Sequence[int]) -> Network:
        """Only the outputs `keep` (in that order), without the wires they do not depend on."""
        if not self.stages:
            raise ValueError("cannot prune a network without stages")
        needed: list[list[int]] = [[] for _ in self.stages]
        needed[-1] = list(keep)
        for t in range(self.depth - 1, 0, -1):
            used = {s for k in needed[t] for s in _sources(self.stages[t][k])}
            needed[t - 1] = sorted(used)
        stages = []
        index = {k: k for k in range(self.width)}
        for t, stage in enumerate(self.stages):
            ops = [(stage[k][0], *(index[s] for s in _sources(stage[k]))) for k in needed[t]]
            index = {k: n for n, k in enumerate(needed[t])}
            stages.append(tuple(ops))
        return Network(self.width, tuple(stages), self.const_inputs)

    # -- reference evaluation -------------------------------------------------------------------
    def evaluate(self, keys: np.ndarray, key_bits: int) -> np.ndarray:
        """Outputs for input keys [..., width] (uint64), stage by stage exactly as the hardware."""
        x = np.array(keys, dtype=np.uint64, copy=True)
        if x.shape[-1] != self.width:
            raise ValueError(f"network takes {self.width} keys, got {x.shape[-1]}")
        top = np.uint64(sentinel(key_bits))
        for c in self.const_inputs:
            x[..., c] = top
        for stage in self.stages:
            a = np.array([op[1] if len(op) > 1 else 0 for op in stage])
            b = np.array([op[2] if len(op) > 2 else (op[1] if len(op) > 1 else 0) for op in stage])
            kind = np.array([op[0] for op in stage])
            lo, hi = np.minimum(x[..., a], x[..., b]), np.maximum(x[..., a], x[..., b])
            x = np.where(kind == "max", hi, lo)
            x[..., kind == "sentinel"] = top
        return x

    # -- cost -----------------------------------------------------------------------------------
    def cost(self) -> dict[str, int]:
        """Comparators, comparator-selected outputs and key registers, over all stages."""
        return dict(self._cost)

    @cached_property
    def _cost(self) -> dict[str, int]:
        """`cost`, counted once per network (the DSE costs one network at several key widths)."""
        comparators = selects = registers = 0
        for stage in self.stages:
            pairs = {tuple(sorted(_sources(op))) for op in stage if op[0] in ("min", "max")}
            comparators += len(pairs)
            selects += sum(op[0] in ("min", "max") for op in stage)
            registers += sum(op[0] != "sentinel" for op in stage)
        return {"comparators": comparators, "selects": selects, "registers": registers, "stages": self.depth}


def build_stages(
    m: Module, en: Value, net: Network, inputs: Sequence[Value], key_bits: int, prefix: str
) -> list[Value]:
    """Elaborate `net` into `m`: one register per live wire per stage, all advancing when `en`."""
    top = Const(sentinel(key_bits), key_bits)
    cur: list[Value] = [top if k in net.const_inputs else inputs[k] for k in range(net.width)]
    for t, stage in enumerate(net.stages):
        lt: dict[tuple[int, int], Signal] = {}
        nxt: list[Value] = []
        for k, op in enumerate(stage):
            if op[0] == "sentinel":
                nxt.append(top)
                continue
            reg = Signal(key_bits, name=f"{prefix}_s{t}_w{k}")
            if op[0] == "pass":
                value = cur[op[1]]
            else:
                a, b = sorted(_sources(op))
                if (a, b) not in lt:
                    lt[(a, b)] = Signal(name=f"{prefix}_s{t}_lt{a}_{b}")
                    m.d.comb += lt[(a, b)].eq(cur[a] < cur[b])
                sel = lt[(a, b)]
                value = Mux(sel, cur[a], cur[b]) if op[0] == "min" else Mux(sel, cur[b], cur[a])
            with m.If(en):
                m.d.sync += reg.eq(value)
            nxt.append(reg)
        cur = nxt
    return cur


def build_side(m: Module, en: Value, depth: int, side: Value, prefix: str) -> Value:
    """A `depth`-stage delay line for the per-beat side signals (valid, last) of a network."""
    for t in range(depth):
        reg = Signal(len(side), name=f"{prefix}_side{t}")
        with m.If(en):
            m.d.sync += reg.eq(side)
        side = reg
    return side


# -- the bitonic networks -----------------------------------------------------------------------
def _log2(n: int) -> int:
    return n.bit_length() - 1


def bitonic_sorter(l: int) -> Network:
    """Batcher's bitonic sorting network of width `l` (a power of two), ascending.

    log2(l)·(1 + log2(l))/2 stages of l/2 compare-exchanges each.
    """
    stages = []
    size = 2
    while size <= l:
        stride = size // 2
        while stride:
            ops: list[Op] = []
            for i in range(l):
                j = i ^ stride
                ascending = (i & size) == 0
                first = i < j
                ops.append(("min" if first == ascending else "max", min(i, j), max(i, j)))
            stages.append(tuple(ops))
            stride //= 2
        size *= 2
    return Network(l, tuple(stages))


def bitonic_partial_merger(l: int) -> Network:
    """The l smallest of two ascending l-arrays (inputs a = wires 0..l-1, b = l..2l-1), ascending.

    Stage 1 keeps min(a[i], b[l-1-i]): a bitonic sequence holding the l smallest keys. log2(l)
    half-cleaner stages then sort it: 1 + log2(l) stages.
    """
    stages = [tuple(("min", i, 2 * l - 1 - i) for i in range(l))]
    stride = l // 2
    while stride:
        stages.append(
            tuple(("min" if i < (i ^ stride) else "max", min(i, i ^ stride), max(i, i ^ stride)) for i in range(l))
        )
        stride //= 2
    return Network(2 * l, tuple(stages))


def sorter_depth(l: int) -> int:
    k = _log2(l)
    return k * (1 + k) // 2


def merger_depth(l: int) -> int:
    return 1 + _log2(l)


def merge_tree(count: int, l: int) -> Network:
    """Partial mergers reducing `count` ascending l-arrays to the l smallest keys, ascending.

    Level by level, pairs of arrays meet in a merger; an odd array waits in delay registers.
    """
    net = Network(count * l)
    while count > 1:
        level = [bitonic_partial_merger(l)] * (count // 2) + [Network(l)] * (count % 2)
        net = net.then(Network.beside(level))
        count = (count + 1) // 2
    return net


def network_features(net: Network, key_bits: int) -> dict[str, float]:
    """Resource features of a network: what its LUTs and FFs are linear in.

    Comparators (a carry chain of key_bits, plus a constant each), the 2:1 multiplexers that
    select min or max (key_bits each), the key registers (key_bits each) and the stages (a valid
    and a last register each).
    """
    c = net.cost()
    return {
        "cmp": c["comparators"],
        "cmp*key_bits": c["comparators"] * key_bits,
        "sel*key_bits": c["selects"] * key_bits,
        "reg*key_bits": c["registers"] * key_bits,
        "stages": c["stages"],
    }


def check_keys(keys: np.ndarray, key_bits: int, what: str) -> np.ndarray:
    """`keys` as uint64, or a FannsError if a key does not fit `key_bits`."""
    arr = np.asarray(keys)
    if arr.dtype.kind not in "ui" or (arr.size and (arr.min() < 0 or int(arr.max()) > sentinel(key_bits))):
        raise FannsError(
            f"{what}: keys must be unsigned integers below 2**{key_bits}",
            hint="pack keys with fanns.numerics.make_keys and pick key_bits to fit",
        )
    return arr.astype(np.uint64)
