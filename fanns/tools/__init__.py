"""External tools behind one Python call each: Verilator (with cocotb), g++, yosys, and a parallel job runner."""
