"""Bitonic sorting network (FANNS 6.4.1.1): one l-wide key vector in per cycle, sorted ascending.

Batcher's bitonic network of width l (a power of two) has log2(l)·(1 + log2(l))/2 stages of l/2
compare-exchange units; each stage is one register stage, so the PE is fully pipelined (II = 1)
and there are no input or output registers beyond the stages: the last stage's registers drive
`o`. Keys are selection keys (`fanns.numerics`): unsigned `key_bits` integers, ties and the
all-ones sentinel sort like any other value.

Streams: `i` = {keys: l x key_bits, last}, `o` = {keys: l x key_bits ascending, last}; `last`
passes through with its vector.

Timing: II = 1; L = log2(l)·(1 + log2(l))/2 + 1, counted from the cycle an input vector is
accepted to the cycle its sorted vector is taken, both inclusive (one cycle per stage register
plus the accepting cycle), so a query of N vectors takes L + N - 1 cycles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fanns.engines.cmpnet import Network, bitonic_sorter, check_keys
from fanns.pe.key_network import KeyNetworkPE


@dataclass(frozen=True)
class BitonicSort(KeyNetworkPE):
    name: ClassVar[str] = "bitonic_sort"
    summary: ClassVar[str] = "bitonic sorting network: one l-wide key vector per cycle, sorted ascending"
    timing_formula: ClassVar[str] = "II = 1; L = log2(l)*(1+log2(l))/2 + 1"
    hls_header: ClassVar[str] = "bitonic_sort.h"
    testbench: ClassVar[str] = "tb_bitonic_sort"
    calibration_points: ClassVar[tuple] = (
        {"l": 2, "key_bits": 64},
        {"l": 4, "key_bits": 32},
        {"l": 4, "key_bits": 64},
        {"l": 8, "key_bits": 16},
        {"l": 8, "key_bits": 52},
        {"l": 16, "key_bits": 64},
        {"l": 16, "key_bits": 24},
        {"l": 32, "key_bits": 40},
    )

    def network(self) -> Network:
        return bitonic_sorter(self.l)

    def input_fields(self) -> dict[str, int]:
        return {"keys": self.l}

    def sort(self, keys: np.ndarray) -> np.ndarray:
        """Reference model: vectors [..., l] of keys through the network (ascending uint64)."""
        keys = check_keys(keys, self.key_bits, self.name)
        self.require(keys.shape[-1:] == (self.l,), f"input vectors must have l={self.l} keys, got shape {keys.shape}")
        return self.network().evaluate(keys, self.key_bits)
