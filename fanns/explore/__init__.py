"""Index explorers: find index parameters and measure recall and hardware work (IVF-PQ, graph)."""
