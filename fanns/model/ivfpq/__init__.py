"""Performance and resource models of the IVF-PQ accelerator (FANNS): stage timings, memory, SelK,
sequences, options, the DSE and what it writes; the RAG pipeline model built on them (`rag/`)."""
