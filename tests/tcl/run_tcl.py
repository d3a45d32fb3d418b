"""The one runner of generated Tcl scripts against the stand-ins of this folder, and the IP an
IP-packaging script builds (`ipx_standins.tcl`).

Why one runner: every generated script (IP packaging, .xo packaging, Vitis HLS export, Vivado
block design) is checked the same way: a real Tcl interpreter sources the stand-ins of the vendor
commands, then runs the script to its last line, and the stand-ins' record is read back. The
interpreter is `tclsh` when the machine has one (Debian's `tcl` package), else (or when asked)
Python's own Tcl 8.6 through `tkinter.Tcl()` (in-process, no display needed).
`tests/tcl_standins.py` reads the block-design record; `packaged_ip` below the IP's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).parent
IPX = HERE / "ipx_standins.tcl"
VIVADO = HERE / "vivado_bd_standins.tcl"
VITIS_HLS = HERE / "vitis_hls_standins.tcl"
JSON_DUMP = "set fanns_f [open $fanns_out w]; puts -nonewline $fanns_f [standin::json]; close $fanns_f"
"""How the IP-packaging stand-ins write their record (the block-design ones have `::sd::dump`)."""
SD_DUMP = "::sd::dump $fanns_out"


class TclError(AssertionError):
    """The script stopped before its end (the interpreter's message)."""


def interpreters() -> list[str]:
    """The Tcl interpreters available, tclsh first: "tclsh" and/or "tkinter"."""
    found = ["tclsh"] if shutil.which("tclsh") else []
    try:
        import tkinter  # optional: Python may be built without Tk

        tkinter.Tcl()
        found.append("tkinter")
    except (ImportError, RuntimeError):
        pass
    return found


def interpreter() -> str:
    """The interpreter `run` uses by default."""
    found = interpreters()
    if not found:
        raise TclError("no Tcl interpreter: install Debian's tcl (apt-get install tcl) or a Python with tkinter")
    return found[0]


def _driver(standins: Path, script: Path, argv: list[str], dump: str, out: Path) -> str:
    """Tcl that sources the stand-ins, runs the script with `argv` (from its folder), writes the
    record to `out` (also when the script stopped) and fails with the script's message."""
    words = " ".join("{" + a + "}" for a in argv)
    return (
        f"source {{{standins}}}\n"
        f"set argv [list {words}]\nset argc {len(argv)}\nset argv0 {{{script}}}\n"
        f"set fanns_out {{{out}}}\n"
        f"set fanns_failed [catch {{source {{{script}}}}} fanns_msg]\n"
        f"{dump}\n"
        'if {$fanns_failed} {error "script stopped: $fanns_msg"}\n'
    )


def run(standins: Path, script: Path, argv: list[str] = (), dump: str = SD_DUMP, via: str | None = None) -> str:
    """Run `script` with `argv` after `standins` under `via` (default: `interpreter()`); the record
    `dump` wrote. A Tcl error (a syntax error, an unknown command, a stand-in's check) raises
    `TclError` with the interpreter's message."""
    via = via or interpreter()
    script = Path(script).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        out, driver = Path(tmp) / "record", Path(tmp) / "run.tcl"
        program = _driver(Path(standins).resolve(), script, list(argv), dump, out)
        if via == "tclsh":
            driver.write_text(program)  # a script file: tclsh stops at its first error (stdin would go on)
            done = subprocess.run(
                ["tclsh", str(driver)], text=True, capture_output=True, check=False, cwd=script.parent
            )
            if done.returncode:
                raise TclError(f"tclsh failed on {script.name}: {done.stderr.strip()[-3000:]}")
        else:
            import tkinter  # optional: Python may be built without Tk

            cwd = os.getcwd()  # the scripts may `cd`, and this Tcl runs in-process
            try:
                os.chdir(script.parent)
                tkinter.Tcl().eval(program)
            except tkinter.TclError as exc:
                raise TclError(f"Tcl (tkinter) failed on {script.name}: {exc}") from None
            finally:
                os.chdir(cwd)
        return out.read_text()


def run_script(script: Path, argv: list[str] = (), via: str | None = None) -> list[dict]:
    """Every Vivado command an IP-packaging script ran, in order: [{cmd, args}]."""
    return json.loads(run(IPX, script, argv, JSON_DUMP, via))


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
