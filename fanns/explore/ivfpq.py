"""The IVF-PQ index explorer: which index and nprobe meet each recall goal, and what that costs.

For every index of the grid (nlist x m x with/without OPQ) it

1. trains the faiss index on a fixed sample (or reuses the trained index cached in the output
   folder, keyed by dataset content hash, factory string, sample size and seed);
2. measures faiss's float recall R@k of every query at every nprobe (`fanns.index.recall`) up
   to a few times the nprobe the goals need (`ivfpq_record.sweep_done`; every nprobe for a
   goal it cannot meet),
   splits the queries into a selection and a held-out part (`fanns.index.holdout`) and finds,
   per goal, the smallest nprobe whose selection queries' lower confidence bound (sampling
   error and training spread) reaches the goal and whose held-out queries reach it too — or
   says why none does (the recall is below the goal, or the sample is too small to tell, with
   the queries that would tell). The recall it promises is the held-out part's, with a
   bootstrap interval over those queries;
3. chooses the index's fixed-point format (`fanns.index.ivfpq_format`) and measures the
   hardware-faithful recall with the whole-accelerator reference model (`fanns.reference.ivfpq`)
   at that nprobe, raising it where the held-out hardware-faithful recall falls short
   (`fanns.explore.ivfpq_promise`);
4. measures the hardware work from the cells the reference model actually probes (codes
   scanned per query, sizes of the probed cells, bytes read) and faiss-cpu's QPS.

The DSE reads `explore.json` and the per-index `.npy` files it points to. The folder is written
as one staged output (`fanns.outputs`): it appears whole, with a manifest the readers check, and
an earlier exploration in it is replaced only if fanns wrote it, its trained indexes reused.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np

from fanns.datasets.dataset import Dataset
from fanns.datasets.formats import save_npy
from fanns.errors import FannsError
from fanns.explore import ivfpq_estimate
from fanns.explore.ivfpq_config import ExploreConfig, made_from
from fanns.explore.ivfpq_indexes import IndexFiles, is_cached_index, stem_of
from fanns.explore.ivfpq_promise import hardware_promises
from fanns.explore.ivfpq_record import (
    ID_BYTES,
    SWEEP_MIN,
    best_per_goal,
    curve_lists,
    goal_promises,
    split_curves,
    stats,
    sweep_done,
    write_json,
)
from fanns.explore.ivfpq_training import (
    IndexJob,
    RemoteTraining,
    RotationJob,
    checked_grid,
    rotation_for,
    run_job,
    train_filled,
    train_size_for,
    training_rows,
)
from fanns.index.holdout import split_queries
from fanns.index.ivfpq import OPQ_TRAIN_POINTS, extract, factory_string, host_vectors
from fanns.index.ivfpq_format import check_query_range, choose_format
from fanns.index.ivfpq_lists import LISTS_SUFFIX, ListsOnDisk, read_index
from fanns.index.ivfpq_recall import recall_hits
from fanns.index.ivfpq_shared import Coarse, coarse_of
from fanns.model.cpu_baseline import cpu_fields, cpu_qps
from fanns.outputs import staged_folder
from fanns.progress import eta_bar, status
from fanns.reference.ivfpq import IvfPqReference
from fanns.tools.parallel import map_jobs

INDEX_CACHE_VERSION = 3
"""Bumped when training changes the bits of a trained index (3: PQ k-means on BLAS distances,
`fanns.index.ivfpq.blas_distances`), so an older cached index is trained again, not reused."""
FORMAT_SAMPLE = 1000
WHAT = "exploration"
"""The kind of output an exploration folder is (its manifest's `what`)."""


class IvfPqExplorer:
    """Runs the exploration of one dataset into an output folder (see the module docstring)."""

    def __init__(
        self,
        ds: Dataset,
        cfg: ExploreConfig,
        out: Path,
        force: bool = True,
        remote: RemoteTraining | None = None,
        index_sources: Sequence[Path] = (),
    ):
        """`remote`: train the indexes on that cluster (`fanns.explore.ivfpq_training`), same results;
        `index_sources`: other exploration folders whose trained indexes this one may take
        (`fanns.explore.ivfpq_indexes`)."""
        self.ds, self.cfg, self.out, self.force, self.remote = ds, cfg, Path(out), force, remote
        self.index_sources = tuple(Path(p) for p in index_sources)
        self.folder = self.out  # where the files go: the staging folder while `run` runs
        host_vectors(ds.queries[:1], ds.metric)  # rejects unsupported metrics early
        if not cfg.goals:
            raise FannsError("no recall goal given", hint="add --recall R@10=0.8 (repeatable)")
        if cfg.lists_on_disk and remote is not None:
            raise FannsError(
                "inverted lists on disk are filled here, not on a cluster",
                hint="drop --lists-on-disk or --cluster (a cluster worker returns each index whole)",
            )
        self.nlists, self.ms = checked_grid(ds, cfg.nlists, cfg.ms, cfg.opq)
        kmax = max(g.k for g in cfg.goals)
        if kmax > ds.n:
            raise FannsError(f"recall goal R@{kmax} asks for more neighbours than the {ds.n} base vectors")
        nq = min(ds.nq, cfg.max_queries or ds.nq)
        self.queries = host_vectors(ds.queries[:nq], ds.metric)
        # the other indexes of an nlist reuse the coarse quantizer of its first plain index
        # (explored first, `grid`), and the OPQ ones one rotation per m (`fanns.index.ivfpq_shared`)
        self.shares_coarse = False in cfg.opq and (True in cfg.opq or len(self.ms) > 1)
        self._coarse: dict[int, Coarse] = {}
        self._rotations: dict[int, np.ndarray] = {}
        cached = {key: self._cached_index(*key) for key in self.grid()}  # trained copies found at the start
        self.reused = [key for key, path in cached.items() if path is not None]  # not trained again
        # per m: a PQ of many sub-spaces trains and encodes at other rates than one of few;
        # the OPQ rotation's update is timed only when one is to be trained
        untrained_opq = any(key[2] and path is None for key, path in cached.items())
        self.rates = {m: ivfpq_estimate.calibrate(ds.d, m, cfg.seed, opq=untrained_opq) for m in self.ms}
        self.scanned = {nlist: self._probed_codes(nlist, cached) for nlist in self.nlists}
        self.expected = self.expected_seconds(kmax, cached)
        status(
            f"expected: about {ivfpq_estimate.format_seconds(sum(self.expected.values()))} for "
            f"{len(self.expected) - 1} index(es) of {ds.n:,} x {ds.d} "
            f"(cost model at {self.rates[self.ms[0]].madds / 1e9:.1f} G multiply-adds/s measured here, "
            "cell sizes from the cached indexes or a quick k-means; the recall check and CPU QPS counted at nprobe 1)"
        )
        start = time.perf_counter()
        self.gt = ds.groundtruth(max(kmax, 1))[:nq]
        self.gt_seconds = time.perf_counter() - start
        self.selection, self.holdout = split_queries(nq, cfg.seed)
        self.measures = sorted({g.measure for g in cfg.goals})

    def grid(self) -> list[tuple[int, int, bool]]:
        """The (nlist, m, opq) of every index explored, in order: nlist by nlist, so the coarse
        quantizer one nlist shares is held only while its indexes are explored."""
        return [(nlist, m, opq) for nlist in self.nlists for m in self.ms for opq in self.cfg.opq]

    def coarse_source(self, nlist: int, m: int, opq: bool) -> str | None:
        """The index whose coarse quantizer and cells this one takes: the plain index of the first
        m of its nlist (none for that index itself, or when the grid has no plain index)."""
        first = (nlist, self.ms[0], False)
        if not self.shares_coarse or (nlist, m, opq) == first:
            return None
        return factory_string(*first)

    def train_size(self, nlist: int) -> int:
        train_n = self.cfg.train_size or train_size_for(self.ds.n, nlist)
        if train_n < nlist:
            raise FannsError(f"{train_n} training vectors for {nlist} cells", hint="raise --train-size")
        return train_n

    def _probed_codes(self, nlist: int, cached: dict[tuple, Path | None]) -> np.ndarray:
        """The codes a query scans at nprobe 1..`SWEEP_MIN` in an index of one nlist: measured on
        a cached index of that nlist where there is one (`ivfpq_estimate.probed_codes_of`), else
        estimated by `ivfpq_estimate.probed_codes` on a prefix of the training order."""
        for path in [path for key, path in cached.items() if key[0] == nlist and path is not None]:
            try:
                index = read_index(path)
            except RuntimeError:
                continue  # unreadable: `_index` trains it again
            return ivfpq_estimate.probed_codes_of(index, self.queries, SWEEP_MIN)
        rows = training_rows(self.ds.n, self.cfg.seed, ivfpq_estimate.SKEW_POINTS_PER_CELL * nlist)
        sample = host_vectors(self.ds.base[rows], self.ds.metric)
        return ivfpq_estimate.probed_codes(sample, self.queries, self.ds.n, nlist, SWEEP_MIN, self.cfg.seed)

    def index_costs(self, nlist: int, m: int, opq: bool) -> dict[str, float]:
        """Model seconds of each phase of one index: train, add and sweep
        (`fanns.explore.ivfpq_estimate.index_cost`), and the record of its goals
        (`fanns.explore.ivfpq_estimate.record_cost`, at nprobe 1: the goals' nprobe is not known before
        the sweep; at least the CPU QPS windows' `qps_min_seconds` on each thread count)."""
        train_n = min(self.train_size(nlist), self.ds.n)
        costs = ivfpq_estimate.index_cost(
            self.ds.n,
            self.ds.d,
            self.queries.shape[0],
            nlist,
            m,
            opq,
            train_n,
            min(self.ds.n, OPQ_TRAIN_POINTS),
            coarse_shared=self.coarse_source(nlist, m, opq) is not None,
            rotation_shared=opq and nlist != self.nlists[0],
            swept=SWEEP_MIN,  # the goals met within SWEEP_MIN / SWEEP_FACTOR probes; else up to nlist
            scanned=self.scanned[nlist],
        )
        goals, nq = len(self.cfg.goals), self.queries.shape[0]
        codes = ivfpq_estimate.codes_at(1, self.ds.n, nlist, self.scanned[nlist])
        threads = faiss.omp_get_max_threads()
        costs["record"] = ivfpq_estimate.record_cost(self.ds.d, nq, nlist, m, codes, goals, threads, FORMAT_SAMPLE)
        seconds = {phase: ivfpq_estimate.seconds(c, self.rates[m]) for phase, c in costs.items()}
        seconds["record"] = max(seconds["record"], goals * 2 * self.cfg.qps_min_seconds)
        return seconds

    def expected_seconds(self, kmax: int, cached: dict[tuple, Path | None]) -> dict[str, float]:
        """Model seconds of the ground truth (0 when given or cached) and of every index (its
        training and adding left out when `cached` has a trained copy of it)."""
        gt = 0.0
        if not self.ds.has_groundtruth(max(kmax, 1)):
            gt = ivfpq_estimate.groundtruth_seconds(self.ds.n, self.ds.d, self.ds.nq, self.rates[self.ms[0]])
        out = {"groundtruth": gt}
        for nlist, m, opq in self.grid():
            costs = self.index_costs(nlist, m, opq)
            if cached[nlist, m, opq] is not None:
                costs["train"] = costs["add"] = 0.0
            out[factory_string(nlist, m, opq)] = sum(costs.values())
        return out

    # -- per index --------------------------------------------------------------------------
    @property
    def indexes(self) -> IndexFiles:
        """The trained indexes of the folder being written, and of the index sources."""
        return IndexFiles(self.folder, self.index_sources)

    def _meta(self, nlist: int, m: int, opq: bool) -> dict:
        """What a trained copy of the index must have been trained from to be reused."""
        factory = factory_string(nlist, m, opq)
        meta = {
            "version": INDEX_CACHE_VERSION,
            "dataset": self.ds.content_hash(),
            "factory": factory,
            "train_size": int(self.train_size(nlist)),
            "seed": self.cfg.seed,
        }
        source = self.coarse_source(nlist, m, opq)
        if source is not None or opq:
            meta["coarse"] = source or "own"
        if opq:
            meta["rotation_sample"] = min(self.ds.n, OPQ_TRAIN_POINTS)
        if self.cfg.lists_on_disk:
            meta["lists"] = "disk"
        return meta

    def _cached_index(self, nlist: int, m: int, opq: bool) -> Path | None:
        """A trained copy of the index, here or in an index source."""
        return self.indexes.find(factory_string(nlist, m, opq), self._meta(nlist, m, opq))

    def _local_index(self, nlist: int, m: int, opq: bool) -> Path | None:
        """A trained copy of the index in the folder itself (linked in from an index source)."""
        return self.indexes.local(factory_string(nlist, m, opq), self._meta(nlist, m, opq))

    def _index(self, nlist: int, m: int, opq: bool, on_phase=None):
        factory = factory_string(nlist, m, opq)
        stem, meta = stem_of(factory), self._meta(nlist, m, opq)
        index = None
        index_path = self._local_index(nlist, m, opq)
        if index_path is not None:
            try:
                index = read_index(index_path)
            except RuntimeError:
                status(f"{index_path} is unreadable; training it again")
        loaded = index is not None
        if not loaded:
            index = self._train(nlist, m, opq, self.train_size(nlist), on_phase)
        if self.shares_coarse and (m, opq) == (self.ms[0], False):
            self._coarse = {nlist: coarse_of(index)}  # for the other indexes of this nlist, explored next
        if not loaded:
            self._store(nlist, m, opq, faiss.serialize_index(index))
        return index, stem, meta

    def _store(self, nlist: int, m: int, opq: bool, serialized: np.ndarray) -> None:
        """Put a trained index (as `faiss.serialize_index` gives it) into the folder."""
        self.indexes.store(factory_string(nlist, m, opq), self._meta(nlist, m, opq), serialized)

    def _train_remotely(self) -> None:
        """Train every index not cached yet on the cluster of `remote`, into the index cache: the
        rotations and the plain indexes that reuse nothing first, then every other index with the
        coarse quantizer (and rotation) it reuses."""
        todo = [(nlist, m, opq) for nlist, m, opq in self.grid() if self._local_index(nlist, m, opq) is None]
        if not todo:
            return
        ms = sorted({m for _, m, opq in todo if opq and m not in self._rotations})
        # first round: what reuses nothing (plain indexes without a coarse source); then the rest
        alone = [key for key in todo if not key[2] and self.coarse_source(*key) is None]
        rest = [key for key in todo if key not in alone]
        own = [self._job(*key) for key in alone]
        address = self.remote.address
        status(f"training {len(todo)} index(es) and {len(ms)} OPQ rotation(s) on the cluster at {address}")
        first = [RotationJob(self.remote.data, m, self.cfg.seed) for m in ms] + own
        results = map_jobs(run_job, first, cluster=address, label="training: rotations, plain")
        self._rotations.update(zip(ms, results[: len(ms)]))
        for job, serialized in zip(own, results[len(ms) :]):
            self._store(job.nlist, job.m, job.opq, serialized)
        coarse = {nlist: self._first_coarse(nlist) for nlist in sorted({key[0] for key in rest})}
        shared = [self._job(*key, coarse[key[0]]) for key in rest]
        for job, serialized in zip(shared, map_jobs(run_job, shared, cluster=address, label="training: shared")):
            self._store(job.nlist, job.m, job.opq, serialized)

    def _first_coarse(self, nlist: int) -> Coarse | None:
        """The coarse quantizer of the first plain index of `nlist`, read once from the index cache
        for every other index of that nlist (None when the grid shares none)."""
        if not self.shares_coarse:
            return None
        first = read_index(self._local_index(nlist, self.ms[0], False))  # held: coarse_of downcasts it
        return coarse_of(first)

    def _job(self, nlist: int, m: int, opq: bool, coarse: Coarse | None = None) -> IndexJob:
        """The job of one index; `coarse` the shared coarse quantizer it takes (`coarse_source`)."""
        rotation = self._rotations[m] if opq else None
        return IndexJob(self.remote.data, nlist, m, opq, self.train_size(nlist), self.cfg.seed, rotation, coarse)

    def _rotation(self, m: int) -> np.ndarray:
        """The OPQ rotation for m sub-quantizers, trained once on a fixed sample and shared by every nlist."""
        if m not in self._rotations:
            rows = min(self.ds.n, OPQ_TRAIN_POINTS)
            status(f"training the OPQ{m} rotation on {rows} vectors (shared by every nlist)")
            self._rotations[m] = rotation_for(self.ds, m, self.cfg.seed)
        return self._rotations[m]

    def _train(self, nlist: int, m: int, opq: bool, train_n: int, on_phase=None):
        """A trained and filled index, reusing the shared rotation and coarse quantizer."""
        factory = factory_string(nlist, m, opq)
        source = self.coarse_source(nlist, m, opq)
        coarse = self._coarse.get(nlist) if source is not None else None
        if source is not None and coarse is None:
            raise FannsError(f"{factory}: the plain index {source} was not explored before it")
        reused = f", coarse quantizer of {source}" if source is not None else ""
        status(f"training {factory} on {train_n} vectors{reused}")
        rotation = self._rotation(m) if opq else None
        lists_path = IndexFiles.paths(self.folder, factory)[2]
        lists = ListsOnDisk(lists_path, self.cfg.shard_rows) if self.cfg.lists_on_disk else None
        return train_filled(self.ds, nlist, m, train_n, self.cfg.seed, rotation, coarse, on_phase, lists)

    def _cpu_qps(self, index, nprobe: int, k: int) -> dict[str, dict]:
        """Median QPS with spread on one thread and on all cores (`cpu_qps`)."""
        return {
            "1": cpu_qps(index, self.queries, nprobe, k, self.cfg.qps_min_seconds, threads=1),
            "all": cpu_qps(index, self.queries, nprobe, k, self.cfg.qps_min_seconds),
        }

    def explore_index(self, nlist: int, m: int, opq: bool) -> dict:
        """One index's record; one progress bar counts its model cost (train, add, sweep, record)."""
        costs = self.index_costs(nlist, m, opq)
        factory = factory_string(nlist, m, opq)
        with eta_bar() as bar:
            # training is one faiss call: the bar cannot move during it, so it says what to expect
            train = ivfpq_estimate.format_seconds(costs["train"])
            task = bar.add_task(f"{factory}: training (about {train})", total=sum(costs.values()))

            def on_phase(phase: str, rows: int) -> None:
                bar.update(task, description=f"{factory}: adding")  # training is over at either phase
                bar.advance(task, costs["train"] if phase == "train" else costs["add"] * rows / self.ds.n)

            index, stem, meta = self._index(nlist, m, opq, on_phase)
            bar.update(task, completed=costs["train"] + costs["add"], description=f"{factory}: recall sweep")
            swept = min(nlist, SWEEP_MIN)
            per_query = recall_hits(
                index,
                self.queries,
                self.gt,
                self.measures,
                nlist,
                on_step=lambda: bar.advance(task, costs["sweep"] / swept),
                done=sweep_done(self.cfg.goals, self.selection, self.holdout, self.cfg.training_sd, nlist),
            )
            total = sum(costs.values())
            bar.update(task, completed=total - costs["record"], description=f"{factory}: hardware recall, CPU QPS")
            record = self._record(index, stem, meta, nlist, m, opq, per_query)
            bar.update(task, completed=total)
            return record

    def _record(self, index, stem: str, meta: dict, nlist: int, m: int, opq: bool, per_query: dict) -> dict:
        """The record of one explored index from its per-query hits at every nprobe (`recall_hits`):
        nprobe promised by the rule of `fanns.index.holdout` (selection bound, held-out check) and
        by the hardware-faithful recall (`fanns.explore.ivfpq_promise`)."""
        swept = per_query[self.measures[0]].shape[1]
        split = split_curves(per_query, self.selection, self.holdout)
        data = extract(index, self.ds.metric)
        folder = self.folder / "indexes"
        sizes_path = folder / f"{stem}.list_sizes.npy"
        save_npy(sizes_path, data.list_sizes.astype(np.int64))

        cfg = self.cfg
        promises = goal_promises(cfg.goals, split, cfg.training_sd)
        sample = host_vectors(self.ds.base[training_rows(self.ds.n, cfg.seed, FORMAT_SAMPLE)], self.ds.metric)

        def reference_at(p: int) -> IvfPqReference:
            fmt = choose_format(data, sample, nprobe=p, vec_bits=cfg.vec_bits, lut_bits=cfg.lut_bits, seed=cfg.seed)
            check_query_range(fmt, self.queries, f"dataset {self.ds.name}: queries")
            return IvfPqReference(data, fmt)

        hw = hardware_promises(
            cfg.goals, cfg.training_sd, promises, split, reference_at, self.queries, self.gt, self.holdout
        )
        ref = hw.ref
        probes = ref.probe(ref.prepare(self.queries), hw.p_max)
        probes_path = folder / f"{stem}.probes.npy"
        save_npy(probes_path, probes.astype(np.int32))
        sizes = data.list_sizes
        goals = {}
        for g in cfg.goals:
            entry = hw.entry(g, promises[g], split[g.measure], per_query[g.measure], cfg.training_sd, cfg.seed)
            p = entry.get("nprobe")
            if p is not None:
                probed = sizes[probes[:, :p]]
                codes = probed.sum(1)
                entry |= {
                    "codes_per_query": stats(codes),
                    "probed_cell_sizes": stats(probed.ravel()),
                    "bytes_per_query": stats(codes * (m + ID_BYTES)),
                    **cpu_fields(self._cpu_qps(index, p, g.k)),
                }
            goals[g.text] = entry
        return {
            "index": meta["factory"],
            "nlist": nlist,
            "m": m,
            "opq": opq,
            "path": f"indexes/{stem}.faissindex",
            **({"lists": f"indexes/{stem}{LISTS_SUFFIX}"} if self.cfg.lists_on_disk else {}),
            "train_size": meta["train_size"],
            "list_sizes": f"indexes/{sizes_path.name}",
            "probes": f"indexes/{probes_path.name}",
            "probes_nprobe": int(probes.shape[1]),
            "bytes_per_code": m + ID_BYTES,
            "format": ref.fmt.to_dict(),
            "curve": {"nprobe": list(range(1, swept + 1)), **curve_lists({ms: c.pooled for ms, c in split.items()})},
            "sd_curve": curve_lists({ms: c.pooled_sd for ms, c in split.items()}),
            "selection_curve": curve_lists({ms: c.selection for ms, c in split.items()}),
            "selection_sd_curve": curve_lists({ms: c.selection_sd for ms, c in split.items()}),
            "holdout_curve": curve_lists({ms: c.held for ms, c in split.items()}),
            "goals": goals,
        }

    # -- whole run --------------------------------------------------------------------------
    def run(self) -> dict:
        """Explore into `out`, staged; an earlier exploration there is replaced (with `force`), its
        trained indexes reused."""
        with staged_folder(self.out, self.force, "explore.json", WHAT, carry=is_cached_index) as tmp:
            return self.run_into(tmp)

    def run_into(self, folder: Path) -> dict:
        """Explore into `folder` as it is (a staging folder the caller publishes)."""
        self.folder = Path(folder)
        records, seconds = [], {"groundtruth": round(self.gt_seconds, 2)}
        if self.remote is not None:
            start = time.perf_counter()
            self._train_remotely()
            seconds["cluster_training"] = round(time.perf_counter() - start, 2)
        for nlist, m, opq in self.grid():
            start = time.perf_counter()
            records.append(self.explore_index(nlist, m, opq))
            seconds[records[-1]["index"]] = round(time.perf_counter() - start, 2)
        result = {
            **made_from(self.ds, self.cfg),
            "goals": [{"text": g.text, "k": g.k, "truth": g.truth, "recall": g.target} for g in self.cfg.goals],
            "indexes": records,
            "best": best_per_goal(records, self.cfg.goals),
            "timing": {
                "rates": {str(m): r.to_dict() for m, r in self.rates.items()},
                "expected_s": {k: round(v, 2) for k, v in self.expected.items()},
                "seconds": seconds,
            },
        }
        write_json(self.folder / "explore.json", result)
        return result
