"""Bitonic partial merger (FANNS 6.4.1.2, Fig. 6.6): the l smallest of two sorted l-arrays, sorted.

Two ascending l-arrays a and b arrive together in one beat. The first stage keeps
min(a[i], b[l-1-i]) for every i: a bitonic sequence that holds exactly the l smallest of the 2l
keys (the l largest are dropped without further logic). log2(l) half-cleaner stages then sort it.
Every stage is one register stage (the last drives `o`): fully pipelined, II = 1.

Streams: `i` = {a: l x key_bits, b: l x key_bits, last} with a and b ascending, `o` = {keys: l x
key_bits ascending, last}. Outputs for unsorted a or b are whatever the network computes; the
reference model refuses them.

Timing: II = 1; L = 1 + log2(l) + 1 (stages plus the accepting cycle, counted as in
`fanns.pe.bitonic_sort`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fanns.engines.cmpnet import Network, bitonic_partial_merger, check_keys
from fanns.pe.key_network import KeyNetworkPE


@dataclass(frozen=True)
class BitonicMerge(KeyNetworkPE):
    name: ClassVar[str] = "bitonic_merge"
    summary: ClassVar[str] = (
        "bitonic partial merger: the l smallest of two ascending l-arrays, ascending, one pair per cycle"
    )
    timing_formula: ClassVar[str] = "II = 1; L = log2(l) + 2"
    hls_header: ClassVar[str] = "bitonic_merge.h"
    testbench: ClassVar[str] = "tb_bitonic_merge"
    calibration_points: ClassVar[tuple] = (
        {"l": 2, "key_bits": 64},
        {"l": 4, "key_bits": 32},
        {"l": 8, "key_bits": 52},
        {"l": 8, "key_bits": 16},
        {"l": 16, "key_bits": 64},
        {"l": 32, "key_bits": 52},
        {"l": 64, "key_bits": 24},
    )

    def network(self) -> Network:
        return bitonic_partial_merger(self.l)

    def input_fields(self) -> dict[str, int]:
        return {"a": self.l, "b": self.l}

    def merge(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Reference model: ascending arrays a, b [..., l] -> the l smallest of both, ascending."""
        a = check_keys(a, self.key_bits, f"{self.name} input a")
        b = check_keys(b, self.key_bits, f"{self.name} input b")
        self.require(
            a.shape == b.shape and a.shape[-1:] == (self.l,),
            f"a and b must both have shape [..., {self.l}], got {a.shape} and {b.shape}",
        )
        for arr, what in ((a, "a"), (b, "b")):
            self.require(
                bool(np.all(arr[..., 1:] >= arr[..., :-1])),
                f"input {what} is not sorted ascending",
                "sort each array first (e.g. with bitonic_sort)",
            )
        return self.network().evaluate(np.concatenate([a, b], axis=-1), self.key_bits)
