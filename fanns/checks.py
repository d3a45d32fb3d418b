"""Validation of values where they enter fanns: names, platform names, free text and numbers.

Why one module: every value a user controls (a CLI option, a key of a board file, design.yaml or
explore.json) may end up in a generated Makefile, .cfg, C++ or Verilog file, or in a size, a
division or a loop bound. Each entry point checks its values here, once, against the syntax they
land in (`check_name`, `check_platform`, `check_text`) and the range they must lie in
(`check_number`); the argparse types `arg_int` / `arg_float` do the same for options. Errors are
`FannsError`s naming the input.
"""

from __future__ import annotations

import argparse
import math
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from fanns.choices import GRAPH_KINDS
from fanns.errors import FannsError

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,+-]{0,127}\Z")
"""Names that reach generated files (index factories, boards, memory groups): no blanks, no
quotes, no shell or C++ metacharacters, no path separators."""

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
"""C/Verilog identifiers."""

PLATFORM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}\Z")
"""Vitis platform names (xilinx_u55c_gen3x16_xdma_3_202210_1) or the path of an .xpfm file is
not accepted: generated Makefiles pass the name to v++ unquoted."""

MAX_MAGNITUDE = 1e15
"""Largest magnitude of a numeric setting (clock, bandwidth, capacity, ...): far beyond any real
board, small enough that sums and products of a few of them stay finite and exact-ish."""

MAX_CLOCK_MHZ = 10_000
"""Clocks above 10 GHz are a typo, not an FPGA (a design's clock_mhz, `--clock`)."""

MAX_LLM_MS = 600_000
"""The time the LLM leaves before retrieval (`--llm-ms`) is at most 10 minutes: beyond it every
prefetch budget is the cache, so a larger value is a typo (a unit slip), not a pipeline."""


def check_llm_ms(value: Any, what: str = "--llm-ms") -> float:
    """The time the LLM leaves for the lookahead prefetch, in ms (docs/host_tier.md): 0 (no hidden
    prefetch) to `MAX_LLM_MS`."""
    return float(check_number(value, what, lo=0, hi=MAX_LLM_MS))


def control_characters(text: str) -> list[str]:
    """The control and line-separator characters of `text` (tab allowed), as repr strings."""
    return [repr(c) for c in text if c != "\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def check_text(value: Any, what: str) -> str:
    """`value` must be a string without control characters (newline, NUL, escape, ...)."""
    if not isinstance(value, str):
        raise FannsError(f"{what} must be text, got {value!r}")
    bad = control_characters(value)
    if bad:
        raise FannsError(f"{what} contains the control character {bad[0]}: {value!r}", hint="remove it")
    return value


def check_name(value: Any, what: str, pattern: re.Pattern = NAME) -> str:
    """`value` must match `pattern` (default `NAME`); the error quotes the value and the rule."""
    if not isinstance(value, str) or not pattern.match(value):
        rule = {
            NAME.pattern: "letters, digits and _ . , + - (at most 128, not starting with . , + -)",
            IDENTIFIER.pattern: "an identifier: letters, digits and _, not starting with a digit",
            PLATFORM.pattern: "a Vitis platform name: letters, digits and _ . -",
        }.get(pattern.pattern, pattern.pattern)
        raise FannsError(f"{what} is {value!r}: not a valid name", hint=f"use {rule}")
    return value


def check_platform(value: Any, what: str = "platform") -> str:
    """A Vitis platform name (e.g. xilinx_u55c_gen3x16_xdma_3_202210_1)."""
    return check_name(value, what, PLATFORM)


def check_number(
    value: Any,
    what: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    integer: bool = False,
    magnitude: float = MAX_MAGNITUDE,
) -> float | int:
    """`value` must be a finite number (an integer with `integer`), not a bool, of magnitude at
    most `magnitude`, within [lo, hi] (ends excluded with `lo_open` / `hi_open`)."""
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok:
        raise FannsError(f"{what} must be {'an integer' if integer else 'a number'}, got {value!r}")
    if not math.isfinite(value) or abs(value) > magnitude:
        raise FannsError(f"{what} must be a finite number of magnitude at most {magnitude:g}, got {value!r}")
    if lo is not None and (value <= lo if lo_open else value < lo):
        raise FannsError(f"{what} must be {'above' if lo_open else 'at least'} {lo:g}, got {value!r}")
    if hi is not None and (value >= hi if hi_open else value > hi):
        raise FannsError(f"{what} must be {'below' if hi_open else 'at most'} {hi:g}, got {value!r}")
    return value


def _arg(convert: Callable[[str], Any], kind: str, **limits: Any) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        try:
            return check_number(value, "the value", integer=kind == "an integer", **limits)
        except FannsError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {exc.message.removeprefix('the value ')}") from None

    parse.__name__ = kind.split()[-1]
    return parse


def arg_int(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An argparse `type` for an integer option within [lo, hi]."""
    return _arg(int, "an integer", lo=lo, hi=hi)


def arg_float(
    lo: float | None = None, hi: float | None = None, *, lo_open: bool = False, hi_open: bool = False
) -> Callable[[str], float]:
    """An argparse `type` for a finite number option within the given range."""
    return _arg(float, "a number", lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)


def arg_llm_ms(text: str) -> float:
    """An argparse `type` for `--llm-ms` (`check_llm_ms`)."""
    try:
        return check_llm_ms(float(text))
    except (ValueError, FannsError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: a time in ms from 0 to {MAX_LLM_MS:,}") from exc


def arg_name(pattern: re.Pattern = NAME) -> Callable[[str], str]:
    """An argparse `type` for a name option (see `check_name`)."""

    def parse(text: str) -> str:
        try:
            return check_name(text, "the value", pattern)
        except FannsError as exc:
            raise argparse.ArgumentTypeError(f"{exc.message.removeprefix('the value is ')} ({exc.hint})") from None

    parse.__name__ = "name"
    return parse


def parse_graph_kinds(text: str) -> list[str]:
    """`--graph hnsw,nsg`: the graph kinds named, each once, in the order given."""
    kinds = [k.strip().lower() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in GRAPH_KINDS]
    if bad or not kinds:
        raise FannsError(
            f"unknown graph kind {', '.join(bad) or repr(text)}", hint=f"--graph takes {','.join(GRAPH_KINDS)}"
        )
    return sorted(set(kinds), key=kinds.index)


def arg_graph_kinds(text: str) -> str:
    """An argparse `type` for `--graph KINDS`, checked where it enters (before any index is trained)."""
    try:
        parse_graph_kinds(text)
    except FannsError as exc:
        raise argparse.ArgumentTypeError(f"{exc.message} ({exc.hint})") from None
    return text
