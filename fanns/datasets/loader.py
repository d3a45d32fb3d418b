"""Dataset specs: ``builtin:NAME``, an ann-benchmarks HDF5 file, or a directory of vector files.

A directory holds a base file, a query file and optionally a ground-truth file in any supported
format. They are found by name: the file name (split at ``.``, ``_`` and ``-``) contains the word
``base``, ``query``/``queries`` or ``groundtruth``/``gt`` — so TEXMEX ``sift_base.fvecs`` and
big-ann ``base.1B.u8bin`` both work. An optional ``dataset.yaml`` in the directory names the
files explicitly and sets the metric (default ``l2``)::

    name: mydata        # optional
    metric: angular     # l2 | ip | angular
    base: vectors.fbin
    query: q.fbin
    groundtruth: gt.ivecs   # optional

Users read the formats and keys in docs/datasets.md ("Your own data"; a test holds it to
`YAML_KEYS` and `fanns.datasets.formats.EXTENSIONS`).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from fanns.checks import check_text
from fanns.datasets.builtins import BUILTINS, load_builtin
from fanns.datasets.cache import cache_dir_for
from fanns.datasets.dataset import METRICS, Dataset
from fanns.datasets.formats import EXTENSIONS, read_vectors
from fanns.datasets.hdf5 import read_hdf5
from fanns.errors import FannsError
from fanns.paths import inside
from fanns.progress import status

ROLES = {"base": ("base",), "query": ("query", "queries"), "groundtruth": ("groundtruth", "gt")}
YAML_KEYS = {"name", "metric", "base", "query", "groundtruth"}
HDF5_EXTENSIONS = (".h5", ".hdf5")


def _fallback_key(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", str(path.resolve()).strip("/"))


CONTENT_HASH = re.compile(r"[0-9a-f]{32}\Z")
"""A dataset's content hash as `Dataset.content_hash` writes it (blake2b, 16 bytes, hex)."""


def check_dataset_entry(info: object, where: str, step: str) -> dict:
    """The `dataset` entry an earlier step (`step`) recorded in the file `where`: a mapping whose
    name is text and whose content hash is what `Dataset.content_hash` writes, else a clear error
    (the name may end up in a spec and in messages; the hash is compared with the data)."""
    hint = f"re-run `{step}` (the record was changed since)"
    if not isinstance(info, dict):
        raise FannsError(f"{where}: the dataset entry must be a mapping, got {info!r:.80}", hint=hint)
    name = check_text(info.get("name"), f"{where}: dataset.name")
    if not 0 < len(name) <= 255:
        raise FannsError(f"{where}: dataset.name must be 1..255 characters, got {len(name)}", hint=hint)
    recorded = info.get("content_hash")
    if not isinstance(recorded, str) or not CONTENT_HASH.match(recorded):
        raise FannsError(f"{where}: dataset.content_hash must be 32 hex digits, got {recorded!r:.80}", hint=hint)
    return info


def resolve_dataset(info: object, spec: str | None, step: str, where: str = "the record") -> tuple[Dataset, str]:
    """The dataset an earlier step (`step`, e.g. `fanns explore`) recorded as `info` (its summary
    with name and content hash, in the file `where`; checked by `check_dataset_entry`): `spec` if
    given, else the built-in of that name; either way it must hold the same vectors. Why: a later
    step that re-reads the dataset must not silently work on other data (a folder that happens to
    carry the same name, a changed file)."""
    info = check_dataset_entry(info, where, step)
    if spec is None:
        name = info["name"]
        if name not in BUILTINS:
            raise FannsError(
                f"`{step}` explored the dataset {name!r}, which is not a built-in",
                hint=f"pass --dataset with the same dataset spec you gave `{step}`",
            )
        spec = f"builtin:{name}"
    ds = load_dataset(spec)
    recorded = info["content_hash"]
    if ds.content_hash() != recorded:
        raise FannsError(
            f"dataset {spec} is not the one explored by `{step}` (content hash {ds.content_hash()} vs {recorded})",
            hint=f"pass the dataset `{step}` was run on",
        )
    return ds, spec


def load_dataset(spec: str) -> Dataset:
    """Open a dataset from a spec (see the module docstring)."""
    if spec.startswith("builtin:"):
        return load_builtin(spec[len("builtin:") :])
    path = Path(spec).expanduser()
    if not path.exists():
        raise FannsError(
            f"dataset {spec!r} not found",
            hint="give an HDF5 file, a directory of vector files, or builtin:NAME (see `fanns datasets`)",
        )
    if path.is_dir():
        return _load_directory(path)
    if path.suffix.lower() in HDF5_EXTENSIONS:
        content = read_hdf5(path)
        if content.assumed:
            status(content.assumed)
        return Dataset(
            name=path.stem,
            base=content.train,
            queries=content.test,
            metric=content.metric,
            cache_dir=cache_dir_for(path.parent, _fallback_key(path)),
            description=f"ann-benchmarks file {path.name}"
            + (" (no 'distance' attribute: euclidean assumed)" if content.assumed else ""),
            given_groundtruth=content.neighbors,
        )
    raise FannsError(
        f"dataset {spec!r} is a {path.suffix or 'extension-less'} file",
        hint="a single file must be an ann-benchmarks HDF5 file (.hdf5); put vector files in a directory",
    )


def _find_role(folder: Path, role: str) -> Path | None:
    words = ROLES[role]
    hits = []
    for p in sorted(folder.iterdir()):
        if p.is_file() and p.suffix.lower() in EXTENSIONS:
            tokens = set(re.split(r"[._-]", p.name.lower()))
            if tokens & set(words):
                hits.append(p)
    if len(hits) > 1:
        raise FannsError(
            f"{folder}: several {role} files: {', '.join(p.name for p in hits)}",
            hint=f"keep one, or name them in {folder / 'dataset.yaml'}",
        )
    return hits[0] if hits else None


def _read_yaml(folder: Path) -> dict:
    cfg_path = folder / "dataset.yaml"
    if not cfg_path.is_file():
        return {}
    try:
        cfg = yaml.safe_load(cfg_path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise FannsError(f"{cfg_path}: invalid YAML ({exc})") from None
    if not isinstance(cfg, dict):
        raise FannsError(f"{cfg_path}: expected a mapping of keys {sorted(YAML_KEYS)}")
    unknown = set(cfg) - YAML_KEYS
    if unknown:
        raise FannsError(f"{cfg_path}: unknown key(s) {sorted(unknown)}", hint=f"allowed keys: {sorted(YAML_KEYS)}")
    for key, value in cfg.items():
        if not isinstance(value, str):
            raise FannsError(f"{cfg_path}: key {key!r} must be a string, got {value!r}")
        check_text(value, f"{cfg_path}: key {key!r}")
    if cfg.get("metric", "l2") not in METRICS:
        raise FannsError(f"{cfg_path}: metric {cfg['metric']!r} is not one of {METRICS}")
    return cfg


def _load_directory(folder: Path) -> Dataset:
    cfg = _read_yaml(folder)
    files: dict[str, Path | None] = {}
    for role in ROLES:
        if role in cfg:
            files[role] = inside(folder, cfg[role], f"{folder / 'dataset.yaml'}: key {role!r}")
        else:
            files[role] = _find_role(folder, role)
    for role in ("base", "query"):
        if files[role] is None:
            raise FannsError(
                f"{folder}: no {role} file found",
                hint=(
                    f"name it with the word {ROLES[role][0]!r} (e.g. {ROLES[role][0]}.fvecs) or list it in dataset.yaml"
                ),
            )
    gt_path = files["groundtruth"]
    return Dataset(
        name=cfg.get("name", folder.resolve().name),
        base=read_vectors(files["base"]),
        queries=read_vectors(files["query"]),
        metric=cfg.get("metric", "l2"),
        cache_dir=cache_dir_for(folder, _fallback_key(folder)),
        description=f"files in {folder}",
        given_groundtruth=read_vectors(gt_path) if gt_path is not None else None,
    )
