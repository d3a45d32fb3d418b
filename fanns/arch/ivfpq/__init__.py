"""The IVF-PQ accelerator (FANNS) composed in Amaranth from PEs: front, BuildLUT, PQ-code fetch,
PQDist/SelK, top level."""
