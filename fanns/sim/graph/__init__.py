"""Simulation of generated graph projects: the QPP and across-query RTL, and the HLS kernel in C simulation."""
