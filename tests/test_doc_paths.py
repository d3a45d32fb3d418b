"""Every repository path a document names exists: a newcomer follows the docs to the code, and a
path that moved must not send them nowhere (issue 51: docs/architecture.md named four files gone)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])
TOP = ("fanns", "tests", "benchmarks", "docs", "boards", "templates", "scripts", "examples", "sim")
SUBPACKAGES = tuple(sorted(p.name for p in (ROOT / "fanns").iterdir() if (p / "__init__.py").is_file()))
PATH = re.compile(
    r"(?<![\w./-])((?:" + "|".join(TOP) + r")/[\w./*<>-]*[\w*/>]"
    r"|(?:" + "|".join(SUBPACKAGES) + r")/[\w/*-]*(?:\.py|/|\.\w+(?=[^\w/]|$)))"
)
"""A path from the repository's root (one of its top folders) or from the package's (a subpackage
of fanns, as the tables of docs/architecture.md name them), then name characters (a glob's * too)."""
OTHER_TREES = {("docs/datasets.md", "docs/source/"): "a folder of the ipython sdist the text corpus reads"}
"""Paths a document names in another tree than this repository's, with where they live."""


def named_paths(text: str) -> set[str]:
    """The repository paths a document names in code spans and links (`fanns/pe/`, `docs/x.md`,
    `tests/a.py::test`), without a test id's `::` part."""
    blocks = re.findall(r"(?ms)^```[^\n]*\n(.*?)^```", text)
    prose = re.sub(r"(?ms)^```[^\n]*\n.*?^```", "", text)
    spans = blocks + re.findall(r"`([^`]+)`", prose) + re.findall(r"\]\(([^)]+)\)", prose)
    return {m.split("::")[0] for span in spans for m in PATH.findall(span)}


def exists(path: str) -> bool:
    """The path exists from the repository's root or, for a subpackage's path, from fanns/; a
    module path may end in one of its names (`sim/graph/rtl.run_registers`)."""
    path = re.sub(r"<[^>]*>", "*", path)  # tests/pe/test_<name>.py: a pattern
    head, _, last = path.rpartition("/")
    module = f"{head}/{last.split('.')[0]}.py" if "." in last and not last.endswith((".py", ".md")) else path
    bases = [ROOT, ROOT / "fanns"] if path.split("/")[0] in SUBPACKAGES else [ROOT]
    return any(any(base.glob(path)) or (base / module).exists() for base in bases)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_document_names_exists(doc):
    text = doc.read_text()
    # a link relative to the document (docs/a.md linking b.md) resolves from the document's folder
    links = {m for m in re.findall(r"\]\(([\w./-]+\.md)\)", text) if not m.startswith(TOP)}
    name = str(doc.relative_to(ROOT))
    missing = sorted(p for p in named_paths(text) if not exists(p) and (name, p) not in OTHER_TREES)
    missing += sorted(link for link in links if not (doc.parent / link).exists())
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_a_moved_path_is_caught():
    assert named_paths("see `fanns/pe/ivf_dist.py` and [x](docs/none.md), `tests/a.py::t[1]`") == {
        "fanns/pe/ivf_dist.py",
        "docs/none.md",
        "tests/a.py",
    }
    assert not exists("fanns/pe/no_such_pe.py") and exists("fanns/pe/*.py")
    assert exists("index/ivfpq.py") and exists("sim/graph/rtl.run_registers") and not exists("index/gone.py")
