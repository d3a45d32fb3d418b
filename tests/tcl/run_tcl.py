"""Run a generated Tcl script under a real Tcl interpreter against the Vivado stand-ins of
`ipx_standins.tcl`, and turn the calls it made into the design it built.

The interpreter is `tclsh` when the machine has one (Debian's `tcl` package), else Python's own
Tcl 8.6 through `tkinter.Tcl()` (part of CPython's standard build, no display needed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

STANDINS = Path(__file__).with_name("ipx_standins.tcl")
MARK = "--- stand-in record ---"


class TclError(Exception):
    """The script stopped before its end (its Tcl error message)."""


def _program(script: Path, argv: list[str]) -> str:
    """Tcl that sources the stand-ins, then the script with `argv`, and returns the calls as JSON."""
    words = " ".join("{" + a + "}" for a in argv)
    return (
        f"source {{{STANDINS}}}\n"
        f"set argv [list {words}]\nset argc {len(argv)}\nset argv0 {{{script}}}\n"
        f'if {{[catch {{source {{{script}}}}} msg]}} {{error "script stopped: $msg"}}\n'
        "standin::json\n"
    )


def interpreter() -> str:
    """Which Tcl runs the scripts: "tclsh" or "tkinter"."""
    return "tclsh" if shutil.which("tclsh") else "tkinter"


def run_script(script: Path, argv: list[str] = (), via: str | None = None) -> list[dict]:
    """Every Vivado command the script ran, in order: [{cmd, args}]."""
    program = _program(Path(script).resolve(), list(argv))
    if (via or interpreter()) == "tclsh":
        program = program.replace("\nstandin::json\n", f"\nputs {{{MARK}}}\nputs [standin::json]\n")
        with tempfile.TemporaryDirectory() as tmp:  # a script file: tclsh stops at its first error (stdin would not)
            path = Path(tmp) / "run.tcl"
            path.write_text(program)
            done = subprocess.run(["tclsh", str(path)], text=True, capture_output=True, check=False)
        if done.returncode:
            raise TclError(done.stderr.strip())
        return json.loads(done.stdout.split(MARK + "\n", 1)[1])  # after what the script itself printed
    import tkinter  # the fallback interpreter; only when there is no tclsh

    try:
        return json.loads(tkinter.Tcl().eval(program))
    except tkinter.TclError as exc:
        raise TclError(str(exc)) from None


@dataclass
class BusInterface:
    name: str
    properties: dict[str, str] = field(default_factory=dict)
    port_maps: dict[str, str] = field(default_factory=dict)  # logical -> physical
    parameters: dict[str, str] = field(default_factory=dict)
    clock: str | None = None  # the clock ipx::associate_bus_interfaces gave it


@dataclass
class PackagedIp:
    """What an IP-packaging script built, from its calls."""

    calls: list[dict]
    core: dict[str, str] = field(default_factory=dict)
    bus_interfaces: dict[str, BusInterface] = field(default_factory=dict)
    memory_maps: dict[str, dict[str, str]] = field(default_factory=dict)  # block -> properties
    address_spaces: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def vlnv(self) -> str:
        return ":".join(self.core[k] for k in ("vendor", "library", "name", "version"))

    def first(self, cmd: str) -> list[str]:
        return next(c["args"] for c in self.calls if c["cmd"] == cmd)

    def all(self, cmd: str) -> list[list[str]]:
        return [c["args"] for c in self.calls if c["cmd"] == cmd]

    @staticmethod
    def option(args: list[str], name: str) -> str | None:
        return args[args.index(name) + 1] if name in args else None


def packaged_ip(calls: list[dict]) -> PackagedIp:
    """The IP the calls built: core properties, bus interfaces with port maps and parameters,
    memory maps and address spaces."""
    ip = PackagedIp(calls)
    handles: dict[str, tuple[str, str]] = {}  # handle -> (kind, key)
    for call in calls:
        cmd, args = call["cmd"], call["args"]
        if cmd == "ipx::add_bus_interface":
            ip.bus_interfaces[args[0]] = BusInterface(args[0])
        elif cmd == "ipx::remove_bus_interface":
            ip.bus_interfaces.pop(args[0])
        elif cmd == "ipx::add_port_map":
            bus = args[1].split(":", 1)[1]
            handles[f"portmap:{bus}:{args[0]}"] = ("portmap", bus)
        elif cmd == "ipx::add_bus_parameter":
            bus = args[1].split(":", 1)[1]
            handles[f"busparam:{bus}:{args[0]}"] = ("param", bus)
        elif cmd == "ipx::add_address_block":
            ip.memory_maps[args[1].split(":", 1)[1]] = {}
        elif cmd == "ipx::add_address_space":
            ip.address_spaces[args[0]] = {}
        elif cmd == "ipx::associate_bus_interfaces":
            ip.bus_interfaces[args[0]].clock = args[1]
        elif cmd == "set_property":
            name, value, obj = args
            kind = obj.split(":", 1)[0]
            if obj == "core":
                ip.core[name] = value
            elif kind == "busif":
                ip.bus_interfaces[obj.split(":", 1)[1]].properties[name] = value
            elif kind == "portmap":
                assert name == "physical_name", name
                _, bus, logical = obj.split(":")
                ip.bus_interfaces[bus].port_maps[logical] = value
            elif kind == "busparam":
                assert name == "value", name
                _, bus, param = obj.split(":")
                ip.bus_interfaces[bus].parameters[param] = value
            elif kind == "block":
                ip.memory_maps[obj.split(":")[1]][name] = value
            elif kind == "addrspace":
                ip.address_spaces[obj.split(":", 1)[1]][name] = value
    return ip
