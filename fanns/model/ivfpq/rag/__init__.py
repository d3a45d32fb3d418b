"""The RAG pipeline model: a RAG description (RAG.yaml), every stage's time (LLM roofline, retrieval
on CPU servers or fanns boards), the pipeline's TTFT, TPOT, throughput and bottleneck. docs/rag.md.

Why under `model/ivfpq/`: its fanns retrieval units are IVF-PQ designs (their performance,
latency and scale-out models, faiss-cpu on the design's index)."""
