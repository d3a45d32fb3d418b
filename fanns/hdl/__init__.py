"""Hardware-description helpers below the PEs: AXI bus signatures, register maps, Verilog emission."""
