"""The graph accelerator (Falcon QPP with DST) composed in Amaranth from PEs."""
