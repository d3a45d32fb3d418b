"""Verilog emission of Amaranth components, the one way every face and test turns RTL into text;
`verilog_modules` and `instance_counts` read an emitted file's modules (for simulator builds)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from amaranth import ClockDomain, Elaboratable, Module, Signal
from amaranth.back import verilog
from amaranth.hdl import _ir, _nir  # the netlist `comb_path` walks (amaranth 0.5)
from amaranth.hdl._ir import PortDirection  # the direction type `ports=` takes (amaranth 0.5)
from amaranth.lib import wiring

from fanns.hdl.modules import ModuleLibrary, ModuleStore, inline

KERNEL_CLOCK = "ap_clk"
KERNEL_RESET = "ap_rst_n"
"""Clock and active-low reset of a Xilinx RTL kernel (UG1393), as v++ expects them."""


def to_verilog(component: wiring.Component, name: str) -> str:
    """Verilog text of an Amaranth component, without source-location attributes (deterministic)."""
    return verilog.convert(component, name=name, emit_src=False)


class _KernelShell(Elaboratable):
    """Clocks `core`'s sync domain by `ap_clk` and resets it (synchronously) while `ap_rst_n` is low."""

    def __init__(self, core: wiring.Component):
        self.core = core
        self.ap_clk = Signal(name=KERNEL_CLOCK)
        self.ap_rst_n = Signal(name=KERNEL_RESET)

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = cd = ClockDomain("sync")
        m.d.comb += [cd.clk.eq(self.ap_clk), cd.rst.eq(~self.ap_rst_n)]
        m.submodules.core = self.core
        return m


def kernel_port_name(path: tuple, interfaces: dict[str, str]) -> str:
    """The Verilog port of the member at `path` (see `kernel_port_names`)."""
    head, *rest = map(str, path)
    return "_".join([interfaces.get(head, head), *rest])


def kernel_port_names(component: wiring.Component, interfaces: dict[str, str]) -> dict[str, tuple]:
    """Verilog port name -> (signal, direction) of `component` as a Xilinx RTL kernel: the member
    `<role>` of an interface is named `<interfaces[role]>_<signal>` (single underscore, as
    `s_axi_control_awaddr`, `m_axi_io_araddr`); other members keep their names."""
    ports = {}
    for path, member, value in component.signature.flatten(component):
        name = kernel_port_name(path, interfaces)
        direction = PortDirection.Input if member.flow == wiring.In else PortDirection.Output
        ports[name] = (value.as_value() if hasattr(value, "as_value") else value, direction)
    return ports


def to_kernel_verilog(
    component: wiring.Component,
    name: str,
    interfaces: dict[str, str],
    store: ModuleStore | None = None,
    key: Hashable | None = None,
) -> str:
    """Verilog of `component` as a Xilinx RTL kernel (module `name`): ports `ap_clk`, `ap_rst_n`
    (active low) and the component's members renamed by `kernel_port_names`. The component itself
    is the submodule `<name>.core`, unchanged; its repeated parts (`fanns.hdl.modules.separate`)
    are modules of their own, each converted once (or taken from `store`) and appended after the
    kernel's. With `store` and a `key` that determines the component's hardware exactly (as a
    part's key does: the RTL view of a design), the whole text is kept in `store` too, and a
    kernel it holds is not elaborated again."""
    if store is not None and key is not None:
        kept = store.get(name, repr((key, interfaces)))
        if kept is not None:
            component._MustUse__silence = True  # its kept text stands for it (Amaranth's unused-elaboratable warning)
            return kept
    shell = _KernelShell(component)
    ports = {
        KERNEL_CLOCK: (shell.ap_clk, PortDirection.Input),
        KERNEL_RESET: (shell.ap_rst_n, PortDirection.Input),
    }
    ports |= kernel_port_names(component, interfaces)
    with ModuleLibrary(to_verilog, store) as parts:
        top = verilog.convert(shell, name=name, ports=ports, emit_src=False)
    text = top + parts.verilog()
    if store is not None and key is not None:
        store.put(name, repr((key, interfaces)), text)
    return text


_MODULE = re.compile(
    r"(?P<attrs>(?:^\(\*[^\n]*\*\)\n)*)^module (?P<name>\\\S+|[A-Za-z_][\w$]*) ?(?P<head>(?:\(.*?\))?;\n)"
    r"(?P<body>.*?)^endmodule\n",
    re.S | re.M,
)
_INSTANCE = re.compile(r"^  (\\\S+ |[A-Za-z_][\w$]* )", re.M)


def verilog_modules(text: str) -> dict[str, re.Match]:
    """The modules of `text` (Verilog as Amaranth/yosys write it) by name, each as its match:
    groups `attrs` (the attribute lines before it), `name`, `head` (port list) and `body`."""
    return {m.group("name"): m for m in _MODULE.finditer(text)}


def submodules(body: str, modules: Mapping[str, object]) -> list[str]:
    """The modules (of `modules`) a module `body` instantiates, once per instance."""
    return [t.rstrip() for t in _INSTANCE.findall(body) if t.rstrip() in modules]


def instance_counts(text: str) -> dict[str, int]:
    """How many instances of each module of `text` the design below its root modules (those no
    module instantiates) holds; a root counts 1."""
    modules = verilog_modules(text)
    children = {name: submodules(m.group("body"), modules) for name, m in modules.items()}
    counts = dict.fromkeys(modules, 0)
    inner = {c for kids in children.values() for c in kids}

    def visit(name: str, times: int) -> None:
        counts[name] += times
        for child in children[name]:
            visit(child, times)

    for root in modules:
        if root not in inner:
            visit(root, 1)
    return counts


@dataclass(frozen=True)
class CombPath:
    """The longest combinational path of a netlist: `nets` on it (Amaranth's netlist nets, one per
    bit of each cell's output), and how many of them each source line drives (`file:line`)."""

    nets: int
    lines: Counter

    def where(self, top: int = 5) -> str:
        return ", ".join(f"{line} x{n}" for line, n in self.lines.most_common(top))


def comb_path(component: wiring.Component) -> CombPath:
    """The longest combinational path through `component`'s netlist, from a register, memory or
    input port to a register, memory or output port.

    Why: Amaranth checks the netlist for combinational loops by a recursive walk, one Python frame
    per net of a path, so a path as long as an array of PEs (a ready rippling back through every PE)
    ends the Verilog emission in a RecursionError; and the same path bounds the clock. A structure
    whose path grows with its PE or stream count is one no PE count is safe for; tests compare
    this length at two counts. Iterative: no path is too long to measure.

    The whole design, flat: a part that `fanns.hdl.modules` converts as a module of its own is
    elaborated in place here (`inline`), since a path runs on through the module instances (a ready
    rippling from PE to PE crosses every PE's module) and an `Instance` would cut it."""
    ports = kernel_port_names(component, {})
    with inline():
        design = _ir.Fragment.get(component, None).prepare(ports=ports, hierarchy=("top",))
    netlist = _nir.Netlist()
    _ir._emit_netlist(netlist, design)

    def sources(net: _nir.Net) -> list:
        if net.is_const:
            return []
        if net.is_late:
            return [(netlist.connections[net], None)]
        return list(netlist.cells[net.cell].comb_edges_to(net.bit))

    depth: dict = {}  # net -> (nets on the longest path ending at it, its source net, that edge's line)
    for index, cell in enumerate(netlist.cells):
        for root in cell.output_nets(index):
            if root in depth:
                continue
            # frames: [net, its remaining edges, best (length, source, line), line of the edge descended]
            stack, open_nets = [[root, iter(sources(root)), (1, None, None), None]], {root}
            while stack:
                frame = stack[-1]
                edge = next(frame[1], None)
                if edge is None:
                    stack.pop()
                    open_nets.discard(frame[0])
                    depth[frame[0]] = frame[2]
                    if stack:
                        parent = stack[-1]
                        if frame[2][0] + 1 > parent[2][0]:
                            parent[2] = (frame[2][0] + 1, frame[0], parent[3])
                    continue
                src, loc = edge
                if src in depth:
                    if depth[src][0] + 1 > frame[2][0]:
                        frame[2] = (depth[src][0] + 1, src, loc)
                    continue
                if src in open_nets:
                    raise ValueError(f"combinational loop through {loc}")
                frame[3] = loc
                stack.append([src, iter(sources(src)), (1, None, None), None])
                open_nets.add(src)
    if not depth:
        return CombPath(0, Counter())
    net = max(depth, key=lambda n: depth[n][0])
    lines: Counter = Counter()
    length = depth[net][0]
    while net is not None:
        _, net, loc = depth[net]
        if loc is not None:
            lines[f"{loc[0]}:{loc[1]}"] += 1
    return CombPath(length, lines)
