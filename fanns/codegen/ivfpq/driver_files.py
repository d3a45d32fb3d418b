"""`PROJECT/driver/`: the ready-to-run board script and its README, added to every generated
project (HLS and RTL) by `add_driver`, the one function both project writers call.

Why generated into the project: on the board's host the user has the project folder and
`pip install fanns[pynq]`; `python driver/run_on_board.py --queries FILE` is then all it takes.
The script is a thin command line over `fanns.driver` (the same code every backend runs).
"""

from __future__ import annotations

from fanns.outputs import FileContent
from fanns.templating import environment

PROJECT_VERSION = 1
"""Version of the project layout the driver reads; the generators write it into fanns_project.json
(`fanns.codegen.ivfpq.driver_files.add_driver`). A project without it, or with another, must be regenerated."""

DRIVER_FILES = {"driver/run_on_board.py": "run_on_board.py.j2", "driver/README.md": "README.md.j2"}


def add_driver(files: dict[str, FileContent], record: dict, kind: str, zynq: dict | None = None) -> None:
    """Add `driver/` to a project's `files` and the driver's project version to its `record`
    (fanns_project.json); `kind` is "hls" or "rtl"; `zynq`: the block-design record of a Zynq build."""
    env = environment("driver", trim_blocks=False)
    values = {"kind": kind, "record": record, "version": PROJECT_VERSION, "zynq": zynq}
    for path, template in DRIVER_FILES.items():
        files[path] = env.get_template(template).render(values).encode()
    record["project_version"] = PROJECT_VERSION
