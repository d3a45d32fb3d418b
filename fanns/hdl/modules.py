"""Converting a design's repeated parts once: each distinct submodule becomes one Verilog module.

Why: Amaranth elaborates and converts every instance of a component on its own, and yosys then
writes one Verilog module per instance. A whole accelerator holds tens of identical PEs and
hundreds of identical FIFOs (the demo design: 314 modules of 69 distinct bodies, 8.4 MB of
Verilog), so converting it took most of `fanns generate`'s code-generation step, and the text the
simulator compiles grew with the PE count instead of with the number of distinct PEs.

While a design is converted inside `ModuleLibrary()` (the kernel and bench emitters do this),
`separate(component, key)` returns a stand-in with the component's signature that elaborates into
an `Instance` of module `fanns_<prefix>_<digest of key>`; the first request for a key converts
the component alone (`to_verilog`), later ones reuse that module. `ModuleLibrary.verilog()` is the
text of every module, appended to the design's. Outside a library `separate` returns the
component itself, so a PE's own tests and Amaranth simulations see the plain component. The key
must determine the module's Verilog exactly (a PE's parameters; a FIFO's width and depth): two
components of one key must be the same hardware. That is also what lets a library take a `store`
(`ModuleStore`; `fanns.tools.verilogcache` keeps modules across runs by their key's `repr`, the
code and the tools): a module the store holds is not converted again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from amaranth import ClockSignal, Instance, Module, ResetSignal, Value
from amaranth.hdl import ValueCastable
from amaranth.lib import wiring

from fanns.errors import FannsError

CLOCK_PORTS = {"clk": ClockSignal, "rst": ResetSignal}
"""The ports Amaranth adds to a converted component that uses the `sync` domain."""

_HEADER = re.compile(r"^module (\S+) ?\(([^;]*)\);", re.M)


def module_ports(verilog: str, name: str) -> list[str]:
    """The port names of module `name` in `verilog` (yosys's write_verilog header)."""
    for found in _HEADER.finditer(verilog):
        if found.group(1) == name:
            return [p.strip().lstrip("\\") for p in found.group(2).split(",") if p.strip()]
    raise FannsError(f"no module {name} in its own conversion", hint="report it: the Verilog writer changed")


class ModuleStore(Protocol):
    """Where converted modules are kept beyond one conversion, by module name and key `repr`."""

    def get(self, name: str, key: str) -> str | None: ...

    def put(self, name: str, key: str, text: str) -> None: ...


class ModuleLibrary:
    """The separately converted modules of one design conversion (see the module docstring);
    with a `store`, modules it holds are taken from it and the others kept in it."""

    def __init__(self, to_verilog: Callable[[wiring.Component, str], str], store: ModuleStore | None = None):
        self._to_verilog = to_verilog
        self._store = store
        self._modules: dict[str, tuple[str, list[str]]] = {}
        self._keys: dict[str, Hashable] = {}
        self._token = None

    def __enter__(self) -> ModuleLibrary:
        self._token = _ACTIVE.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.reset(self._token)

    def module(self, key: Hashable, prefix: str, make: Callable[[], wiring.Component]) -> tuple[str, list[str]]:
        """The module name and ports of `key`, converting `make()` the first time."""
        name = f"fanns_{prefix}_{hashlib.sha256(repr(key).encode()).hexdigest()[:12]}"
        if self._keys.setdefault(name, key) != key:
            raise FannsError(f"two parts share the module name {name}", hint="report it: a digest collision")
        if name not in self._modules:
            text = self._store.get(name, repr(key)) if self._store is not None else None
            if text is None:
                token = _ACTIVE.set(None)  # a module's own submodules are converted with it
                try:
                    text = self._to_verilog(make(), name)
                finally:
                    _ACTIVE.reset(token)
                if self._store is not None:
                    self._store.put(name, repr(key), text)
            self._modules[name] = (text, module_ports(text, name))
        return name, self._modules[name][1]

    def verilog(self) -> str:
        """Every module's Verilog, by name (deterministic)."""
        return "".join(self._modules[name][0] for name in sorted(self._modules))


_ACTIVE: ContextVar[ModuleLibrary | None] = ContextVar("fanns_module_library", default=None)


@contextmanager
def inline() -> Iterator[None]:
    """Within: every part is elaborated in place, as outside a `ModuleLibrary`, even while one is
    active (a whole-design measurement such as `fanns.hdl.verilog.comb_path` must see through them)."""
    token = _ACTIVE.set(None)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


class _Stand(wiring.Component):
    """Elaborates into an Instance of a separately converted module, with the signature's members
    as its ports (named as Amaranth names a converted component's: the member path joined by `__`).
    Other attributes are the original component's (its parameters), except its signals: those
    are inside the module, out of the design's reach."""

    def __init__(self, original: wiring.Component, module: str, ports: list[str]):
        super().__init__(original.signature)
        self._original, self._module, self._ports = original, module, ports

    def __getattr__(self, name: str):
        value = getattr(self.__dict__.get("_original"), name)
        if isinstance(value, (Value, ValueCastable)):
            raise AttributeError(f"{name} is a signal inside module {self._module}: only its ports are reachable")
        return value

    def elaborate(self, platform) -> Module:
        m = Module()
        args, covered = {}, set()
        for path, member, value in self.signature.flatten(self):
            name = "__".join(map(str, path))
            covered.add(name)
            args[("i_" if member.flow == wiring.In else "o_") + name] = (
                value.as_value() if isinstance(value, ValueCastable) else value
            )
        for name, signal in CLOCK_PORTS.items():
            if name in self._ports:
                covered.add(name)
                args[f"i_{name}"] = signal("sync")
        missing = sorted(set(self._ports) - covered)
        if missing:
            raise FannsError(
                f"module {self._module} has ports its signature does not name: {', '.join(missing)}",
                hint="a separately converted part may use only its signature and the sync domain",
            )
        m.submodules.part = Instance(self._module, **args)
        return m


def separate(
    component: wiring.Component,
    key: Hashable,
    prefix: str,
    make: Callable[[], wiring.Component] | None = None,
) -> wiring.Component:
    """`component`, or — while a `ModuleLibrary` is active — a stand-in for it that instantiates the
    module of `key` (converted from `make()`, default `component`, the first time)."""
    library = _ACTIVE.get()
    if library is None:
        return component
    name, ports = library.module(key, prefix, make or (lambda: component))
    component._MustUse__silence = True  # stands in the design instead (Amaranth's unused-elaboratable warning)
    return _Stand(component, name, ports)
