"""Verilog emission of Amaranth components, the one way every face and test turns RTL into text."""

from __future__ import annotations

from amaranth.back import verilog
from amaranth.lib import wiring


def to_verilog(component: wiring.Component, name: str) -> str:
    """Verilog text of an Amaranth component, without source-location attributes (deterministic)."""
    return verilog.convert(component, name=name, emit_src=False)
