"""Emitters of IVF-PQ projects: the Vitis HLS project, the Verilog, the project folder and its driver files."""
