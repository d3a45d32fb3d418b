"""Packaging glue: ship the top-level data folders inside the wheel.

`templates/`, `hls/`, `boards/`, `sim/` and `rtl/` live at the top of the repository (so a newcomer
finds them), but an installed `fanns` must carry them too. They are mapped to the package
`fanns._share.<folder>`; `fanns.paths` finds them in either place. Every folder that ships files
is a package of its own (data folders as namespace packages), so setuptools installs each folder's
files without warning that a folder is missing from the packages.
"""

from setuptools import find_namespace_packages, setup

SHARED = ["templates", "hls", "boards", "sim", "rtl"]
NO_CACHE = ["*__pycache__*"]


def shared_packages(folder: str) -> dict[str, str]:
    """`fanns._share.FOLDER` and one package per subfolder, each mapped to its folder."""
    subs = find_namespace_packages(where=folder, exclude=NO_CACHE)
    return {f"fanns._share.{folder}": folder} | {
        f"fanns._share.{folder}.{sub}": f"{folder}/{sub.replace('.', '/')}" for sub in subs
    }


SHARED_DIRS = {name: path for folder in SHARED for name, path in shared_packages(folder).items()}
PACKAGES = find_namespace_packages(include=["fanns", "fanns.*"], exclude=NO_CACHE)

setup(
    packages=PACKAGES + list(SHARED_DIRS),
    package_dir={"": ".", **SHARED_DIRS},
    package_data={name: ["*"] for name in SHARED_DIRS}
    | {p: ["*.json"] for p in PACKAGES if p.startswith("fanns.pe.tables")}
    | {"fanns.model.graph.csrc": ["*"]},
)
