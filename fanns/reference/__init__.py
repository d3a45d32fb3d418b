"""Bit-accurate reference models of whole accelerators: what generated hardware must return."""
