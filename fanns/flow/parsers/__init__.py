"""The options of every `fanns` command, one module per command (or pair of commands).

Why apart from the commands: `fanns --help` and `fanns CMD --help` build every parser, and a
command's implementation imports the heavy layers (amaranth, faiss, scipy, cocotb, ...). These
modules import only argparse, `fanns.checks`, `fanns.choices` and `fanns.index.goals`; each
command names its implementation as `set_defaults(func="module:function")`, which `fanns.cli`
imports only when the command runs (tests/flow/test_cli.py checks that building the parser loads
none of the heavy packages).
"""
