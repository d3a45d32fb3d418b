"""Simulation of generated IVF-PQ projects: the whole RTL under Verilator + cocotb, the HLS kernel in C simulation."""
