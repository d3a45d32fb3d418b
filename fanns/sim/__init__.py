"""Simulation of generated projects: RTL under Verilator (compiled benches, `compiled`; cocotb
benches), and g++ C simulation for HLS."""
