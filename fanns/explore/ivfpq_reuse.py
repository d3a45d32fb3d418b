"""Run an IVF-PQ exploration only when no earlier one answers the question.

Why: `fanns sweep` and `fanns generate` both start from an exploration, and training plus the
recall sweeps are the slow part of both. An earlier exploration answers when it was made alike
(`made_alike`: the same data, query count and split, seed, number formats, training spread — everything
`fanns.explore.ivfpq_config.made_from` records — and a grid of nlists, ms and OPQ choices
holding the one asked) and explored every goal asked (`covers`); it is then read restricted to
the grid asked (`view`), so a larger exploration answers exactly as one of that grid would.

By default the dataset keeps several explorations side by side in its cache
(`fanns.explore.ivfpq_cache`: keyed by how they were made and their goals, the most recently
used kept, safe under concurrent runs), and the most recently used one that covers the question
answers it. Otherwise a new one is explored beside them, over the asked goals joined with those
of the explorations made alike of the same grid (so a later request for an earlier goal is still
answered), taking every index already trained for another exploration of the dataset instead of
training it again (`fanns.explore.ivfpq_indexes`). A folder the user names (`--explore-dir`)
holds one exploration, reused or explored again the same way under its lock
(`fanns.outputs.folder_lock`): a second run into it waits, then reuses the first's result; a
folder that changed since fanns wrote it is refused, not trusted.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fanns.choices import DEFAULT_SHARD_ROWS
from fanns.datasets.dataset import Dataset
from fanns.errors import FannsError
from fanns.explore import ivfpq_cache
from fanns.explore.ivfpq import IvfPqExplorer
from fanns.explore.ivfpq_config import ExploreConfig, made_from
from fanns.explore.ivfpq_record import best_per_goal, read_json
from fanns.explore.ivfpq_training import RemoteTraining
from fanns.index.goals import RecallGoal, parse_goal
from fanns.outputs import folder_lock, verify_files
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


GRID = ("nlists", "ms", "opq")
"""The settings an exploration may hold more of than asked: its grid of indexes. Every other
recorded setting (and the data, the query split, the format version) must be equal."""


def request(ds: Dataset, cfg: ExploreConfig) -> dict:
    """What `cfg` asks of an exploration of `ds`, in the form explore.json records it (`made_from`),
    with the goals it must answer and whether its lists must be on disk."""
    return {
        **made_from(ds, cfg),
        "goals": [{"text": g.text} for g in cfg.goals],
        "lists_on_disk": cfg.lists_on_disk,
    }


def _grid_records(have: dict, want: dict) -> list[dict] | None:
    """The index records of the exploration `have` for the grid `want` asks, in its order; None if
    one is missing."""
    s = want["settings"]
    by_key = {(r["nlist"], r["m"], r["opq"]): r for r in have["indexes"]}
    keys = [(nlist, m, opq) for nlist in s["nlists"] for m in s["ms"] for opq in s["opq"]]
    return [by_key[k] for k in keys] if all(k in by_key for k in keys) else None


def _goals(record: dict) -> set[RecallGoal]:
    return {parse_goal(g["text"]) for g in record["goals"]}


def made_alike(have: dict, want: dict) -> bool:
    """Whether the exploration `have` (an explore.json) was made as `want` asks: same format
    version, data, query split and settings (`made_from`), a grid holding the one asked (`GRID`),
    lists on disk where asked. The goals are not compared."""
    try:
        hs, ws = have["settings"], want["settings"]
        if any(have[k] != want[k] for k in ("version", "recall_split")) or set(hs) != set(ws):
            return False
        if any(have["dataset"][k] != want["dataset"][k] for k in ("content_hash", "queries_used")):
            return False
        if any(hs[k] != ws[k] for k in ws if k not in GRID) or any(not set(ws[k]) <= set(hs[k]) for k in GRID):
            return False
        records = _grid_records(have, want)
        return records is not None and (not want["lists_on_disk"] or all("lists" in r for r in records))
    except (KeyError, TypeError):
        return False


def covers(have: dict, want: dict) -> bool:
    """Whether the exploration `have` answers `want`: made alike, and every goal asked explored."""
    try:
        return made_alike(have, want) and _goals(want) <= _goals(have)
    except (KeyError, TypeError, FannsError):
        return False


def view(have: dict, want: dict) -> dict:
    """The exploration `have` restricted to the grid `want` asks (the rest of its grid left out,
    the best index per goal chosen among what is left) and named by the dataset asked about (the
    same data may have been explored under another name): what an exploration of just that grid
    records, so a larger one answers exactly as it would."""
    records = _grid_records(have, want)
    settings = {**have["settings"], **{k: want["settings"][k] for k in GRID}}
    best = best_per_goal(records, sorted(_goals(have)))
    return {**have, "dataset": want["dataset"], "settings": settings, "indexes": records, "best": best}


def index_names(explore: dict) -> list[str]:
    """The indexes of an exploration (or of a `view` of one), for `workloads_from_explore`."""
    return [rec["index"] for rec in explore["indexes"]]


def ensure_exploration(
    ds: Dataset, cfg: ExploreConfig, folder: Path | None = None, remote: RemoteTraining | None = None
) -> tuple[Path, dict, bool]:
    """(folder, explore.json contents, whether it was reused) of an exploration covering `cfg`, in
    `folder` (the user's: an exploration fanns did not write there is refused) or, by default,
    among the dataset's cached explorations (`fanns.explore.ivfpq_cache`). The contents are
    restricted to the grid `cfg` asks (`view`); pass `index_names` of them to
    `workloads_from_explore`. `remote`: train on that cluster when an exploration has to run."""
    want = request(ds, cfg)
    if folder is not None:
        return _in_folder(ds, cfg, want, Path(folder), remote)
    return _in_cache(ds, cfg, want, remote)


def _in_folder(ds: Dataset, cfg: ExploreConfig, want: dict, folder: Path, remote: RemoteTraining | None):
    """The user's folder holds one exploration: reused when it covers `want`; explored again
    otherwise (over the union of its goals and the new ones when it was made alike and of the
    same grid, so a later request for an earlier goal is still answered), with the trained indexes
    of the dataset's cached explorations."""
    with folder_lock(folder):
        have = read_json(folder / "explore.json")
        have = have if isinstance(have, dict) else None
        if have is not None and covers(have, want):
            verify_files(folder, ["explore.json"], "exploration")
            status(f"reusing the exploration in {folder} (same data and settings; goals and grid covered)")
            return folder, view(have, want), True
        if have is not None and made_alike(have, want) and have["settings"] == want["settings"]:
            cfg.goals = sorted(set(cfg.goals) | _goals(have))
        status(f"exploring {ds.name} into {folder} (goals {', '.join(g.text for g in cfg.goals)})")
        with ivfpq_cache.borrowed(ds) as sources:
            explored = IvfPqExplorer(ds, cfg, folder, remote=remote, index_sources=sources).run()
        return folder, view(explored, want), False


def _in_cache(ds: Dataset, cfg: ExploreConfig, want: dict, remote: RemoteTraining | None):
    """The dataset's cached explorations: the most recently used one covering `want`, else a new
    entry (its goals joined with those of entries made alike of the same grid), explored with
    the trained indexes of the others; then the cache is trimmed (`ivfpq_cache.evict`)."""
    root, content = ivfpq_cache.root_of(ds), ds.content_hash()
    with folder_lock(root):
        ivfpq_cache.adopt_legacy(ds, root)
        known = [(entry, ivfpq_cache.read_entry(entry)) for entry in ivfpq_cache.entries(root, content)]
        for entry, have in known:
            if have is not None and covers(have, want) and _intact(entry):
                ivfpq_cache.hold(entry)
                status(f"reusing the cached exploration {entry} (same data and settings; goals and grid covered)")
                return entry, view(have, want), True
        for _, have in known:
            if have is not None and made_alike(have, want) and have["settings"] == want["settings"]:
                cfg.goals = sorted(set(cfg.goals) | _goals(have))
        target = root / ivfpq_cache.name_of({**want, "goals": [{"text": g.text} for g in cfg.goals]})
        if target.exists() and ivfpq_cache.read_entry(target) is None:
            ivfpq_cache.remove(target)  # damaged (or not fanns's): the cache is fanns's own
        ivfpq_cache.hold(target)
    with folder_lock(target):  # a run asking the same waited here: it reuses what the first wrote
        have = ivfpq_cache.read_entry(target)
        if have is not None and covers(have, want) and _intact(target):
            return target, view(have, want), True
        status(f"exploring {ds.name} into {target} (goals {', '.join(g.text for g in cfg.goals)})")
        with ivfpq_cache.borrowed(ds, but=target) as sources:
            explored = IvfPqExplorer(ds, cfg, target, remote=remote, index_sources=sources).run()
    with folder_lock(root):
        ivfpq_cache.hold(target)
        ivfpq_cache.evict(root, content)
    return target, view(explored, want), False


def _intact(entry: Path) -> bool:
    """Whether a cached entry's explore.json is as fanns wrote it; one changed since is removed
    (unless a run holds it), not trusted."""
    try:
        verify_files(entry, ["explore.json"], "exploration")
    except FannsError as exc:
        status(f"{exc.message}: not reused")
        ivfpq_cache.remove(entry)
        return False
    return True
