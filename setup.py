"""Packaging glue: ship the top-level data folders inside the wheel.

`templates/`, `hls/`, `boards/`, `sim/` and `rtl/` live at the top of the repository (so a newcomer
finds them), but an installed `fanns` must carry them too. They are mapped to the package
`fanns._share.<folder>`; `fanns.paths` finds them in either place.
"""

from setuptools import find_packages, setup

SHARED = ["templates", "hls", "boards", "sim", "rtl"]

setup(
    packages=find_packages(include=["fanns", "fanns.*"]) + [f"fanns._share.{d}" for d in SHARED],
    package_dir={"": ".", **{f"fanns._share.{d}": d for d in SHARED}},
    package_data={f"fanns._share.{d}": ["**/*"] for d in SHARED}
    | {"fanns.pe": ["tables/**/*.json"], "fanns.model.graph": ["csrc/*"]},
)
