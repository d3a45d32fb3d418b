"""Simulation: Verilator discovery, cocotb runners for RTL, and g++ C simulation for HLS."""
