"""Search indexes as software: faiss IVF-PQ arrays, the unified graph format, traversal references,
recall and recall goals."""
