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

from fanns.checks import arg_int
from fanns.datasets.dataset import Dataset
from fanns.errors import FannsError
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.explore.ivfpq_training import RemoteTraining, default_ms, default_nlists
from fanns.index.goals import RecallGoal, parse_goal
from fanns.index.ivfpq_lists import DEFAULT_SHARD_ROWS
from fanns.model.ivfpq.workload import EXPLORE_VERSION
from fanns.outputs import MANIFEST, folder_lock, read_manifest, verify_files
from fanns.progress import status

OPQ_MODES = {"both": (False, True), "opq": (True,), "no-opq": (False,)}


def add_index_grid_options(parser: argparse.ArgumentParser, group: argparse._ArgumentGroup) -> None:
    """The --nlist/--m/OPQ options that pick the index grid, shared by explore and the reuse-aware commands."""
    group.add_argument("--nlist", help="comma-separated numbers of IVF cells (default: powers of two around sqrt(N))")
    group.add_argument(
        "--m",
        help=(
            "comma-separated numbers of PQ sub-quantizers (default: 16, or the largest divisor of d below it; "
            "from 256-d on also the largest divisor of d up to min(d/8, 128), e.g. 16,48 at 384-d)"
        ),
    )
    mode = group.add_mutually_exclusive_group()
    mode.add_argument(
        "--opq", dest="opq_mode", action="store_const", const="opq", help="only indexes with an OPQ rotation"
    )
    mode.add_argument(
        "--no-opq", dest="opq_mode", action="store_const", const="no-opq", help="only indexes without OPQ"
    )
    mode.add_argument(
        "--both", dest="opq_mode", action="store_const", const="both", help="with and without OPQ (default)"
    )
    parser.set_defaults(opq_mode="both")


def add_lists_options(group: argparse._ArgumentGroup) -> None:
    """--lists-on-disk and --shard-rows (`lists_settings` reads them), shared by explore and the
    commands that explore on the way."""
    group.add_argument(
        "--lists-on-disk",
        action="store_true",
        help=(
            "keep each index's inverted lists (every base vector's code and id) in a file beside it, faiss's "
            "on-disk lists, filled shard by shard: RAM holds one shard's lists, not the whole index's "
            "(for sets of 100M+ vectors; docs/scale.md). Searches read the file memory-mapped"
        ),
    )
    group.add_argument(
        "--shard-rows",
        type=arg_int(1),
        help=(
            "with --lists-on-disk: base vectors added in RAM before they go to the file "
            f"(default: {DEFAULT_SHARD_ROWS:,})"
        ),
    )


def lists_settings(args: argparse.Namespace) -> dict:
    """The `ExploreConfig` fields of --lists-on-disk and --shard-rows (the latter only with the former)."""
    if args.shard_rows is not None and not args.lists_on_disk:
        raise FannsError("--shard-rows sizes the shards of --lists-on-disk", hint="add --lists-on-disk, or drop it")
    return {"lists_on_disk": args.lists_on_disk, "shard_rows": args.shard_rows or DEFAULT_SHARD_ROWS}


def add_explore_options(parser: argparse.ArgumentParser) -> None:
    """The exploration options shared by the commands that run an exploration on the way."""
    g = parser.add_argument_group("exploration (reused when an earlier one matches)")
    g.add_argument(
        "--explore-dir",
        metavar="DIR",
        help="exploration folder to reuse or fill (default: one per dataset in its cache folder)",
    )
    add_index_grid_options(parser, g)
    g.add_argument("--queries", type=int, help="use only the first N queries of the dataset (default: all)")
    g.add_argument("--seed", type=int, default=0, help="seed of the training sample and k-means (default 0)")
    add_lists_options(g)


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
        "training_sd": cfg.training_sd,
    }


def _previous(ds: Dataset, cfg: ExploreConfig, folder: Path) -> dict | None:
    """The folder's explore.json when it was made from the same data and settings, else None (an
    exploration of another format version — one that chose nprobe by another rule — is re-run,
    its trained indexes reused)."""
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
