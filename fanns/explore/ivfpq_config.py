"""What an IVF-PQ exploration is asked to do (`ExploreConfig`) and how its explore.json says it was
made (`made_from`): the one definition the explorer writes and `fanns.explore.ivfpq_reuse`
compares when it looks for an earlier exploration to reuse."""

from __future__ import annotations

from dataclasses import dataclass, field

from fanns.choices import DEFAULT_SHARD_ROWS
from fanns.datasets.dataset import Dataset
from fanns.explore.ivfpq_record import ID_BYTES, recall_split
from fanns.explore.ivfpq_training import checked_grid
from fanns.index.goals import RecallGoal
from fanns.index.holdout import TRAINING_SD, split_queries
from fanns.model.ivfpq.workload import EXPLORE_VERSION


@dataclass
class ExploreConfig:
    goals: list[RecallGoal]
    nlists: list[int] | None = None  # default: default_nlists(N)
    ms: list[int] | None = None  # default: default_ms(d)
    opq: tuple[bool, ...] = (False, True)
    train_size: int | None = None  # default: per index, see train_size_for
    max_queries: int | None = None
    seed: int = 0
    vec_bits: int = 16
    lut_bits: int = 16
    qps_min_seconds: float = 0.2
    training_sd: float = TRAINING_SD  # recall spread between retrains, in the promise's bound (`fanns.index.holdout`)
    lists_on_disk: bool = False  # each index's inverted lists in a file beside it (`fanns.index.ivfpq_lists`)
    shard_rows: int = DEFAULT_SHARD_ROWS  # with lists on disk: base vectors added in RAM at a time
    extra: dict = field(default_factory=dict)


def made_from(ds: Dataset, cfg: ExploreConfig) -> dict:
    """How an exploration of `ds` with `cfg` is made, as its explore.json records it: format
    version, data (content hash, queries used), query split and settings, defaults resolved.
    `fanns.explore.ivfpq_reuse` reuses an exploration recorded as made the same way (a larger
    grid allowed), so whatever decides the results is recorded here."""
    nlists, ms = checked_grid(ds, cfg.nlists, cfg.ms, cfg.opq)
    nq = min(ds.nq, cfg.max_queries or ds.nq)
    selection, holdout = split_queries(nq, cfg.seed)
    return {
        "version": EXPLORE_VERSION,
        "recall_split": recall_split(int(selection.size), int(holdout.size), cfg.training_sd),
        "dataset": {**ds.summary(), "content_hash": ds.content_hash(), "queries_used": nq},
        "settings": {
            "nlists": nlists,
            "ms": ms,
            "opq": list(cfg.opq),
            "seed": cfg.seed,
            "vec_bits": cfg.vec_bits,
            "lut_bits": cfg.lut_bits,
            "id_bytes": ID_BYTES,
            "training_sd": cfg.training_sd,
        },
    }
