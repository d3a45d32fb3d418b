"""Run an IVF-PQ exploration only when no earlier one answers the question.

Why: `fanns sweep` and `fanns generate` both start from an exploration, and training plus the
recall sweeps are the slow part of both. An exploration folder (by default one per dataset, in
the dataset's cache folder) is reused as it is when its `explore.json` was made from the same
data with the same settings and already covers every requested recall goal; otherwise the
explorer runs again into the same folder (its trained indexes are reused by the explorer's own
cache) over the union of the old and the new goals, so a later request for an earlier goal is
still answered without work. The check and the run hold the folder's lock
(`fanns.outputs.folder_lock`): a second run into the same folder waits, then reuses the first's
result; a folder that changed since fanns wrote it is refused, not trusted.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from fanns.choices import DEFAULT_SHARD_ROWS
from fanns.datasets.dataset import Dataset
from fanns.errors import FannsError
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.explore.ivfpq_training import RemoteTraining, default_ms, default_nlists
from fanns.index.goals import RecallGoal, parse_goal
from fanns.model.ivfpq.workload import EXPLORE_VERSION
from fanns.outputs import MANIFEST, folder_lock, read_manifest, verify_files
from fanns.progress import status

OPQ_MODES = {"both": (False, True), "opq": (True,), "no-opq": (False,)}


def lists_settings(args: argparse.Namespace) -> dict:
    """The `ExploreConfig` fields of --lists-on-disk and --shard-rows (the latter only with the former)."""
    if args.shard_rows is not None and not args.lists_on_disk:
        raise FannsError("--shard-rows sizes the shards of --lists-on-disk", hint="add --lists-on-disk, or drop it")
    return {"lists_on_disk": args.lists_on_disk, "shard_rows": args.shard_rows or DEFAULT_SHARD_ROWS}


def int_list(text: str | None, what: str) -> list[int] | None:
    """Parse a comma-separated list of positive integers (None stays None)."""
    if text is None:
        return None
    try:
        values = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        raise FannsError(
            f"--{what}: expected comma-separated integers, got {text!r}", hint=f"e.g. --{what} 64,256"
        ) from None
    if not values or values[0] < 1:
        raise FannsError(f"--{what}: expected positive integers, got {text!r}")
    return values


def config_from_args(args: argparse.Namespace, goals: list[RecallGoal]) -> ExploreConfig:
    if args.queries is not None and args.queries < 1:
        raise FannsError(f"--queries {args.queries}: must be at least 1")
    return ExploreConfig(
        goals=sorted(set(goals)),
        nlists=int_list(args.nlist, "nlist"),
        ms=int_list(args.m, "m"),
        opq=OPQ_MODES[args.opq_mode],
        max_queries=args.queries,
        seed=args.seed,
        **lists_settings(args),
    )


def default_folder(ds: Dataset) -> Path:
    return Path(ds.cache_dir) / "explore"


def _settings(ds: Dataset, cfg: ExploreConfig) -> dict:
    """The `settings` block the explorer would write for `cfg` (defaults resolved)."""
    return {
        "nlists": sorted(set(cfg.nlists or default_nlists(ds.n))),
        "ms": sorted(set(cfg.ms or default_ms(ds.d))),
        "opq": list(cfg.opq),
        "seed": cfg.seed,
        "vec_bits": cfg.vec_bits,
        "lut_bits": cfg.lut_bits,
        "margin": cfg.margin,
    }


def _previous(ds: Dataset, cfg: ExploreConfig, folder: Path) -> dict | None:
    """The folder's explore.json when it was made from the same data and settings, else None
    (an exploration older than held-out recall has no margin in its settings, so it is re-run)."""
    path = folder / "explore.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        same = (
            data.get("version") == EXPLORE_VERSION
            and data["dataset"]["content_hash"] == ds.content_hash()
            and data["dataset"]["queries_used"] == min(ds.nq, cfg.max_queries or ds.nq)
            and all(data["settings"].get(k) == v for k, v in _settings(ds, cfg).items())
        )
    except (json.JSONDecodeError, KeyError, TypeError):
        return None
    return data if same else None


def ensure_exploration(
    ds: Dataset, cfg: ExploreConfig, folder: Path | None = None, remote: RemoteTraining | None = None
) -> tuple[Path, dict, bool]:
    """(folder, explore.json contents, whether it was reused) of an exploration covering `cfg`, in
    `folder` (the user's: an exploration fanns did not write there is refused) or, by default, the
    dataset's cache folder (fanns's own: an entry it cannot check is replaced). `remote`: train
    on that cluster when an exploration has to run."""
    cached = folder is None
    folder = Path(folder) if folder is not None else default_folder(ds)
    with folder_lock(folder):
        if cached and folder.is_dir() and read_manifest(folder) is None:
            # the dataset's cache folder is fanns's own: an entry from a fanns that wrote no manifest
            # cannot be checked or reused, so it is explored again instead of refused
            status(f"{folder}: an exploration cached by an older fanns (no {MANIFEST}); exploring again")
            shutil.rmtree(folder)
        previous = _previous(ds, cfg, folder)
        if previous is not None:
            have = {g["text"] for g in previous["goals"]}
            if all(g.text in have for g in cfg.goals):
                verify_files(folder, ["explore.json"], "exploration")
                status(f"reusing the exploration in {folder} (same data, settings and goals)")
                return folder, previous, True
            cfg.goals = sorted(set(cfg.goals) | {parse_goal(t) for t in have})
        status(f"exploring {ds.name} into {folder} (goals {', '.join(g.text for g in cfg.goals)})")
        return folder, IvfPqExplorer(ds, cfg, folder, remote=remote).run(), False
