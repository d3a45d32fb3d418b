"""The one exception type for bad input.

Everything a user can get wrong (a file, a flag, a config value) raises `FannsError` with a
message that says what is wrong and where, and a hint that says how to fix it. The CLI prints
it as one clear message and exits non-zero; a traceback appears only with `--debug`. Any other
exception is a bug: the CLI reports it as one line naming where the command was (`WHERE`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


class FannsError(Exception):
    """A user-facing error: `message` says what and where, `hint` says what to do."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __reduce__(self):
        """Pickled whole (hint too), so an error raised in a cluster worker reaches the user intact."""
        return (type(self), (self.message, self.hint))

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class Whereabouts:
    """Where a command is in its work, for the one line an unexpected exception (a bug, not bad
    input) becomes in `fanns.cli`: the step of its flow and the design file it works on. The flows
    note them as they go (`fanns.progress.step`, `note_design`); the CLI clears them before each
    command. Why here, at the bottom: the CLI reads them without importing any flow."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.step: str | None = None
        self._design: Path | Callable[[], Path] | None = None

    def note_design(self, design: str | Path | Callable[[], Path]) -> None:
        """The design file the command works on, or a function that saves the design it works on
        (a design chosen in memory) and returns the file: called only if an error is reported."""
        self._design = design if callable(design) else Path(design)

    def design(self) -> Path | None:
        """The design file to name (saving the design first when it was noted as a function)."""
        return self._design() if callable(self._design) else self._design


WHERE = Whereabouts()
