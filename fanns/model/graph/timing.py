"""The RTL clock estimate of a graph (Falcon) design: its PEs' timing tables, its reset fan-out.

The same estimate as an IVF-PQ design's (`fanns.model.timing`): every PE the design instantiates
(`fanns.design.graph_hw.QppHw`, as `fanns.model.graph.dse.design_resources` prices them), the
reset to every register; the slowest gives the clock. A graph design is one kernel whose SLR is
left to the tools, so it has no SLR crossings of the model's own.
"""

from __future__ import annotations

from fanns.design.graph import GraphDesign
from fanns.design.graph_hw import CSR_ADDR_BITS, QppHw, across_addr_bits
from fanns.model.graph.dse import design_resources
from fanns.model.timing import DesignTiming, pe_elements, reset_element, slowest_first
from fanns.pe.axil_split import AxilSplit
from fanns.tools.delay_models import MODELS


def graph_design_timing(design: GraphDesign, family: str) -> DesignTiming:
    """The estimate of `design` on device family `family`."""
    if family not in MODELS:
        return DesignTiming(family, (), (f"no delay model for device family {family}",))
    hw, p = QppHw(design), design.pipelines
    items = [
        ("unit.bloom", hw.bloom, hw.units * p),
        ("unit.l2dist", hw.l2dist, hw.units * p),
        ("unit.vector_reader", hw.vector_reader, hw.units * p),
        ("result_queue", hw.result_queue, p),
        ("cand_queue", hw.cand_queue, p),
        ("list_reader", hw.list_reader, p),
        ("query_reader", hw.query_reader, p),
        ("result_writer", hw.result_writer, p),
    ]
    if p > 1:
        items.append(("axil_split", AxilSplit(p, across_addr_bits(p), CSR_ADDR_BITS), 1))
    elements, uncovered = pe_elements(items, family)
    if not elements:
        return DesignTiming(family, (), tuple(uncovered))
    registers = design_resources(design, family).ff
    return slowest_first([*elements, reset_element(MODELS[family], registers)], family, uncovered)
