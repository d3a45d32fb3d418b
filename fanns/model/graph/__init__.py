"""Performance models of the graph accelerator (Falcon / DST): the QPP cycle model, across-query
channel sharing, the compiled batch model, the graph DSE."""
