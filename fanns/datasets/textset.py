"""`builtin:text-384`: a real 384-d sentence-embedding set, made on this machine from PyPI only.

Why this model: no PyPI wheel ships the weights of a neural sentence model (or of >= 256-d word
vectors), so the embedding is latent semantic analysis, the classic count-based sentence model:
TF-IDF over the corpus (`fanns.datasets.textcorpus`: English sentences of the documentation and
docstrings of pinned Django, SymPy, Sphinx, NetworkX, Twisted, pytest, docutils, Celery and IPython
sdists), then a rank-384 truncated SVD (scikit-learn, randomized, fixed seed), rows scaled to unit
norm; the metric is angular, as for sentence models. 384 is the width of common small sentence
models (MiniLM). The model is fitted on the base sentences only; the queries are sentences held
out by a seeded draw, embedded with the fitted model.

Identical from run to run: pinned sdists (sha256-checked) and scikit-learn version, sorted input
order, fixed seeds, and BLAS held to one thread while fitting (threadpoolctl), so no reduction
order depends on the thread count. Base rows that repeat an earlier row, rows that are all zero
(every word out of the vocabulary) and queries equal to a base row are dropped.

Licences of the corpus: Django, SymPy, NetworkX BSD-3-Clause; Sphinx BSD-2-Clause; Twisted,
pytest MIT; docutils public domain / BSD-2-Clause; Celery BSD-3-Clause; IPython BSD-3-Clause.
Cost to build once here (2 shared cores): about 3 min wall including the pip downloads, 75 s CPU,
peak RSS 1.25 GB (docs/datasets.md, "text-384").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fanns.datasets.cache import cache_root
from fanns.datasets.textcorpus import corpus
from fanns.errors import FannsError

TEXT_DIM = 384
TEXT_QUERIES = 1000
TEXT_SEED = 7
SKLEARN_VERSION = "1.7.2"
"""Pinned: another scikit-learn could change the TF-IDF or SVD numerics, so the cached vectors."""
MIN_DF = 2
"""A word must occur in two base sentences to enter the vocabulary."""
SVD_ITERATIONS = 7
_SPARE_QUERIES = 10
"""One held-out candidate in this many extra, for queries dropped as empty or duplicate."""
TOKEN_PATTERN = r"(?u)\b[a-zA-Z][a-zA-Z]+\b"


def _sklearn():
    """The scikit-learn pieces and threadpoolctl, or a FannsError naming the extra to install."""
    try:
        import sklearn  # optional dependency: the text extra
        from sklearn.decomposition import TruncatedSVD  # optional dependency: the text extra
        from sklearn.feature_extraction.text import TfidfVectorizer  # optional dependency: the text extra
        from threadpoolctl import threadpool_limits  # optional dependency: comes with scikit-learn
    except ImportError:
        raise FannsError(
            f"builtin:text-384 needs scikit-learn=={SKLEARN_VERSION}, which is not installed",
            hint="install the optional extra: pip install 'fanns[text]'",
        ) from None
    if sklearn.__version__ != SKLEARN_VERSION:
        raise FannsError(
            f"builtin:text-384 is defined with scikit-learn=={SKLEARN_VERSION}, found {sklearn.__version__}",
            hint="install the optional extra: pip install 'fanns[text]' (it pins the version)",
        )
    return TfidfVectorizer, TruncatedSVD, threadpool_limits


def embed(base_texts: Sequence[str], query_texts: Sequence[str], dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """LSA vectors (float32, unit rows; zero rows stay zero) of base and query texts, the model
    fitted on the base texts alone, single-threaded (see the module docstring)."""
    tfidf_cls, svd_cls, threadpool_limits = _sklearn()
    with threadpool_limits(limits=1):
        tfidf = tfidf_cls(token_pattern=TOKEN_PATTERN, min_df=MIN_DF, sublinear_tf=True, dtype=np.float64)
        x = tfidf.fit_transform(base_texts)
        if x.shape[1] <= dim:
            raise FannsError(
                f"a vocabulary of {x.shape[1]} words cannot give {dim}-d LSA vectors", hint="use more text"
            )
        svd = svd_cls(n_components=dim, algorithm="randomized", n_iter=SVD_ITERATIONS, random_state=seed)
        base = svd.fit_transform(x)
        queries = svd.transform(tfidf.transform(query_texts))
    return _unit_rows(base), _unit_rows(queries)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1)).astype(np.float32)


def _first_unique(rows: np.ndarray, exclude: set[bytes]) -> np.ndarray:
    """Indices of the rows that are non-zero, not in `exclude` and not equal to an earlier row."""
    keep = []
    for i, row in enumerate(rows):
        key = row.tobytes()
        if key not in exclude and row.any():
            exclude.add(key)
            keep.append(i)
    return np.asarray(keep, dtype=np.int64)


def held_out(n: int, count: int, seed: int) -> np.ndarray:
    """Indices of the `count` of `n` sentences held out as query candidates, in draw order."""
    return np.random.default_rng(seed).permutation(n)[:count]


def make_text_set(sentences: Sequence[str], nq: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Base and query vectors from unique sentences: `nq` queries drawn with `seed` and held out of
    the base and of the model's fit; the base keeps the sentences' order."""
    spare = nq + max(1, nq // _SPARE_QUERIES)
    if len(sentences) <= 2 * spare:
        raise FannsError(f"{len(sentences)} sentences are too few for {nq} queries", hint="use more text")
    held = held_out(len(sentences), spare, seed)
    in_base = np.ones(len(sentences), dtype=bool)
    in_base[held] = False
    base_texts = [s for s, b in zip(sentences, in_base) if b]
    base, queries = embed(base_texts, [sentences[i] for i in held], dim, seed)
    seen: set[bytes] = set()
    base = base[_first_unique(base, seen)]
    queries = queries[_first_unique(queries, seen)]
    if queries.shape[0] < nq:
        raise FannsError(f"only {queries.shape[0]} of {spare} held-out sentences give distinct vectors, not {nq}")
    return base, queries[:nq]


def build() -> tuple[np.ndarray, np.ndarray]:
    """The full `builtin:text-384` arrays (corpus sdists fetched into the cache on first use)."""
    _sklearn()
    return make_text_set(corpus(cache_root() / "sources"), TEXT_QUERIES, TEXT_DIM, TEXT_SEED)
