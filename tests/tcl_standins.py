"""Run a generated Tcl script against the stand-ins of tests/tcl/ and read back the design it built.

Why: no Vivado or Vitis HLS runs here, so a generated script is checked two ways: a real Tcl
interpreter parses it and runs it to its last line, and the stand-ins record what the vendor
tools would have built (cells, CONFIG properties, interface connections, nets, addresses, the
exported IP) for the tests to compare with the project's own record. The interpreter is Debian's
`tclsh` when installed, else Python's `tkinter.Tcl()` (the same Tcl 8.6 library, in-process).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

STANDINS = Path(__file__).parent / "tcl"
VIVADO = STANDINS / "vivado_bd_standins.tcl"
VITIS_HLS = STANDINS / "vitis_hls_standins.tcl"


def interpreters() -> list[str]:
    """The Tcl interpreters available: "tclsh" and/or "tkinter"."""
    found = ["tclsh"] if shutil.which("tclsh") else []
    try:
        import tkinter  # optional: Python may be built without Tk

        tkinter.Tcl()
        found.append("tkinter")
    except (ImportError, RuntimeError):
        pass
    if not found:
        raise AssertionError("no Tcl interpreter: install Debian's tcl (apt-get install tcl) or a Python with tkinter")
    return found


def _driver(standins: Path, script: Path, record: Path) -> str:
    return (
        f"source {{{standins}}}\n"
        f"if {{[catch {{source {{{script}}}}} msg]}} {{ ::sd::dump {{{record}}}; error $msg }}\n"
        f"::sd::dump {{{record}}}\n"
    )


def run_tcl(standins: Path, script: Path, interpreter: str | None = None) -> list[list[str]]:
    """Run `script` after `standins`; the recorded facts, one list of fields per fact. A Tcl error
    (a syntax error, an unknown command, a stand-in's check) fails with the interpreter's message."""
    interpreter = interpreter or interpreters()[0]
    script = Path(script).resolve()
    record = script.with_name(script.name + ".record")
    text = _driver(standins.resolve(), script, record)
    if interpreter == "tclsh":
        driver = script.with_name(script.name + ".run.tcl")
        driver.write_text(text)  # a script file: tclsh exits non-zero on an error (stdin would go on)
        proc = subprocess.run(["tclsh", str(driver)], capture_output=True, text=True, cwd=script.parent)
        if proc.returncode:
            raise AssertionError(f"tclsh failed on {script.name}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    else:
        import tkinter  # optional: Python may be built without Tk

        tcl = tkinter.Tcl()
        cwd = os.getcwd()  # the scripts `cd` to their project, and this Tcl runs in-process
        try:
            tcl.eval(text)
        except tkinter.TclError as exc:
            raise AssertionError(f"Tcl (tkinter) failed on {script.name}: {exc}") from None
        finally:
            os.chdir(cwd)
    return [line.split("\t") for line in record.read_text().splitlines()]


@dataclass
class BlockDesignRecord:
    """The design a block-design script built, as the stand-ins recorded it."""

    facts: list[list[str]]
    cells: dict[str, str] = field(default_factory=dict)
    config: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    settings: dict[str, str] = field(default_factory=dict)
    links: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    nets: list[list[str]] = field(default_factory=list)
    addresses: list[tuple[str, str, int, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for kind, *rest in self.facts:
            if kind == "cell":
                self.cells[rest[0]] = rest[1]
            elif kind == "prop":
                self.config[rest[0]][rest[1].removeprefix("CONFIG.")] = rest[2]
            elif kind == "setting":
                self.settings[rest[1]] = rest[2]
            elif kind == "intf":
                self.links[rest[0]].add(rest[1])
                self.links[rest[1]].add(rest[0])
            elif kind == "net":
                self.nets.append(rest)
            elif kind == "addr":
                self.addresses.append((rest[0], rest[1], int(rest[2], 16), rest[3]))

    def kinds(self) -> list[str]:
        return [f[0] for f in self.facts]

    def reaches(self, start: str, end: str) -> bool:
        """Whether interface pin `start` reaches `end` through connections and SmartConnects
        (a SmartConnect joins every slave port to every master port)."""
        seen, todo = set(), [start]
        while todo:
            pin = todo.pop()
            if pin == end:
                return True
            if pin in seen:
                continue
            seen.add(pin)
            todo += self.links.get(pin, ())
            cell = pin.split("/")[0]
            if "smartconnect" in self.cells.get(cell, ""):
                todo += [p for p in self.links if p.split("/")[0] == cell]
        return False

    def net_of(self, pin: str) -> list[str]:
        """Every pin on the net(s) that hold `pin`."""
        out = {pin}
        grew = True
        while grew:
            grew = False
            for net in self.nets:
                if out & set(net) and not set(net) <= out:
                    out |= set(net)
                    grew = True
        return sorted(out)
