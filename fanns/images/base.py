"""What the memory image sets of both accelerators share: the `Image`, and one folder format —
every image as ``<name>.bin`` plus ``manifest.json`` listing each with its size and sha256.

Why one module: the IVF-PQ packer (`fanns.images.ivfpq`) and the graph packer (`fanns.images.graph`)
differ in what their images hold, not in how a set is written, read back and checked, so a
corrupt or stale image is caught the same way for both.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from fanns.errors import FannsError
from fanns.outputs import FileContent, Streamed, atomic_path, write_content
from fanns.paths import inside

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Image:
    """One memory image: `use` is a channel use of design.yaml, or ``rom`` for the on-chip parts
    of the index (kept in the I/O channel, copied on chip at index load). `content` is the bytes,
    or for an image too large to hold twice (a PQ-code channel) a `Streamed` producer that
    writing and hashing read a piece at a time."""

    name: str
    use: str
    memory: str
    channel: int
    content: bytes | Streamed = field(repr=False)
    layout: dict = field(default_factory=dict)

    @property
    def data(self) -> bytes:
        """The image in memory (joined once, if streamed: for simulators and drivers)."""
        return self.content if isinstance(self.content, bytes) else self._joined

    @cached_property
    def _joined(self) -> bytes:
        return self.content.join()

    @property
    def nbytes(self) -> int:
        return len(self.content)

    @property
    def sha256(self) -> str:
        if isinstance(self.content, bytes):
            return hashlib.sha256(self.content).hexdigest()
        return self.content.sha256

    @property
    def file(self) -> str:
        return f"{self.name}.bin"

    def array(self) -> np.ndarray:
        """A ROM image (or a streamed OPQ matrix, without its beat padding) as its array (dtype and
        shape from the layout)."""
        shape = self.layout["shape"]
        return np.frombuffer(self.data, dtype=np.dtype(self.layout["dtype"]), count=int(np.prod(shape))).reshape(shape)

    def record(self) -> dict:
        return {
            "name": self.name,
            "file": self.file,
            "use": self.use,
            "memory": self.memory,
            "channel": self.channel,
            "bytes": self.nbytes,
            "sha256": self.sha256,
            "layout": self.layout,
        }


@dataclass(frozen=True)
class ImageSet(ABC):
    """Base of an accelerator's image set: its images; subclasses add their I/O layout and say
    what `manifest.json` holds besides the image records."""

    images: tuple[Image, ...]

    def get(self, name: str) -> Image:
        for img in self.images:
            if img.name == name:
                return img
        raise KeyError(name)

    @abstractmethod
    def manifest(self) -> dict:
        """The contents of manifest.json: version, kind-specific layouts, `Image.record` of every image."""

    def files(self) -> dict[str, FileContent]:
        """Every file of the folder (name -> bytes, or `Streamed` for a streamed image): the
        images, then manifest.json."""
        out: dict[str, FileContent] = {img.file: img.content for img in self.images}
        out[MANIFEST] = (json.dumps(self.manifest(), indent=1, sort_keys=True) + "\n").encode()
        return out

    def write(self, folder: Path) -> Path:
        """Write every image and manifest.json into `folder`; return the manifest path."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name, content in self.files().items():
            with atomic_path(folder / name) as tmp:
                write_content(tmp, content)
        return folder / MANIFEST


def read_manifest(folder: Path) -> dict:
    """The manifest of an image folder (the caller checks its version and kind)."""
    try:
        return json.loads((Path(folder) / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise FannsError(f"{folder}: cannot read {MANIFEST} ({exc})", hint="regenerate the memory images") from None


def read_images(folder: Path, manifest: dict) -> tuple[Image, ...]:
    """The images `manifest` lists, each checked against its recorded size and sha256."""
    images = []
    if not isinstance(manifest, dict) or not isinstance(manifest.get("images"), list):
        raise FannsError(f"{folder}/{MANIFEST}: no list of images", hint="regenerate the memory images")
    for rec in manifest["images"]:
        if not isinstance(rec, dict):
            raise FannsError(f"{folder}/{MANIFEST}: an image record is not a mapping", hint="regenerate the images")
        path = inside(Path(folder), rec.get("file"), f"{Path(folder) / MANIFEST}: file")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise FannsError(
                f"{path}: cannot read the memory image ({exc.strerror})", hint="regenerate the memory images"
            ) from None
        try:
            if len(data) != rec["bytes"] or hashlib.sha256(data).hexdigest() != rec["sha256"]:
                raise FannsError(
                    f"{path}: size or sha256 differs from {MANIFEST}", hint="the image is corrupt; regenerate it"
                )
            images.append(Image(rec["name"], rec["use"], rec["memory"], rec["channel"], data, rec["layout"]))
        except (KeyError, TypeError) as exc:
            raise FannsError(
                f"{folder}/{MANIFEST}: incomplete image record ({exc})", hint="regenerate the images"
            ) from None
    return tuple(images)
