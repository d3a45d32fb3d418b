"""The RAG pipeline model: a RAG description (RAG.yaml), every stage's time (LLM roofline, retrieval
on CPU servers or fanns boards), the pipeline's TTFT, TPOT, throughput and bottleneck. docs/rag.md."""
