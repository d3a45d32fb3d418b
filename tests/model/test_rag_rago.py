"""The RAG model against RAGO's published figures and trends (`fanns.model.ivfpq.rag.rago`): every
check within the tolerance it states. benchmarks/rag_rago.py prints the same table."""

import pytest

from fanns.model.ivfpq.rag import rago


@pytest.fixture(scope="module")
def checks() -> dict[str, rago.Check]:
    return {c.key: c for c in rago.all_checks()}


KEYS = [
    "case1_share_128_128",
    "case1_share_256_128",
    "case1_share_128_256",
    "case1_share_2048_512",
    "case1_decode_costlier",
    "case1_xpu_rise",
    "case1_small_model_share",
    "case1_model_size",
    "case1_scan_fraction",
    "case1_query_doubling",
    "case1_70b_crossover",
    "case1_rag8b_vs_llm70b",
    "case1_flops",
    "case1_rag1b_vs_8b",
    "retrieval_batch1_32_servers",
    "case2_encoder_bottleneck",
    "case2_retrieval_minimal",
    "case3_idle_64_64",
    "case3_idle_64_16",
    "case3_frequency_gap",
    "case4_rewriter_ttft",
    "case4_reranker_ttft",
    "case4_qps",
]


def test_every_check_is_listed(checks):
    assert sorted(checks) == sorted(KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_rago_figure(checks, key):
    c = checks[key]
    assert c.ok, f"{c.what}: paper {c.paper}, model {c.model}, tolerance {c.tolerance}"


def test_case1_shares_fall_as_sequences_grow(checks):
    """The headline trend of RAGO's Figure 7(c): the share of time retrieving falls as prefill and
    decode lengths grow, from retrieval-bound (above 80 %) to inference-bound (below 50 %)."""
    shares = [rago.evaluate(rago.case1("8b", p, g)).retrieval_share for p, g in ((128, 128), (512, 256), (2048, 512))]
    assert shares[0] > 0.8 > shares[1] > 0.5 > shares[2]
