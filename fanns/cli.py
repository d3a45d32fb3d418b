"""The `fanns` command.

Each command's options are defined by a `register(subparsers)` function in a light module of
`fanns.flow.parsers` (listed in COMMAND_MODULES), which names the command's implementation as
`func="module:function"`; this file wires the parsers together, imports the implementation only
when its command runs (so `fanns --help` and `fanns CMD --help` load none of amaranth, faiss,
scipy, cocotb, ...), and turns errors into one clear message on stderr: `FannsError` (bad input,
exit 2), and any other exception (a bug: exit 3) as one line naming the command, the step of the
flow and the design file it was working on (`fanns.errors.where`), with `--debug` for the
traceback. SIGTERM and SIGHUP are turned into an exception like Ctrl-C's, so every context
manager (the staged output folders of `fanns.outputs`, their locks, simulator processes) cleans
up before fanns exits 128 + signal.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Sequence

from fanns import __version__
from fanns.checks import check_number, check_text
from fanns.errors import WHERE, FannsError

# Modules that define `register(subparsers)`; order is the order in `fanns --help`.
COMMAND_MODULES = [
    "fanns.flow.parsers.datasets",  # fanns datasets
    "fanns.flow.parsers.boards",  # fanns boards
    "fanns.flow.parsers.explore",  # fanns explore
    "fanns.flow.parsers.dse",  # fanns dse
    "fanns.flow.parsers.generate",  # fanns generate
    "fanns.flow.parsers.faces",  # fanns generate-hls, generate-rtl
    "fanns.flow.parsers.graph_generate",  # fanns generate-graph-rtl, generate-graph-hls
    "fanns.flow.parsers.sim",  # fanns sim
    "fanns.flow.parsers.run",  # fanns run
    "fanns.flow.parsers.sweep",  # fanns sweep
    "fanns.flow.parsers.pe",  # fanns pe, fanns calibrate
]

INTERNAL_ERROR = 3
"""Exit code of an unexpected exception (a bug), apart from bad input's (`FannsError.exit_code`)."""
TRACKER = "the fanns issue tracker, with the command and the --debug output"
"""Where a bug is reported (the project has no public tracker address yet)."""

EPILOG = f"""\
exit status:
  0    done
  1    a simulation or check disagreed with the reference model (the report says where)
  2    bad input or options (the message names it and how to fix it)
  {INTERNAL_ERROR}    an internal error: a bug in fanns, reported as one line naming the step and the design
       file; `fanns --debug COMMAND ...` shows the traceback
  130  interrupted (Ctrl-C); 128 + N: ended by signal N (SIGTERM, SIGHUP), after cleaning up
"""

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
    parser = _Parser(
        prog="fanns", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"fanns {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show full tracebacks on errors (give it before the command)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def command_function(target: str) -> Callable[[argparse.Namespace], int | None]:
    """The implementation a parser names as "module:function", imported now (not at `--help`)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


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
    args = None
    WHERE.clear()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        check_options(args)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0 if args.command is None else 2
        result = command_function(args.func)(args)
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
    except Exception as exc:  # a bug, not bad input: one line, no traceback (issue 46)
        if debug:
            raise
        print(internal_error(getattr(args, "command", None), exc), file=sys.stderr)
        return INTERNAL_ERROR


def internal_error(command: str | None, exc: Exception) -> str:
    """The report of an unexpected exception: one line naming the command, the step of its flow
    and the design file (`fanns.errors.WHERE`) and the exception, and a hint line."""
    where = [f"internal error in {command or 'fanns'}"]
    if WHERE.step:
        where.append(WHERE.step)
    try:
        design = WHERE.design()
    except Exception as saving:  # the report must not fail: say why the design is not named
        where.append(f"design not saved ({type(saving).__name__}: {_one_line(saving)})")
    else:
        if design is not None:
            where.append(f"design {design}")
    message = f"{type(exc).__name__}: {_one_line(exc)}" if _one_line(exc) else type(exc).__name__
    cause = (
        "if the machine is not the cause (memory, disk space, permissions), this is a bug in fanns"
        if isinstance(exc, (OSError, MemoryError))
        else "this is a bug in fanns, not in your input"
    )
    return (
        f"fanns: {', '.join(where)}: {message}\n  hint: {cause}: run the command again as "
        f"`fanns --debug {command or 'COMMAND'} ...` for the traceback, and report it on {TRACKER}"
    )


def _one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's message on one line, at most `limit` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
