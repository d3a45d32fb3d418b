"""Simulation of generated IVF-PQ projects: the whole RTL under Verilator (compiled or cocotb bench),
the HLS kernel in C simulation."""
