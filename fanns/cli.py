"""The `fanns` command.

Each subsystem contributes its subcommands through a `register(subparsers)` function in its own
`cli` module, listed in COMMAND_MODULES; this file only wires them together and turns
`FannsError` into one clear message on stderr with a non-zero exit code. SIGTERM and SIGHUP are
turned into an exception like Ctrl-C's, so every context manager (the staged output folders of
`fanns.outputs`, their locks, simulator processes) cleans up before fanns exits 128 + signal.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Sequence

from fanns import __version__
from fanns.checks import check_number, check_text
from fanns.errors import FannsError

# Modules that define `register(subparsers)`; order is the order in `fanns --help`.
COMMAND_MODULES = [
    "fanns.flow.datasets_cli",  # fanns datasets
    "fanns.boards",  # fanns boards
    "fanns.flow.explore_cli",  # fanns explore
    "fanns.flow.dse_cli",  # fanns dse
    "fanns.flow.ivfpq_generate",  # fanns generate
    "fanns.flow.ivfpq_faces_cli",  # fanns generate-hls, generate-rtl
    "fanns.flow.graph_generate",  # fanns generate-graph-rtl, generate-graph-hls
    "fanns.flow.sim_cli",  # fanns sim
    "fanns.flow.run_cli",  # fanns run
    "fanns.flow.sweep_cli",  # fanns sweep
    "fanns.flow.pe_cli",  # fanns pe, fanns calibrate
]

DESCRIPTION = """\
Generate verified FPGA accelerators for vector search.

Typical flow:
  fanns explore DATASET --recall R@10=0.8 --out work/explore   train indexes, measure recall
  fanns dse work/explore --board u55c --recall R@10=0.8 --out work/dse
  fanns generate DATASET --recall R@10=0.8 --board u55c --out project --sim

DATASET is an ann-benchmarks HDF5 file, a directory with base/query(/groundtruth) files
(fvecs/bvecs/ivecs, fbin/u8bin/i8bin/ibin, npy), or builtin:NAME (see `fanns datasets`).
"""


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds the stack like KeyboardInterrupt (not an `Exception`,
    so no `except Exception` swallows it)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


TERMINATING = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def _raise_terminated(signum: int, frame) -> None:
    for s in TERMINATING:  # one unwinding: a second signal must not cut the cleanup short
        signal.signal(s, signal.SIG_IGN)
    raise Terminated(signum)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors through FannsError (same format, same exit code)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise FannsError(f"{self.prog}: {message}", hint=f"run `{self.prog} --help` for the options")


def check_options(args: argparse.Namespace) -> None:
    """The rule every option obeys, whatever its own type says: text has no control characters
    (nothing reaches a generated file or a shell with a line of its own), numbers are finite, not
    negative and of sane magnitude. Option-specific ranges are the options' argparse types."""
    for key, value in sorted(vars(args).items()):
        option = key if key in ("command", "func") else f"--{key.replace('_', '-')}"
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, str):
                check_text(item, f"option {option}")
            elif isinstance(item, (int, float)) and not isinstance(item, bool):
                check_number(item, f"option {option}", lo=0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fanns", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"fanns {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
                continue  # subsystem not built yet
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; SIGTERM/SIGHUP are handled while it runs (main thread only)."""
    previous = {}
    try:
        for s in TERMINATING:
            previous[s] = signal.signal(s, _raise_terminated)
    except ValueError:  # not the main thread: signals cannot be caught here
        pass
    try:
        return _main(argv)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        check_options(args)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0 if args.command is None else 2
        result = args.func(args)
        return int(result or 0)
    except FannsError as exc:
        if debug:
            raise
        print(f"fanns: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("fanns: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print(f"fanns: terminated by {signal.Signals(exc.signum).name}", file=sys.stderr)
        return 128 + exc.signum


if __name__ == "__main__":
    sys.exit(main())
