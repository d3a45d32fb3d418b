"""The folder `fanns generate` writes, for IVF-PQ and graph designs alike: each face's project
under its own folder (`hls/`, `rtl/`), one copy of the memory images and test data, and a
`driver/` link.

Why one layout: each face stays exactly the project its own generator writes, so `make -C hls
csim`, `fanns sim PROJECT/rtl` and `fanns run` (`fanns.driver.project.face_folder`) work on both
kinds unchanged. The memory images and the test data are the same bytes for both faces (checked
here), so they live once in `data/images/` and `data/test/`, and each face's `images/` and
`data/` are relative symbolic links to them (the folder can be moved or archived with `tar`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from fanns.choices import FACES
from fanns.errors import FannsError
from fanns.outputs import FileContent, write_content

MARKER = "fanns_generate.json"
SHARED = {"images/": "data/images/", "data/": "data/test/"}
"""Folder of a face's files -> where the one shared copy lives in the project."""


@dataclass
class ProjectLayout:
    """Every regular file (relative path -> bytes, or `Streamed` for a streamed memory image) and
    every symbolic link (path -> target)."""

    files: dict[str, FileContent] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)

    def add_face(self, kind: str, files: dict[str, FileContent]) -> None:
        """Put a face's project under `kind/`, its images and test data into the shared copy."""
        for rel, content in sorted(files.items()):
            prefix = next((p for p in SHARED if rel.startswith(p)), None)
            if prefix is None:
                self.files[f"{kind}/{rel}"] = content
                continue
            dest = SHARED[prefix] + rel[len(prefix) :]
            if self.files.setdefault(dest, content) != content:
                raise FannsError(
                    f"the {kind} face's {rel} differs from the other face's ({dest})",
                    hint="a generator bug: both faces must pack the same images and test data; please report it",
                )
        for prefix, dest in SHARED.items():
            self.links[f"{kind}/{prefix.rstrip('/')}"] = os.path.join("..", dest.rstrip("/"))

    def faces(self) -> list[str]:
        return [k for k in FACES if f"{k}/design.yaml" in self.files]

    def driver_face(self) -> str | None:
        """The face whose driver/ the project's driver/ is (None: the generators wrote none)."""
        return next((k for k in self.faces() if any(p.startswith(f"{k}/driver/") for p in self.files)), None)

    def write(self, root: Path) -> None:
        root = Path(root)
        for rel, content in sorted(self.files.items()):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            write_content(path, content)
        for rel, target in sorted(self.links.items()):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, root / rel)


def parse_backends(text: str) -> tuple[str, ...]:
    """'hls,rtl' -> ('hls', 'rtl'), in canonical order; unknown names are an error."""
    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in FACES]
    if bad or not names:
        raise FannsError(
            f"--backend {text!r}: expected a comma-separated subset of {', '.join(FACES)}",
            hint="e.g. --backend hls,rtl",
        )
    return tuple(b for b in FACES if b in names)
