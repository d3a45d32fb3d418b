"""What the design descriptions (`design.yaml`) of both accelerators share: validation helpers
whose errors name the offending key, and one YAML format with one reader and writer.

Why one module: `fanns.design.ivfpq.IvfPqDesign` and `fanns.design.graph.GraphDesign` are read by
the same tools (DSE, generators, simulators, host driver), so a design file is written, read and
rejected the same way whatever its kind.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, NoReturn, TypeVar

import yaml

from fanns.boards import Board, board_of_design
from fanns.checks import MAX_CLOCK_MHZ, check_name
from fanns.datasets.formats import atomic_path
from fanns.errors import FannsError
from fanns.index.goals import RecallGoal, parse_goal

OPTIONAL_KEYS = ("goal", "prediction", "board_file")
"""Top-level keys a design file may leave out."""

T = TypeVar("T")
D = TypeVar("D", bound="DesignFile")


def fail(where: str, message: str, hint: str | None = None) -> NoReturn:
    """Reject a design: `where` is the key path (e.g. ``stages.pq_dist.pes``)."""
    raise FannsError(f"design: {where}: {message}", hint=hint)


MAX_INT = 1 << 40
"""Largest integer a design key may hold (sizes of real indexes stay far below)."""
MAX_UNITS = 4096
"""Largest count of hardware units (PEs, lanes, streams, channels) or FIFO depth: beyond it the
generators would run out of memory long before a device could hold the design."""


def check_int(where: str, value: Any, lo: int = 0, hi: int = MAX_INT) -> int:
    """`value` must be an integer (not a bool) in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, int):
        fail(where, f"must be an integer, got {value!r}")
    if value < lo:
        fail(where, f"must be at least {lo}, got {value}")
    if value > hi:
        fail(where, f"must be at most {hi}, got {value}")
    return value


def entry(where: str, check: Callable[..., T], value: Any, *args: Any, **kwargs: Any) -> T:
    """Run a `fanns.checks` check on the design value at `where`; its error names the key."""
    try:
        return check(value, *args, **kwargs)
    except FannsError as exc:
        fail(where, exc.message.removeprefix("the value ").removeprefix("is "), hint=exc.hint)


def read_goal(value: Any) -> RecallGoal | None:
    """The design's recall goal (`goal:`, e.g. ``R@10=0.8``), parsed once where the file enters."""
    if value is None:
        return None
    try:
        return parse_goal(value)
    except FannsError as exc:
        fail("goal", exc.message, hint=exc.hint)


def goal_text(goal: RecallGoal | None) -> str | None:
    """The design's goal as design.yaml writes it."""
    return None if goal is None else goal.text


def check_choice(where: str, value: Any, choices: tuple[str, ...]) -> str:
    """`value` must be one of `choices`."""
    if value not in choices:
        fail(where, f"is {value!r}", hint=f"one of {', '.join(choices)}")
    return value


def from_mapping(cls: type[T], where: str, data: Any, optional: tuple[str, ...] = ()) -> T:
    """Build dataclass `cls` from a mapping, rejecting unknown and missing keys."""
    if not isinstance(data, dict):
        fail(where, f"must be a mapping, got {type(data).__name__}")
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        fail(f"{where}.{unknown[0]}", "unknown key", hint=f"allowed keys: {', '.join(names)}")
    missing = [n for n in names if n not in data and n not in optional]
    if missing:
        fail(f"{where}.{missing[0]}", "missing key")
    return cls(**{k: v for k, v in data.items()})


class DesignFile(ABC):
    """Base of the design classes: a design of kind `KIND` is a mapping of the top-level `KEYS`
    (in the order the error hint lists them) with ``version: VERSION`` and ``kind: KIND``.
    Subclasses are frozen dataclasses with the fields board, clock_mhz and util."""

    VERSION: ClassVar[int]
    KIND: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    """The kind in words, for errors: "an ivfpq design"."""
    KEYS: ClassVar[tuple[str, ...]]

    board: str
    clock_mhz: float
    util: float
    board_file: dict | None
    """The content of the board file the design was made for, when it is not a shipped board."""

    def target_board(self) -> Board:
        """The board this design was made for (its `board_file`, else the shipped board `board`)."""
        board = board_of_design(self.board, self.board_file)
        self.check_board(board)
        return board

    @abstractmethod
    def check_board(self, board: Board) -> None:
        """Whatever the design names on its board (memories, channels) exists there."""

    @abstractmethod
    def to_dict(self) -> dict:
        """The design as the mapping design.yaml holds."""

    @classmethod
    @abstractmethod
    def from_dict(cls: type[D], data: Any) -> D:
        """The design from a design.yaml mapping, validated."""

    @classmethod
    def check_document(cls, data: Any) -> None:
        """The top level of a design file: a mapping of known keys, none missing, of this kind and version."""
        if not isinstance(data, dict):
            fail("the file", "must be a mapping")
        unknown = sorted(set(data) - set(cls.KEYS))
        if unknown:
            fail(unknown[0], "unknown key", hint=f"allowed keys: {', '.join(cls.KEYS)}")
        missing = sorted(set(cls.KEYS) - set(OPTIONAL_KEYS) - set(data))
        if missing:
            fail(missing[0], "missing key")
        if data["version"] != cls.VERSION or data["kind"] != cls.KIND:
            fail(
                "version",
                f"expected {cls.DESCRIPTION} of version {cls.VERSION}, got {data['kind']!r} v{data['version']!r}",
            )

    def check_target(self) -> None:
        """The keys every design has: board name, clock and the utilisation limit."""
        if not isinstance(self.board, str) or not self.board:
            fail("board", "must be a board name")
        entry("board", check_name, self.board, "the value")
        number = (int, float)
        if not (isinstance(self.clock_mhz, number) and 0 < self.clock_mhz <= MAX_CLOCK_MHZ):
            fail("clock_mhz", f"must be a positive number up to {MAX_CLOCK_MHZ} MHz, got {self.clock_mhz!r}")
        if not (isinstance(self.util, number) and 0 < self.util <= 1):
            fail("util", f"must be in (0, 1], got {self.util!r}")
        goal = getattr(self, "goal", None)
        if goal is not None and not isinstance(goal, RecallGoal):
            fail("goal", f"must be a recall goal, got {goal!r}")
        if self.board_file is not None and not isinstance(self.board_file, dict):
            fail("board_file", "must be the mapping of a board file")

    def to_yaml(self) -> str:
        """The text of design.yaml (the one YAML style of every design file and generated project)."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None, width=110)

    def save(self, path: Path) -> None:
        with atomic_path(Path(path)) as tmp:
            tmp.write_text(self.to_yaml())

    @classmethod
    def load(cls: type[D], path: Path) -> D:
        """Read and validate a design file; errors name the file."""
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except OSError as exc:
            raise FannsError(f"{path}: cannot read the design ({exc.strerror})") from None
        except yaml.YAMLError as exc:
            raise FannsError(f"{path}: invalid YAML ({exc})") from None
        try:
            return cls.from_dict(data)
        except FannsError as exc:
            raise FannsError(f"{path}: {exc.message}", hint=exc.hint) from None
