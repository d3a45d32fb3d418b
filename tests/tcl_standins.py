"""Read back the design a generated block-design or Vitis HLS script built under the stand-ins
of tests/tcl/ (run by the one runner, `tests.tcl.run_tcl`).

Why: no Vivado or Vitis HLS runs here, so a generated script is checked two ways: a real Tcl
interpreter parses it and runs it to its last line, and the stand-ins record what the vendor
tools would have built (cells, CONFIG properties, interface connections, nets, addresses, the
exported IP) for the tests to compare with the project's own record.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tests.tcl.run_tcl import VITIS_HLS, VIVADO, interpreters, run

__all__ = ["VITIS_HLS", "VIVADO", "BlockDesignRecord", "interpreters", "run_tcl"]


def run_tcl(standins: Path, script: Path, interpreter: str | None = None) -> list[list[str]]:
    """Run `script` after `standins` (`VIVADO` or `VITIS_HLS`); the recorded facts, one list of
    fields per fact."""
    return [line.split("\t") for line in run(standins, script, via=interpreter).splitlines()]


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
