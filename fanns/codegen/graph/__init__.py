"""Emitters of graph projects: the Falcon QPP as Verilog and as a Vitis HLS project."""
