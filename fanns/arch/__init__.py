"""Stages and whole accelerators composed from PEs, whole-design reference models, and the
infrastructure they share (buses, register maps)."""
