"""The one exception type for bad input.

Everything a user can get wrong (a file, a flag, a config value) raises `FannsError` with a
message that says what is wrong and where, and a hint that says how to fix it. The CLI prints
it as one clear message and exits non-zero; a traceback appears only with `--debug`.
"""

from __future__ import annotations


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
