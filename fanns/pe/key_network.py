"""The PE faces shared by the PEs that are one comparator network (bitonic sorter, partial merger).

The network itself, its reference evaluation and its cost live in `fanns.engines.cmpnet`; this
module gives such a network the PE contract and a stream component.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth import Cat, Module, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.cmpnet import Network, build_side, build_stages, network_features
from fanns.pe.base import PE


@dataclass(frozen=True)
class KeyNetworkPE(PE):
    """Common faces of the PEs that are one comparator network on l-wide key vectors."""

    l: int = 16
    key_bits: int = 64

    def validate(self) -> None:
        self.require(
            2 <= self.l <= 256 and self.l & (self.l - 1) == 0,
            f"l={self.l} must be a power of two in 2..256",
            "use 2, 4, 8, 16, ...",
        )
        self.require(
            1 <= self.key_bits <= 64, f"key_bits={self.key_bits} must be in 1..64", "keys are at most 64 bits wide"
        )

    def network(self) -> Network:
        raise NotImplementedError

    def input_fields(self) -> dict[str, int]:
        """Names and widths of the key arrays of an input beat, in network-input order."""
        raise NotImplementedError

    def latency(self) -> int:
        return self.network().depth + 1

    def ii(self) -> int:
        return 1

    def resource_features(self) -> dict[str, float]:
        return network_features(self.network(), self.key_bits)

    def component(self) -> wiring.Component:
        return NetworkComponent(self.network(), self.key_bits, self.input_fields())


class NetworkComponent(wiring.Component):
    """A comparator network between stream `i` and stream `o`, one beat per cycle (II = 1).

    `i` carries the named key arrays (concatenated, in order, as the network inputs) and `last`;
    `o` carries `keys` (the network outputs) and `last`. Every stage is a register; all advance
    together while the output register is free (`~o.valid | o.ready`), which takes back-pressure
    without skid buffers, and input bubbles travel down the pipeline as invalid beats.
    """

    def __init__(self, net: Network, key_bits: int, inputs: dict[str, int]):
        self.net, self.key_bits, self.inputs = net, key_bits, dict(inputs)
        key = unsigned(key_bits)
        in_layout = data.StructLayout({**{n: data.ArrayLayout(key, w) for n, w in inputs.items()}, "last": 1})
        out_layout = data.StructLayout({"keys": data.ArrayLayout(key, net.out_width), "last": 1})
        super().__init__({"i": In(stream.Signature(in_layout)), "o": Out(stream.Signature(out_layout))})

    def elaborate(self, platform):
        m = Module()
        en = Signal()
        m.d.comb += [en.eq(~self.o.valid | self.o.ready), self.i.ready.eq(en)]
        keys = [self.i.payload[name][k] for name, width in self.inputs.items() for k in range(width)]
        outs = build_stages(m, en, self.net, keys, self.key_bits, "net")
        side = build_side(m, en, self.net.depth, Cat(self.i.valid, self.i.payload.last), "net")
        m.d.comb += [self.o.valid.eq(side[0]), self.o.payload.last.eq(side[1])]
        m.d.comb += [self.o.payload.keys[k].eq(v) for k, v in enumerate(outs)]
        return m
