"""The processing-element library: one module per PE, each carrying all of its faces.

See `fanns.pe.base` for the contract. Importing this package registers every PE listed in
PE_MODULES.
"""
import importlib

PE_MODULES = [
    "l2dist",
]

for _module in PE_MODULES:
    importlib.import_module(f"fanns.pe.{_module}")
