"""The one factory for the jinja2 environments that render `templates/`.

Why one factory: every generated file must be reproducible and a misspelt name must fail loudly,
so all template sets share the same settings (undefined names are errors, the template's trailing
newline is kept); what legitimately differs between sets (block trimming, HTML escaping, filters,
a folder of shared skeletons) is a parameter.

Every value a template prints passes `finalize`: text with a control character (a newline, NUL,
escape, ...) is refused, so a name that slipped past its entry check still cannot add a line of its
own to a Makefile, .cfg or C++ file. Multi-line text fanns itself composed is wrapped in `Verbatim`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jinja2

from fanns.checks import control_characters
from fanns.errors import FannsError
from fanns.paths import shared_dir


class Verbatim(str):
    """Text composed by fanns (e.g. a block of generated code) that may span several lines."""


def finalize(value: object) -> object:
    """Refuse printed text with control characters unless it is `Verbatim`."""
    if isinstance(value, str) and not isinstance(value, Verbatim):
        bad = control_characters(value)
        if bad:
            raise FannsError(
                f"refusing to write {value!r} into a generated file: it contains the control character {bad[0]}",
                hint="names, platforms and other values that reach generated files must be one line of plain text",
            )
    return value


def environment(
    folder: str,
    *,
    shared: Sequence[str] = (),
    trim_blocks: bool = True,
    autoescape: bool = False,
    filters: dict[str, Callable] | None = None,
) -> jinja2.Environment:
    """An environment for `templates/<folder>/`.

    `shared`: other folders of `templates/` whose templates are reachable as "<name>/<file>" (for
    `{% extends %}` / `{% include %}`). `trim_blocks`: drop the newline after a tag and the blanks
    before it (trim_blocks and lstrip_blocks), so tags on lines of their own leave no trace.
    `autoescape`: HTML-escape every value (the report page). `filters`: extra filters by name.
    """
    root = shared_dir("templates")
    loader = jinja2.ChoiceLoader(
        [
            jinja2.FileSystemLoader(str(root / folder)),
            jinja2.PrefixLoader({name: jinja2.FileSystemLoader(str(root / name)) for name in shared}),
        ]
    )
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        trim_blocks=trim_blocks,
        lstrip_blocks=trim_blocks,
        keep_trailing_newline=True,
        autoescape=autoescape,
        finalize=finalize,
    )
    env.filters.update(filters or {})
    return env
