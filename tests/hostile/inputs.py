"""Hostile values and the files they go into, for the injection and validation suites.

`cli(argv)` runs `fanns.cli.main` in this process and returns (exit code, stderr); `refused`
asserts the rule every hostile input must meet: a non-zero exit, a one-line `fanns: error:`
message naming the input, no traceback. The builders write a valid board file, design.yaml,
explore folder (without a trained index: the hostile value is refused before one is read) and
dataset folder, each with one value replaced.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import yaml

from fanns.boards import boards_dir
from fanns.cli import main
from fanns.model.ivfpq.workload import EXPLORE_VERSION
from fanns.numerics import IvfPqFormat

CONTROL = ["a\nb", "a\x00b", "a\x1b[31mb", "a\u2028b"]
"""Strings with a control or line-separator character: refused everywhere."""
HOSTILE_NAMES = [*CONTROL, "x$(rm -rf y)", "a;b", "a'b\"c", "../x", "/etc/passwd", "a b", "ü"]
"""Strings that are no name (identifier-like token): refused where a name lands in a generated file."""
HOSTILE_NUMBERS = [float("nan"), float("inf"), float("-inf"), -1, 1e30]
"""Numbers no numeric setting takes."""


def cli(capsys, argv: list[str]) -> tuple[int, str]:
    """Run `fanns ARGV` in-process; (exit code, stderr)."""
    capsys.readouterr()
    rc = main(argv)
    return rc, capsys.readouterr().err


def refused(capsys, argv: list[str], *fragments: str) -> str:
    """`fanns ARGV` fails cleanly and its message names every fragment; returns the message."""
    rc, err = cli(capsys, argv)
    assert rc != 0, f"accepted: {argv}"
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("fanns: error: ")]
    assert len(errors) == 1, err
    first = errors[0]
    for fragment in fragments:
        assert fragment in first, f"{fragment!r} not in {first!r}"
    return first


def files_below(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def board_data() -> dict:
    """The shipped u55c board file's content."""
    return yaml.safe_load((boards_dir() / "u55c.yaml").read_text())


def write_yaml(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path


def replaced(data: dict, key: str, value: object) -> dict:
    """A deep copy of `data` with the dotted key (list indices are numbers) set to `value`."""
    out = copy.deepcopy(data)
    *path, last = key.split(".")
    node = out
    for part in path:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


GOALS = {"1-R@10=0.8": 3, "R@10=0.8": 9}
"""Both measures at one target, with different nprobe (the explorer's answers)."""


def explore_folder(folder: Path, record: dict | None = None) -> Path:
    """An explore.json with one IVF-PQ record (16 lists, m 16, d 128) and its .npy files; the
    record's keys are overridden by `record`."""
    nlist, nq = 16, 20
    idx = folder / "indexes"
    idx.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    np.save(idx / "a.list_sizes.npy", np.full(nlist, 600, dtype=np.int64))
    probes = np.stack([rng.permutation(nlist) for _ in range(nq)]).astype(np.int32)
    np.save(idx / "a.probes.npy", probes)
    fmt = IvfPqFormat(d=128, m=16, scale=3.5, ivf_shift=4, lut_shift=2)
    rec = {
        "index": "IVF16,PQ16",
        "nlist": nlist,
        "m": 16,
        "opq": False,
        "format": {k: v for k, v in fmt.to_dict().items() if k != "source"},
        "list_sizes": "indexes/a.list_sizes.npy",
        "probes": "indexes/a.probes.npy",
        "path": "indexes/a.faissindex",
        "goals": {t: {"reached": True, "nprobe": p, "recall": 0.8, "hw_recall": 0.8} for t, p in GOALS.items()},
        "curve": {"R@10": [0.1 * i for i in range(1, 11)] + [1.0] * 6, "1-R@10": [0.3] + [0.9] * 15},
    }
    rec["selection_curve"] = rec["holdout_curve"] = rec["curve"]
    rec["selection_sd_curve"] = rec["sd_curve"] = {k: [0.1] * len(v) for k, v in rec["curve"].items()}
    rec.update(record or {})
    split = {"selection_queries": 100, "holdout_queries": 100, "training_sd": 0.0}
    head = {"version": EXPLORE_VERSION, "recall_split": split}
    (folder / "explore.json").write_text(json.dumps({**head, "indexes": [rec], "dataset": {"name": "x"}}))
    return folder


def dataset_folder(folder: Path, base: np.ndarray | None = None, queries: np.ndarray | None = None) -> Path:
    """base.npy / query.npy (clustered float32, 2,000 x 16 by default) in `folder`."""
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((8, 16)) * 3
    x = (centres[rng.integers(0, 8, 2040)] + rng.standard_normal((2040, 16))).astype(np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "base.npy", x[:2000] if base is None else base)
    np.save(folder / "query.npy", x[2000:] if queries is None else queries)
    return folder
