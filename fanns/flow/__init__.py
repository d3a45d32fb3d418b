"""The orchestration on top of every layer: the end-to-end `fanns generate`, project simulation, and
the command modules of the `fanns` CLI."""
