"""The work an index does per query, from measurement: which cells each sample query probes.

The DSE never works from averages alone: a `Workload` holds, for every sample query, the sizes
of the cells it probes (in probe order) — the explorer's real probes (`fanns explore` writes the
ranked probed cells of every sample query and the list sizes of every index) — so per-PE work,
padding and imbalance come from the same cells the hardware will scan. Throughput uses the mean
over the sample of each stage's per-query cycles (queries overlap in the pipeline).

`synthetic_workload` builds the same object for an index that was not trained here (the
published FANNS example at SIFT100M scale): list sizes from a log-normal distribution with a
given imbalance factor, and probes drawn without replacement with probability proportional to
list size (FANNS 6.5.3: queries follow the data, so larger cells are probed more often).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fanns.checks import check_name, check_number
from fanns.errors import FannsError
from fanns.index.goals import RecallGoal, goal_entry
from fanns.index.holdout import SplitCurves, lower_bound, promise
from fanns.numerics import IvfPqFormat
from fanns.outputs import verify_files
from fanns.paths import inside

EXPLORE_VERSION = 3
"""The explore.json format this reader accepts: nprobe promised by the rule of
`fanns.index.holdout` (the selection queries' lower confidence bound reaches the goal, and the
held-out queries' recall, faiss's and the hardware-faithful one, reaches it too). Older files are
refused with a hint to re-run the exploration: format 1 reported recall on the queries that chose
nprobe, format 2 chose it where the selection queries' mean reached the goal + 0.04 and did not act
on the held-out recall (it could fall below the goal)."""
OLDER_RULES = {
    1: "reported recall on the same queries it chose nprobe on",
    2: "chose nprobe where the selection queries' mean reached the goal + 0.04, without acting on the held-out recall",
}
"""What an older explore.json format did, as the refusal says it."""

DEFAULT_IMBALANCE = 1.2
"""Assumed imbalance factor nlist * sum(n_i^2) / N^2 of k-means IVF lists for the synthetic
workload (not measured on SIFT100M here; 1.0 = perfectly balanced). Real explorations measure
the actual lists instead."""


@dataclass(frozen=True)
class Workload:
    """One (index, nprobe, K) with the measured probes of its sample queries."""

    index: str
    n: int
    nlist: int
    m: int
    opq: bool
    nprobe: int
    k: int
    fmt: IvfPqFormat
    list_sizes: np.ndarray  # [nlist] codes per IVF list
    probed: np.ndarray  # [nq, nprobe] sizes of the cells each sample query probes, probe order
    goal: RecallGoal | None = None  # the goal nprobe was chosen for (None: synthetic)
    recall: float | None = None  # faiss's recall on the held-out queries (the promised figure)
    hw_recall: float | None = None  # the hardware-faithful recall on the held-out queries
    recall_interval: tuple[float, float] | None = None  # bootstrap interval of `recall`
    hw_recall_interval: tuple[float, float] | None = None
    selection_recall: float | None = None  # recall on the queries that chose nprobe
    selection_bound: float | None = None  # their lower confidence bound there (`fanns.index.holdout`)
    index_path: Path | None = None
    source: str = ""
    extra: dict = field(default_factory=dict)
    cells: np.ndarray | None = None  # [nq, nprobe] ids of the probed cells (probed = list_sizes[cells])

    def __post_init__(self) -> None:
        if self.probed.ndim != 2 or self.probed.shape[1] != self.nprobe or self.probed.shape[0] < 1:
            raise FannsError(f"{self.index}: probes must be [queries, nprobe={self.nprobe}], got {self.probed.shape}")
        if self.cells is not None and (
            self.cells.shape != self.probed.shape or not np.array_equal(self.list_sizes[self.cells], self.probed)
        ):
            raise FannsError(f"{self.index}: probed cell ids disagree with the probed sizes")
        if self.list_sizes.shape != (self.nlist,):
            raise FannsError(f"{self.index}: {self.list_sizes.shape[0]} list sizes for nlist={self.nlist}")

    @property
    def queries(self) -> int:
        return int(self.probed.shape[0])

    def codes_per_query(self) -> np.ndarray:
        return self.probed.sum(1)

    def label(self) -> str:
        return f"{self.index} nprobe={self.nprobe}"

    def with_queries(self, n: int) -> Workload:
        """The same workload on its first `n` sample queries."""
        return dataclasses.replace(self, probed=self.probed[:n], cells=None if self.cells is None else self.cells[:n])


# -- from an exploration ------------------------------------------------------------------------
def _load_npy(path: Path, what: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise FannsError(
            f"{path}: cannot read the {what} ({exc})", hint="re-run `fanns explore` into this folder"
        ) from None


def read_explore(explore_dir: Path) -> dict:
    path = Path(explore_dir) / "explore.json"
    if not path.is_file():
        raise FannsError(
            f"{path} not found", hint="run `fanns explore DATASET --recall R@10=0.8 --out DIR` first and pass DIR"
        )
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise FannsError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("indexes"), list) or not data["indexes"]:
        raise FannsError(
            f"{path}: no IVF-PQ index records", hint="this folder was not written by `fanns explore --recall`"
        )
    if data.get("version") != EXPLORE_VERSION:
        version = data.get("version", 1)
        rule = OLDER_RULES.get(version, "is another format") if isinstance(version, int) else "is another format"
        raise FannsError(
            f"{path}: written by a `fanns explore` that {rule} (format {version}, this fanns reads {EXPLORE_VERSION})",
            hint="re-run `fanns explore` (or the command) into this folder: the trained indexes are reused, and "
            "nprobe is promised where the selection queries' lower confidence bound and the held-out recall reach "
            "the goal",
        )
    return data


def _interval(value, where: str) -> tuple[float, float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise FannsError(f"{where} must be [low, high]", hint="re-run `fanns explore`")
    lo, hi = (float(check_number(v, where, lo=0, hi=1)) for v in value)
    return lo, hi


def _curve(rec: dict, key: str, goal, path: Path) -> np.ndarray:
    curves = rec.get(key)
    curve = curves.get(goal.name) if isinstance(curves, dict) else None
    if curve is None:
        raise FannsError(
            f"{path}: {rec.get('index')} has no {key.replace('_', ' ')} for {goal.name}",
            hint=f"re-run `fanns explore` with --recall {goal.text}",
        )
    try:
        curve = np.asarray(curve, dtype=np.float64)
    except (TypeError, ValueError):
        curve = np.zeros(0)
    if curve.ndim != 1 or curve.size == 0 or not np.isfinite(curve).all() or ((curve < 0) | (curve > 1)).any():
        raise FannsError(f"{path}: {rec['index']}: {key}.{goal.name} must be a list of recalls in [0, 1]")
    return curve


def _record_nprobe(rec: dict, goal, path: Path, split: tuple[int, int, float]) -> tuple[int | None, dict]:
    """(nprobe or None, info) of one index record for `goal`: the explorer's answer for that goal,
    else the answer of the same rule (`fanns.index.holdout.promise`) on the record's curves, with
    the held-out recall there (no interval and no hardware-faithful recall: only the explorer's
    goals have those). `split`: the selection and held-out query counts and the training spread."""
    entry = goal_entry(rec.get("goals"), goal)
    where = f"{path}: {rec['index']}: goals.{goal.text}"
    if isinstance(entry, dict):
        if entry.get("reached"):
            nprobe = check_number(entry.get("nprobe"), f"{where}.nprobe", lo=1, integer=True)
            info = {
                "recall": entry.get("recall"),
                "hw_recall": entry.get("hw_recall"),
                "selection_recall": entry.get("selection_recall"),
                "selection_bound": entry.get("selection_bound"),
                "recall_interval": _interval(entry.get("recall_interval"), f"{where}.recall_interval"),
                "hw_recall_interval": _interval(entry.get("hw_recall_interval"), f"{where}.hw_recall_interval"),
            }
            short = [k for k in ("recall", "hw_recall") if info[k] is not None and info[k] < goal.target - 1e-9]
            if short:
                raise FannsError(
                    f"{where}: reached, but its held-out {' and '.join(short)} "
                    f"{', '.join(str(info[k]) for k in short)} is below {goal.target:g}",
                    hint="the file was not written by this fanns's explorer; re-run `fanns explore` into the folder",
                )
            return int(nprobe), info
        keep = (
            "best_recall",
            "best_nprobe",
            "reason",
            "queries_needed",
            "at_nprobe",
            "selection_bound",
            "holdout_recall",
        )
        return None, {k: entry[k] for k in keep if k in entry}
    names = ("selection_curve", "selection_sd_curve", "holdout_curve", "curve", "sd_curve")
    sel, sel_sd, held, whole, whole_sd = (_curve(rec, key, goal, path) for key in names)
    if len({c.shape for c in (sel, sel_sd, held, whole, whole_sd)}) != 1:
        raise FannsError(f"{path}: {rec['index']}: the recall curves of {goal.name} differ in length")
    n_sel, n_held, training_sd = split
    c = SplitCurves(sel, sel_sd, held, whole, whole_sd, n_sel, n_held)
    pr = promise(c, goal.target, training_sd)
    if pr.nprobe is None:
        best = int(np.argmax(whole))
        info = {"best_recall": float(whole[best]), "best_nprobe": best + 1, **pr.record(c, training_sd)}
        if sel.size < int(rec["nlist"]):  # the explorer's sweep ended early (`SWEEP_FACTOR`)
            info["swept_nprobe"] = int(sel.size)
        return None, info
    p = pr.nprobe - 1
    bound = float(lower_bound(sel[p], sel_sd[p], n_sel, training_sd))
    return p + 1, {
        "recall": float(held[p]),
        "hw_recall": None,
        "selection_recall": float(sel[p]),
        "selection_bound": bound,
    }


def _split(data: dict, path: Path) -> tuple[int, int, float]:
    """(selection queries, held-out queries, training spread) of an exploration's `recall_split`."""
    split = data.get("recall_split")
    split = split if isinstance(split, dict) else {}
    n_sel = int(
        check_number(split.get("selection_queries"), f"{path}: recall_split.selection_queries", lo=1, integer=True)
    )
    n_held = int(
        check_number(split.get("holdout_queries"), f"{path}: recall_split.holdout_queries", lo=1, integer=True)
    )
    training_sd = float(check_number(split.get("training_sd"), f"{path}: recall_split.training_sd", lo=0, hi=1))
    return n_sel, n_held, training_sd


def workloads_from_explore(
    explore_dir: Path, goal: RecallGoal, indexes: Collection[str] | None = None
) -> tuple[list[Workload], list[dict]]:
    """Every index of `explore_dir/explore.json` (or those named in `indexes`: the grid asked of an
    exploration that explored more, `fanns.explore.ivfpq_reuse`) at its smallest nprobe for the
    goal, with its measured probes; and, for the indexes that cannot reach the goal, their best recall."""
    explore_dir = Path(explore_dir)
    data = read_explore(explore_dir)
    path = explore_dir / "explore.json"
    verify_files(explore_dir, ["explore.json"], "exploration")
    queries_used = (data.get("dataset") or {}).get("queries_used")
    split = _split(data, path)
    found, unreachable = [], []
    for rec in data["indexes"]:
        if not isinstance(rec, dict):
            raise FannsError(f"{path}: an index record is not a mapping", hint="re-run `fanns explore`")
        if indexes is not None and rec.get("index") not in indexes:
            continue
        try:
            name = check_name(rec["index"], f"{path}: index name")
            where = f"{path}: {name}"
            nlist = int(check_number(rec["nlist"], f"{where}: nlist", lo=1, hi=1 << 32, integer=True))
            m = int(check_number(rec["m"], f"{where}: m", lo=1, hi=1 << 16, integer=True))
            if not isinstance(rec["opq"], bool):
                raise FannsError(f"{where}: opq must be true or false, got {rec['opq']!r}")
            opq = rec["opq"]
            fmt = IvfPqFormat.from_dict(dict(rec["format"]))
            sizes_path = inside(explore_dir, rec["list_sizes"], f"{where}: list_sizes")
            probes_path = inside(explore_dir, rec["probes"], f"{where}: probes")
        except (KeyError, TypeError, ValueError) as exc:
            raise FannsError(
                f"{path}: index record {rec.get('index', '?')!r} is incomplete ({exc})", hint="re-run `fanns explore`"
            ) from None
        nprobe, info = _record_nprobe(rec, goal, path, split)
        if nprobe is None:
            unreachable.append({"index": name, "m": m, "opq": opq, "d": fmt.d, **info})
            continue
        verify_files(explore_dir, [rec["list_sizes"], rec["probes"]], "exploration")
        sizes = _load_npy(sizes_path, "list sizes").astype(np.int64)
        probes = _load_npy(probes_path, "probed cells").astype(np.int64)
        if probes.ndim != 2 or probes.shape[1] < nprobe:
            raise FannsError(
                f"{probes_path}: holds {probes.shape[-1]} probes per query, {goal.text} needs nprobe={nprobe}",
                hint=f"re-run `fanns explore` with --recall {goal.text} so the probes are recorded that deep",
            )
        if isinstance(queries_used, int) and probes.shape[0] != queries_used:
            raise FannsError(
                f"{probes_path}: probes of {probes.shape[0]} queries, {path} says {queries_used}",
                hint="the folder mixes two explorations; re-run `fanns explore` into it with --force",
            )
        if sizes.shape != (nlist,) or probes.size == 0 or probes.min() < 0 or probes.max() >= nlist or sizes.min() < 0:
            raise FannsError(
                f"{path}: list sizes or probes of {name} disagree with nlist={nlist}", hint="re-run `fanns explore`"
            )
        index_path = inside(explore_dir, rec["path"], f"{where}: path") if rec.get("path") else None
        found.append(
            Workload(
                index=name,
                n=int(sizes.sum()),
                nlist=nlist,
                m=m,
                opq=opq,
                nprobe=nprobe,
                k=goal.k,
                fmt=fmt,
                list_sizes=sizes,
                probed=sizes[probes[:, :nprobe]],
                goal=goal,
                recall=info.get("recall"),
                hw_recall=info.get("hw_recall"),
                recall_interval=info.get("recall_interval"),
                hw_recall_interval=info.get("hw_recall_interval"),
                selection_recall=info.get("selection_recall"),
                selection_bound=info.get("selection_bound"),
                index_path=index_path,
                source=str(path),
                cells=probes[:, :nprobe],
            )
        )
    return found, unreachable


# -- synthetic ----------------------------------------------------------------------------------
def synthetic_list_sizes(n: int, nlist: int, imbalance: float, rng: np.random.Generator) -> np.ndarray:
    """nlist list sizes summing to n, log-normal with the given imbalance factor (>= 1)."""
    if imbalance < 1:
        raise FannsError(f"imbalance factor {imbalance} must be >= 1 (1 = balanced lists)")
    sigma = math.sqrt(math.log(imbalance))
    w = rng.lognormal(0.0, sigma, nlist) if sigma > 0 else np.ones(nlist)
    sizes = np.floor(w / w.sum() * n).astype(np.int64)
    short = n - int(sizes.sum())
    sizes[np.argsort(-w, kind="stable")[:short]] += 1
    return sizes


def size_biased_probes(sizes: np.ndarray, nprobe: int, queries: int, rng: np.random.Generator) -> np.ndarray:
    """[queries, nprobe] distinct cells per query, drawn without replacement with probability
    proportional to size (Gumbel top-k), ordered as drawn."""
    logw = np.log(np.maximum(sizes, 1e-12).astype(np.float64))
    out = np.empty((queries, nprobe), dtype=np.int64)
    block = max(1, (1 << 22) // len(sizes))  # queries per block: a few million keys at a time
    for start in range(0, queries, block):
        n = min(block, queries - start)
        keys = logw[None, :] + rng.gumbel(size=(n, len(sizes)))
        top = np.argpartition(-keys, nprobe - 1, axis=1)[:, :nprobe]
        order = np.argsort(-np.take_along_axis(keys, top, axis=1), axis=1, kind="stable")
        out[start : start + n] = np.take_along_axis(top, order, axis=1)
    return out


def synthetic_workload(
    n: int,
    d: int,
    m: int,
    nlist: int,
    nprobe: int,
    k: int,
    opq: bool,
    *,
    queries: int = 1000,
    imbalance: float = DEFAULT_IMBALANCE,
    seed: int = 0,
    vec_bits: int = 16,
    lut_bits: int = 16,
) -> Workload:
    """A workload for an index that exists only as parameters (see the module docstring)."""
    if nprobe > nlist:
        raise FannsError(f"nprobe={nprobe} exceeds nlist={nlist}")
    rng = np.random.default_rng(seed)
    sizes = synthetic_list_sizes(n, nlist, imbalance, rng)
    probes = size_biased_probes(sizes, nprobe, queries, rng)
    fmt = IvfPqFormat(d=d, m=m, scale=1.0, ivf_shift=0, lut_shift=0, vec_bits=vec_bits, lut_bits=lut_bits)
    name = f"{f'OPQ{m},' if opq else ''}IVF{nlist},PQ{m}"
    return Workload(
        index=name,
        n=n,
        nlist=nlist,
        m=m,
        opq=opq,
        nprobe=nprobe,
        k=k,
        fmt=fmt,
        list_sizes=sizes,
        probed=sizes[probes],
        source=f"synthetic: N={n}, imbalance {imbalance}, {queries} queries, seed {seed}",
        extra={"imbalance": imbalance, "seed": seed},
        cells=probes,
    )
