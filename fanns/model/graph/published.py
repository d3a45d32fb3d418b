"""Falcon's published DST sweep (thesis Fig. 7.9), the anchor the graph model is compared with.

Why here: the figure is data the model is judged against, as `fanns.model.ivfpq.published` holds
FANNS's Table 6.3. Fig. 7.9 (p. 152) sweeps the candidate groups in the pipeline (mg = 1..7,
columns) and the candidates per group (mc = 1..4, rows) on Deep10M with an HNSW graph, on the
U250 build of 7.5.1 (four DDR4 channels, 200 MHz), and prints four heatmaps: the speedup over BFS
in both parallel modes (intra-query: latency; across-query: throughput), the average hops per
search normalised to BFS's, and R@10 in percent. The hops do not depend on the memory system,
so they check the traversal alone; the speedups also depend on the memory latency, which the
thesis does not state.
"""

from __future__ import annotations

import numpy as np

SOURCE = "Falcon thesis, Fig. 7.9 (p. 152): Deep10M, HNSW, U250 (4 x DDR4, 200 MHz)"
MG = tuple(range(1, 8))
MC = tuple(range(1, 5))

FIG_7_9 = {
    "intra": (
        (1.00, 1.53, 1.81, 2.01, 2.17, 2.27, 2.31),
        (1.34, 1.89, 2.22, 2.44, 2.58, 2.62, 2.51),
        (1.49, 2.01, 2.33, 2.47, 2.41, 2.20, 2.02),
        (1.55, 2.04, 2.28, 2.31, 2.07, 1.85, 1.67),
    ),
    "across": (
        (1.00, 1.50, 1.82, 1.95, 1.92, 1.84, 1.76),
        (1.32, 1.80, 1.84, 1.69, 1.55, 1.43, 1.33),
        (1.45, 1.80, 1.62, 1.43, 1.28, 1.16, 1.06),
        (1.51, 1.68, 1.43, 1.24, 1.09, 0.97, 0.88),
    ),
    "hops": (
        (1.00, 1.08, 1.16, 1.24, 1.32, 1.40, 1.48),
        (1.07, 1.23, 1.39, 1.54, 1.70, 1.86, 2.01),
        (1.14, 1.38, 1.62, 1.85, 2.08, 2.32, 2.56),
        (1.21, 1.53, 1.84, 2.16, 2.47, 2.79, 3.12),
    ),
    "recall_percent": (
        (94.11, 94.26, 94.40, 94.55, 94.63, 94.75, 94.86),
        (94.23, 94.53, 94.74, 94.94, 95.15, 95.33, 95.45),
        (94.36, 94.73, 95.05, 95.31, 95.50, 95.64, 95.79),
        (94.48, 94.93, 95.31, 95.54, 95.72, 95.89, 95.91),
    ),
}
"""Rows mc = 1..4, columns mg = 1..7, as printed."""


def published(table: str) -> np.ndarray:
    """One heatmap of Fig. 7.9 as a [len(MC), len(MG)] array."""
    return np.asarray(FIG_7_9[table], dtype=float)


def best(table: str) -> tuple[int, int]:
    """(mg, mc) of the largest published speedup of `table` ("intra" or "across")."""
    i, j = np.unravel_index(int(np.argmax(published(table))), published(table).shape)
    return MG[j], MC[i]


def log_error(model: np.ndarray, table: str) -> float:
    """Root mean square of log(model / published) over the published cells: 0.1 is about 10 %
    off on a typical cell. `model` is [len(MC), len(MG)] on the published grid."""
    return float(np.sqrt(np.mean(np.log(np.asarray(model) / published(table)) ** 2)))
