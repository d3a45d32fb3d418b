"""Stages and whole accelerators composed from PEs, and the infrastructure they share (buses, register maps)."""
