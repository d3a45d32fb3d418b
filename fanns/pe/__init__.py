"""The processing-element library: one module per PE, each carrying all of its faces.

See `fanns.pe.base` for the contract. Importing this package imports every module in it, which
registers every PE class (adding a PE means adding one module here; nothing else to edit).
"""

import importlib
import pkgutil

from fanns.errors import FannsError
from fanns.pe.base import PE, registered

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")


def registry() -> dict[str, type[PE]]:
    """All PE classes by name."""
    return registered()


def get_pe(name: str) -> type[PE]:
    """The PE class called `name`, or a FannsError listing the known ones."""
    pes = registry()
    if name not in pes:
        raise FannsError(f"unknown PE {name!r}", hint=f"known PEs: {', '.join(pes)}")
    return pes[name]
