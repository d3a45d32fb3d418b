"""`fanns pe list` and `fanns calibrate`: inspect the PE library and re-measure its resources
(options: `fanns.flow.parsers.pe`)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from fanns.calibration import calibrate, refit
from fanns.errors import FannsError
from fanns.pe import registry
from fanns.pe.calibration_table import load_table


def _short(value) -> str:
    """A parameter as the table shows it: long sequences (e.g. register maps) by their length."""
    if isinstance(value, (list, tuple)) and len(str(value)) > 40:
        return f"<{len(value)} entries>"
    return str(value)


def pe_list_command(args: argparse.Namespace) -> int:
    """`fanns pe list`."""
    table = load_table(args.family)
    out = Table(title=f"fanns PE library (resources: {args.family}, at the first calibration point)")
    for col in ("PE", "parameters", "timing (cycles = L + (N-1)*II)", "LUT", "FF", "BRAM18", "URAM", "DSP", "fit err"):
        out.add_column(col)
    for name, cls in registry().items():
        fit = table.pes.get(name)
        if fit and cls.calibration_points:
            pe = cls(**cls.calibration_points[0])
            res = fit.predict(pe)
            cells = [f"{v:.0f}" for v in res.as_tuple()]
            err = f"{100 * max(fit.max_rel_error.values()):.1f}%"
            params = ", ".join(f"{k}={_short(v)}" for k, v in pe.params().items())
        else:
            cells, err, params = ["-"] * 5, "uncalibrated", ""
        out.add_row(name, params, cls.timing_formula, *cells, err)
    Console().print(out)
    return 0


def calibrate_command(args: argparse.Namespace) -> int:
    """`fanns calibrate`."""
    names = args.pe or None
    for name in names or []:
        if name not in registry():
            raise FannsError(f"unknown PE {name!r}", hint=f"known PEs: {', '.join(registry())}")
    if args.refit:
        if not names:
            raise FannsError("--refit needs the PEs to refit", hint="name them with --pe NAME")
        table = refit(names, family=args.family)
    else:
        table = calibrate(names, family=args.family, workers=args.jobs, again=args.again)
    for name in names or table.pes:
        fit = table.pes[name]
        errs = ", ".join(f"{k} {100 * v:.1f}%" for k, v in fit.max_rel_error.items())
        print(f"{name}: {len(fit.points)} points, max fit error: {errs}")
    return 0
