"""Progress bars for long work (training, sweeps, simulation), drawn on stderr with rich.

Bars are hidden when stderr is not a terminal or when FANNS_NO_PROGRESS is set, so logs and
tests stay clean.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from fanns.errors import WHERE

T = TypeVar("T")
_console = Console(stderr=True)


def enabled() -> bool:
    return sys.stderr.isatty() and not os.environ.get("FANNS_NO_PROGRESS")


def _bar(*columns) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        *columns,
        console=_console,
        disable=not enabled(),
        transient=False,
    )


@contextmanager
def progress_bar() -> Iterator[Progress]:
    """A rich Progress on stderr (disabled when not interactive)."""
    with _bar(MofNCompleteColumn(), TimeElapsedColumn()) as bar:
        yield bar


@contextmanager
def eta_bar() -> Iterator[Progress]:
    """A rich Progress whose tasks count estimated work (any unit): percent done, elapsed and the
    time remaining at the speed seen so far (disabled when not interactive)."""
    with _bar(TaskProgressColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()) as bar:
        yield bar


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate over `items` with a progress bar labelled `description`."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with progress_bar() as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)


def status(message: str) -> None:
    """Print a one-line status message on stderr (always shown)."""
    _console.print(message, highlight=False)


def step(n: int, total: int, name: str, text: str) -> None:
    """Announce step `n` of `total` of a flow: print `[n/total] text`, and note `name` as where the
    command is, so an unexpected error names the step (`fanns.errors.WHERE`)."""
    WHERE.step = f"step {n}/{total} {name}"
    status(f"[{n}/{total}] {text}")
