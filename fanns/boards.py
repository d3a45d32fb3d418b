"""FPGA boards: resources per SLR, shell overhead, memory channels, clock, platform (`boards/*.yaml`).

A board file is validated against a small schema on load — unknown keys, missing keys, wrong
types and negative numbers are errors naming the file and the key — so a typo in a user's own
board file cannot silently change a design. Anywhere a board name is accepted, a path to a
board file works too.

Every board file names its default accelerator clock (`clock_mhz`) and where that figure comes
from (`clock_source`: a published build of a comparable design on that card or family, not the
platform's maximum kernel clock); a prediction says which clock it used and why (`Clock`).

A memory group may carry `latency`: a published idle read-latency measurement (cycles of the
measuring design's clock for a row hit, a closed row and a row miss, with its source), which the
graph model converts to cycles of the design clock (`fanns.model.graph.qpp.MemorySystem`).

The usable resources of an SLR are its device resources minus the shell (static region)
overhead in that SLR; `Board.budget(util)` scales the usable total by a utilisation cap
(FANNS uses 60 %: designs above that rarely place and route).
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from fanns.checks import IDENTIFIER, NAME, PLATFORM, check_name, check_number, check_text
from fanns.errors import FannsError
from fanns.paths import shared_dir
from fanns.processing_systems import PS_KINDS, PsKind
from fanns.resources import KINDS, Resources

REQUIRED = {"name", "part", "family", "slrs", "memory", "clock_mhz", "platform", "pynq", "sources"}
OPTIONAL = {"description", "shell", "pynq_image", "host", "block_design", "clock_source"}
NO_CLOCK_SOURCE = "the board file's clock_mhz (the file names no clock_source)"
MEMORY_KEYS = {"kind", "count", "capacity_gb", "bandwidth_gbps", "port_bits"}
MEMORY_OPTIONAL = {"latency"}
LATENCY_KEYS = {"clock_mhz", "page_hit", "page_closed", "page_miss", "source"}
ACCESSES = ("page_hit", "page_closed", "page_miss")
HOST_KEYS = {"capacity_gb", "bandwidth_gbps", "latency_us"}
HOST_MEMORY = "host"
BUFFER_PAGE = 4096
"""A device buffer's alignment, and the page the driver leaves unused at each bank's start (so a
forgotten address register points nowhere valid): `fanns.driver.ivfpq.backend.BumpAllocator`."""
"""The memory name of host memory where images and banks name a memory (`Image.memory`, a driver's
`Bank`): one bank, channel 0, reached over the link of the board file's `host` figures
(Vitis connectivity `HOST[0]`; docs/host_tier.md)."""
BLOCK_DESIGN_KEYS = {"board_part", "ps", "pl_clock", "control_port", "hp_ports"}
MAX_CHANNELS = 64
"""Channels of one memory group a board file may declare: twice the most any AMD card has, the 32
HBM2 pseudo-channels of the Alveo U55C, U280 and U50 (two HBM2 stacks of 16: UG1469, UG1314,
UG1371), so a larger part still fits; a count in the thousands is a typo, and every channel
becomes an AXI master, a buffer address register and a choice the DSE enumerates."""
AXI_DATA_BITS = (8, 16, 32, 64, 128, 256, 512, 1024)
"""The data-bus widths AXI allows (ARM IHI 0022, AMBA AXI and ACE Protocol Specification: 8 to
1024 bits, powers of two): a memory port's `port_bits` is one of them."""
BOARD_PART = re.compile(r"[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[0-9][0-9.]*\Z")
"""Vivado board parts (vendor:board:component:revision, e.g. xilinx.com:zcu104:part0:1.1)."""


CLOCK_ORIGINS = {"board": "board default", "rtl": "RTL timing estimate", "user": "--clock"}


@dataclass(frozen=True)
class Clock:
    """The accelerator clock a prediction uses and where it came from: the board's default
    (`origin` "board", with the board file's source), the design's RTL timing estimate when that
    is lower ("rtl"), or the user's `--clock` ("user"), which overrides both."""

    mhz: float
    origin: str
    source: str

    def __post_init__(self) -> None:
        if self.origin not in CLOCK_ORIGINS:
            raise ValueError(f"clock origin {self.origin!r}")

    @classmethod
    def user(cls, mhz: float) -> Clock:
        return cls(float(mhz), "user", "given on the command line")

    def short(self) -> str:
        """'140 MHz (board default)'."""
        return f"{self.mhz:g} MHz ({CLOCK_ORIGINS[self.origin]})"

    def describe(self) -> str:
        """'140 MHz (board default: ...)'."""
        return f"{self.mhz:g} MHz ({CLOCK_ORIGINS[self.origin]}: {self.source})"

    def to_dict(self) -> dict:
        return {"mhz": self.mhz, "origin": self.origin, "source": self.source}


@dataclass(frozen=True)
class BlockDesign:
    """What a Vivado block design of the board needs: the board part, the PS, which HP port each
    channel of a memory group is reached through, the PL clock and the master the CPU controls
    the accelerator through."""

    board_part: str
    ps: str
    pl_clock: str
    control_port: str
    hp_ports: dict[str, tuple[str, ...]]  # memory group kind -> HP port of channel 0, 1, ...

    @property
    def kind(self) -> PsKind:
        return PS_KINDS[self.ps]


FAMILIES = ("xcup", "xcu", "xc7")


@dataclass(frozen=True)
class MemoryLatency:
    """Idle read latency of a memory group as a published measurement gave it: cycles of the
    measuring design's clock from a read request to its data, per DRAM row state (the row open
    and hit, no row open, another row open). Why cycles at their clock: that is what such papers
    measure; `cycles_at` converts to another design clock through nanoseconds, rounding up."""

    clock_mhz: float
    page_hit: int
    page_closed: int
    page_miss: int
    source: str

    def ns(self, access: str = "page_miss") -> float:
        return getattr(self, access) * 1e3 / self.clock_mhz

    def cycles_at(self, clock_mhz: float, access: str = "page_miss") -> int:
        """Whole cycles of a `clock_mhz` design that cover the measured latency (the data cannot
        be taken before it arrives: rounded up)."""
        if access not in ACCESSES:
            raise FannsError(f"memory access kind {access!r}", hint=f"one of {', '.join(ACCESSES)}")
        return math.ceil(round(self.ns(access) * clock_mhz / 1e3, 9))


@dataclass(frozen=True)
class MemoryChannels:
    """A group of identical memory channels (HBM pseudo-channels, DDR banks, HP ports)."""

    kind: str
    count: int
    capacity_gb: float
    bandwidth_gbps: float
    port_bits: int
    latency: MemoryLatency | None = None  # a published idle-latency measurement, when one exists

    @property
    def capacity_bytes(self) -> int:
        return int(self.capacity_gb * (1 << 30))

    @property
    def total_bandwidth_gbps(self) -> float:
        return self.count * self.bandwidth_gbps

    def describe(self) -> str:
        return (
            f"{self.count} x {self.kind} ({self.capacity_gb:g} GB, {self.bandwidth_gbps:g} GB/s, {self.port_bits}-bit)"
        )


@dataclass(frozen=True)
class HostLink:
    """Host memory as the accelerator reaches it over PCIe (one link shared by every reader)."""

    capacity_gb: float
    bandwidth_gbps: float
    latency_us: float

    @property
    def capacity_bytes(self) -> int:
        return int(self.capacity_gb * (1 << 30))


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    part: str
    family: str
    device_slrs: dict[str, Resources]
    shell: dict[str, Resources]
    memory: tuple[MemoryChannels, ...]
    clock_mhz: float
    clock_source: str
    platform: str | None
    pynq: bool
    pynq_image: str | None
    sources: tuple[str, ...]
    path: Path
    host: HostLink | None = None
    block_design: BlockDesign | None = None
    spec: dict = field(default_factory=dict, compare=False, hash=False, repr=False)
    """The board file's content as read (a design carries it, so every step uses this board)."""

    @property
    def builtin(self) -> bool:
        """Whether this is the shipped board file of its name (boards/NAME.yaml, unchanged)."""
        own = boards_dir() / f"{self.name}.yaml"
        try:
            return own.is_file() and yaml.safe_load(own.read_text()) == self.spec
        except (OSError, yaml.YAMLError):
            return False

    @property
    def clock(self) -> Clock:
        """The board's default accelerator clock, with its source."""
        return Clock(self.clock_mhz, "board", self.clock_source)

    @property
    def slrs(self) -> dict[str, Resources]:
        """Usable resources per SLR: device minus shell."""
        return {k: v - self.shell.get(k, Resources()) for k, v in self.device_slrs.items()}

    @property
    def total(self) -> Resources:
        """Usable resources of the whole device."""
        return Resources.total(list(self.slrs.values()))

    @property
    def device_total(self) -> Resources:
        return Resources.total(list(self.device_slrs.values()))

    def budget(self, util: float = 0.6) -> Resources:
        """Usable resources scaled by a utilisation cap in (0, 1]."""
        if not 0 < util <= 1:
            raise FannsError(f"utilisation cap {util} must be in (0, 1]", hint="e.g. 0.6 for 60 %")
        return self.total * util

    def channels(self, kind: str | None = None) -> list[MemoryChannels]:
        return [m for m in self.memory if kind is None or m.kind == kind]


# -- validation ---------------------------------------------------------------------------------
def _number(path: Path, key: str, value: Any, integer: bool = False, positive: bool = False, lo: float = 0) -> float:
    try:
        return check_number(value, f"{path}: key {key!r}", lo=lo, lo_open=positive, integer=integer)
    except FannsError as exc:
        raise FannsError(exc.message, hint="numbers in a board file are finite and not negative") from None


def _string(path: Path, key: str, value: Any, nullable: bool = False, name: re.Pattern | None = None) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value:
        raise FannsError(f"{path}: key {key!r} must be a non-empty string, got {value!r}")
    if name is not None:
        return check_name(value, f"{path}: key {key!r}", name)
    return check_text(value, f"{path}: key {key!r}")


def _keys(path: Path, where: str, data: Any, required: set[str], optional: set[str] = frozenset()) -> None:
    if not isinstance(data, dict):
        raise FannsError(f"{path}: {where or 'the file'} must be a mapping, got {type(data).__name__}")
    unknown = set(data) - required - set(optional)
    if unknown:
        raise FannsError(
            f"{path}: unknown key {where + '.' if where else ''}{sorted(unknown)[0]!r}",
            hint=f"allowed keys: {', '.join(sorted(required | set(optional)))}",
        )
    missing = required - set(data)
    if missing:
        raise FannsError(f"{path}: missing key {where + '.' if where else ''}{sorted(missing)[0]!r}")


def _latency(path: Path, where: str, data: Any) -> MemoryLatency:
    _keys(path, where, data, LATENCY_KEYS)
    cycles = [int(_number(path, f"{where}.{k}", data[k], integer=True, lo=1)) for k in ACCESSES]
    if cycles != sorted(cycles):
        raise FannsError(
            f"{path}: key {where!r} has page_hit {cycles[0]}, page_closed {cycles[1]}, page_miss {cycles[2]} cycles",
            hint="a row hit is never slower than a closed row, nor that than a row miss",
        )
    return MemoryLatency(
        clock_mhz=float(_number(path, f"{where}.clock_mhz", data["clock_mhz"], positive=True)),
        page_hit=cycles[0],
        page_closed=cycles[1],
        page_miss=cycles[2],
        source=_string(path, f"{where}.source", data["source"]),
    )


def _resources(path: Path, where: str, data: Any) -> Resources:
    _keys(path, where, data, set(KINDS))
    return Resources(**{k: float(_number(path, f"{where}.{k}", data[k], integer=True)) for k in KINDS})


def parse_board(path: Path, data: Any) -> Board:
    """Validate the YAML content of a board file and build the Board."""
    _keys(path, "", data, REQUIRED, OPTIONAL)
    name = _string(path, "name", data["name"], name=NAME)
    family = _string(path, "family", data["family"])
    if family not in FAMILIES:
        raise FannsError(
            f"{path}: key 'family' is {family!r}", hint=f"one of {', '.join(FAMILIES)} (yosys synth_xilinx)"
        )
    slrs_raw = data["slrs"]
    if not isinstance(slrs_raw, dict) or not slrs_raw:
        raise FannsError(f"{path}: key 'slrs' must map SLR names to resources")
    slrs = {check_name(str(k), f"{path}: SLR"): _resources(path, f"slrs.{k}", v) for k, v in slrs_raw.items()}
    shell_raw = data.get("shell") or {}
    if not isinstance(shell_raw, dict):
        raise FannsError(f"{path}: key 'shell' must map SLR names to resources")
    shell = {}
    for k, v in shell_raw.items():
        if str(k) not in slrs:
            raise FannsError(f"{path}: key 'shell.{k}' names an SLR that is not in 'slrs'")
        shell[str(k)] = _resources(path, f"shell.{k}", v)
        if not shell[str(k)].fits(slrs[str(k)]):
            raise FannsError(f"{path}: key 'shell.{k}' exceeds the resources of that SLR")
    mem_raw = data["memory"]
    if not isinstance(mem_raw, list) or not mem_raw:
        raise FannsError(f"{path}: key 'memory' must be a non-empty list of channel groups")
    memory = []
    for i, m in enumerate(mem_raw):
        where = f"memory[{i}]"
        _keys(path, where, m, MEMORY_KEYS, MEMORY_OPTIONAL)
        count = int(_number(path, f"{where}.count", m["count"], integer=True, lo=1))
        if count > MAX_CHANNELS:
            raise FannsError(
                f"{path}: key '{where}.count' is {count:,} channels, more than the {MAX_CHANNELS} a memory group "
                "may have",
                hint=f"AMD's HBM cards have 32 pseudo-channels (UG1469); at most {MAX_CHANNELS} "
                "(fanns.boards.MAX_CHANNELS)",
            )
        port_bits = int(_number(path, f"{where}.port_bits", m["port_bits"], integer=True, lo=8))
        if port_bits not in AXI_DATA_BITS:
            raise FannsError(
                f"{path}: key '{where}.port_bits' is {port_bits}, not an AXI data-bus width",
                hint=f"one of {', '.join(map(str, AXI_DATA_BITS))} (AMBA AXI specification, ARM IHI 0022)",
            )
        memory.append(
            MemoryChannels(
                kind=_string(path, f"{where}.kind", m["kind"], name=NAME),
                count=count,
                capacity_gb=float(_number(path, f"{where}.capacity_gb", m["capacity_gb"], positive=True)),
                bandwidth_gbps=float(_number(path, f"{where}.bandwidth_gbps", m["bandwidth_gbps"], positive=True)),
                port_bits=port_bits,
                latency=_latency(path, f"{where}.latency", m["latency"]) if "latency" in m else None,
            )
        )
    host = None
    if data.get("host") is not None:
        _keys(path, "host", data["host"], HOST_KEYS)
        host = HostLink(
            *(
                float(_number(path, f"host.{k}", data["host"][k], positive=k != "latency_us"))
                for k in ("capacity_gb", "bandwidth_gbps", "latency_us")
            )
        )
    if not isinstance(data["pynq"], bool):
        raise FannsError(f"{path}: key 'pynq' must be true or false, got {data['pynq']!r}")
    sources = data["sources"]
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) and s for s in sources):
        raise FannsError(f"{path}: key 'sources' must be a non-empty list of strings citing vendor documents")
    for i, text in enumerate(sources):
        check_text(text, f"{path}: key 'sources[{i}]'")
    clock = float(_number(path, "clock_mhz", data["clock_mhz"], positive=True))
    clock_source = NO_CLOCK_SOURCE
    if data.get("clock_source") is not None:
        clock_source = _string(path, "clock_source", data["clock_source"])
    block = None
    if data.get("block_design") is not None:
        block = _block_design(path, data["block_design"], memory)
    return Board(
        name=name,
        description=_string(path, "description", data.get("description", name)),
        part=_string(path, "part", data["part"], name=NAME),
        family=family,
        device_slrs=slrs,
        shell=shell,
        memory=tuple(memory),
        clock_mhz=clock,
        clock_source=clock_source,
        platform=_string(path, "platform", data["platform"], nullable=True, name=PLATFORM),
        pynq=data["pynq"],
        pynq_image=_string(path, "pynq_image", data.get("pynq_image"), nullable=True),
        sources=tuple(sources),
        path=path,
        host=host,
        block_design=block,
        spec=data,
    )


def _block_design(path: Path, data: Any, memory: list[MemoryChannels]) -> BlockDesign:
    """Validate `block_design:` (its names reach generated Tcl): known PS, its own port and clock
    names, one distinct HP port per channel of a memory group, widths the port supports."""
    _keys(path, "block_design", data, BLOCK_DESIGN_KEYS)
    ps = _string(path, "block_design.ps", data["ps"])
    if ps not in PS_KINDS:
        raise FannsError(f"{path}: key 'block_design.ps' is {ps!r}", hint=f"one of {', '.join(PS_KINDS)}")
    kind = PS_KINDS[ps]

    def one_of(key: str, value: Any, known: dict) -> str:
        name = _string(path, f"block_design.{key}", value, name=IDENTIFIER)
        if name not in known:
            raise FannsError(
                f"{path}: key 'block_design.{key}' is {name!r}, not a port of {ps}", hint=f"one of {', '.join(known)}"
            )
        return name

    hp_raw = data["hp_ports"]
    if not isinstance(hp_raw, dict) or not hp_raw:
        raise FannsError(f"{path}: key 'block_design.hp_ports' must map memory groups to lists of HP ports")
    groups = {m.kind: m for m in memory}
    hp_ports, used = {}, set()
    for group, ports in hp_raw.items():
        where = f"block_design.hp_ports.{group}"
        if group not in groups:
            raise FannsError(
                f"{path}: key {where!r} names no memory group of the board", hint=f"one of {', '.join(groups)}"
            )
        if not isinstance(ports, list) or len(ports) != groups[group].count:
            raise FannsError(
                f"{path}: key {where!r} must list {groups[group].count} HP ports, one per channel of {group}"
            )
        names = tuple(one_of(f"hp_ports.{group}", p, kind.hp_ports) for p in ports)
        if used & set(names) or len(set(names)) != len(names):
            raise FannsError(f"{path}: key {where!r} uses an HP port twice", hint="one channel per HP port")
        used |= set(names)
        if groups[group].port_bits not in kind.hp_widths:
            raise FannsError(
                f"{path}: memory group {group} has port_bits {groups[group].port_bits}, which {ps} HP ports lack",
                hint=f"one of {', '.join(map(str, kind.hp_widths))}",
            )
        hp_ports[group] = names
    return BlockDesign(
        board_part=_string(path, "block_design.board_part", data["board_part"], name=BOARD_PART),
        ps=ps,
        pl_clock=one_of("pl_clock", data["pl_clock"], kind.clocks),
        control_port=one_of("control_port", data["control_port"], kind.masters),
        hp_ports=hp_ports,
    )


# -- loading ------------------------------------------------------------------------------------
def boards_dir() -> Path:
    return shared_dir("boards")


def _board_files() -> list[Path]:
    return sorted(boards_dir().glob("*.yaml"))


def load_board_file(path: Path) -> Board:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise FannsError(f"{path}: cannot read the board file ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise FannsError(f"{path}: invalid YAML ({exc})") from None
    return parse_board(path, data)


def load_board(name_or_path: str) -> Board:
    """A board by name (``u55c``) or by the path of a board file."""
    path = Path(name_or_path).expanduser()
    if path.suffix in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            raise FannsError(f"board file {path} not found")
        return load_board_file(path)
    known = ", ".join(p.stem for p in _board_files())
    if not NAME.match(name_or_path):
        raise FannsError(
            f"unknown board {name_or_path!r}", hint=f"known boards: {known}; or pass the path of a board file"
        )
    candidate = boards_dir() / f"{name_or_path}.yaml"
    if not candidate.is_file():
        known = ", ".join(p.stem for p in _board_files())
        raise FannsError(
            f"unknown board {name_or_path!r}", hint=f"known boards: {known}; or pass the path of a board file"
        )
    board = load_board_file(candidate)
    if board.name != name_or_path:
        raise FannsError(f"{candidate}: key 'name' is {board.name!r} but the file is named {candidate.stem}")
    return board


def board_of_design(name: Any, spec: Any, where: str = "design") -> Board:
    """The board a design was made for: the board file content it carries (`spec`, written when
    the board came from a file of the user's), else the shipped board `name`."""
    check_name(name, f"{where}: board")
    if spec is None:
        return load_board(name)
    board = parse_board(Path(f"{where}: board_file"), spec)
    if board.name != name:
        raise FannsError(f"{where}: board is {name!r} but its board_file describes {board.name!r}")
    return board


def list_boards() -> list[Board]:
    return [load_board_file(p) for p in _board_files()]


# -- CLI ----------------------------------------------------------------------------------------
def _fmt_k(v: float) -> str:
    return f"{v / 1000:.0f}K" if v >= 10000 else f"{v:.0f}"


def boards_command(args: argparse.Namespace) -> int:
    """`fanns boards [BOARD]` (options: `fanns.flow.parsers.boards`)."""
    boards = [load_board(args.board)] if args.board else list_boards()
    table = Table(title="boards (usable resources = device - shell)")
    for col in ("board", "SLRs", "LUT", "FF", "BRAM18", "URAM", "DSP", "memory", "MHz", "PYNQ"):
        table.add_column(col)
    for b in boards:
        mem = "\n".join(f"{m.count}x{m.kind} {m.total_bandwidth_gbps:.0f}GB/s" for m in b.memory)
        table.add_row(
            b.name,
            str(len(b.device_slrs)),
            *(_fmt_k(v) for v in b.total.as_tuple()),
            mem,
            f"{b.clock_mhz:g}",
            "yes" if b.pynq else "no",
        )
    Console().print(table)
    if not args.board:
        print("default clocks (MHz column) and their sources:")
        for b in boards:
            print(f"  {b.name}: {b.clock_mhz:g} MHz: {b.clock_source}")
    if args.board:
        b = boards[0]
        print(f"{b.name}: {b.description}; part {b.part} (family {b.family}); platform {b.platform or '-'}")
        for m in b.memory:
            print(f"  memory: {m.describe()}")
            if m.latency:
                lat = m.latency
                each = (f"{a.replace('_', ' ')} {getattr(lat, a)} cycles ({lat.ns(a):.1f} ns)" for a in ACCESSES)
                print(f"  idle latency: {', '.join(each)} at {lat.clock_mhz:g} MHz; {lat.source}")
        print(f"  clock: {b.clock.describe()}")
        if b.pynq_image:
            print(f"  PYNQ: {b.pynq_image}")
        if b.block_design:
            bd = b.block_design
            hp = "; ".join(f"{k}: {', '.join(v)}" for k, v in bd.hp_ports.items())
            print(f"  block design: {bd.board_part}, {bd.ps}, {bd.pl_clock}, control {bd.control_port}; HP ports {hp}")
        per = Table(title=f"{b.name}: per SLR (usable)")
        for col in ("SLR", *KINDS):
            per.add_column(col)
        for name, r in b.slrs.items():
            per.add_row(name, *(f"{v:.0f}" for v in r.as_tuple()))
        Console().print(per)
        print("sources:")
        for s in b.sources:
            print(f"  - {s}")
    return 0
