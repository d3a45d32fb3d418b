"""The processing-element library: one module per PE, each carrying all of its faces.

See `fanns.pe.base` for the contract. Importing this package imports every module in it, which
registers every PE class (adding a PE means adding one module here; nothing else to edit).
"""
import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    if _info.name != "cli":
        importlib.import_module(f"{__name__}.{_info.name}")
