"""Stages and whole accelerators composed from PEs, and whole-design reference models."""
