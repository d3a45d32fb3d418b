"""Host mode beside indexes that fit (docs/host_tier.md, "The DSE"): one exploration designs an index
that fits the board with its lists on the card and a larger one with its lists in host memory, and
ranks the two kinds like with like (the host candidate by its QPS with prefetch)."""

from pathlib import Path

import pytest

from fanns.boards import load_board
from fanns.model.ivfpq import dse, host_cache, host_mix, report
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.report import beyond

MB = 1 << 20


def board_file(folder: Path, name: str, host_gbps: float | None) -> Path:
    """The U55C's board file with 32 x 1 MB of HBM and a host link of `host_gbps` (None: no `host`)."""
    text = (Path(__file__).resolve().parents[2] / "boards" / "u55c.yaml").read_text()
    text = text.replace("capacity_gb: 0.5", f"capacity_gb: {MB / 2**30!r}").replace("name: u55c", f"name: {name}")
    host = next(line for line in text.splitlines() if line.startswith("host:"))
    if host_gbps is None:
        text = text.replace(host + "\n", "")
    else:
        text = text.replace(host, host.replace("bandwidth_gbps: 12.0", f"bandwidth_gbps: {host_gbps!r}"))
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def mix():
    """An index that fits the 32 MB board (100k vectors: 2 MB of lists, a quarter of them probed)
    and one that does not (2M vectors: 40 MB, 4 of 4096 lists probed)."""
    fit = synthetic_workload(100_000, 128, 16, 256, 64, 10, False, queries=30, imbalance=1.5, seed=1)
    big = synthetic_workload(2 * 10**6, 128, 16, 4096, 4, 10, False, queries=30, imbalance=1.5, seed=1)
    return fit, big


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("boards")
    return {
        "fast": load_board(str(board_file(folder, "fastlink", 12.0))),
        "slow": load_board(str(board_file(folder, "slowlink", 0.02))),
        "none": load_board(str(board_file(folder, "nolink", None))),
    }


def explore(workloads, board):
    return dse.run(workloads, board, "R@10=0.8", 140.0, 0.6, top=1, padding=False, llm_ms=0.1)


@pytest.fixture(scope="module")
def outcomes(mix, boards):
    return {link: explore(list(mix), boards[link]) for link in ("fast", "slow")}


def test_one_exploration_has_a_candidate_of_each_kind(mix, boards, outcomes):
    fit, big = mix
    board = boards["fast"]
    assert host_cache.fits(fit, board) and not host_cache.fits(big, board)
    assert not host_cache.host_mode(fit, board) and host_cache.host_mode(big, board)
    assert host_mix.split([fit, big], board) == ([fit], [big])
    out = outcomes["fast"]
    card, host = out.kind_best["card"], out.kind_best["host"]
    assert card.workload is fit and card.host_tier is None
    assert host.workload is big and host.host_tier["llm_ms"] == 0.1 and host.host_tier["cache_bytes"] > 0
    # the host candidate's stages were chosen on a board whose channels hold it; its lists are not on the card
    assert host.host_tier["index_gb"] > host.host_tier["board_memory_gb"]


def test_the_host_candidate_is_ranked_by_its_figures_with_prefetch(outcomes):
    fast, slow = outcomes["fast"], outcomes["slow"]
    for out in (fast, slow):
        host = out.kind_best["host"]
        assert host.rank_qps == host.host_tier["with_prefetch"]["qps"] < host.qps  # not its in-HBM figure
        assert [p.rank_qps for p in out.top] == sorted((p.rank_qps for p in out.top), reverse=True)
        assert out.kind_best["card"].rank_qps == out.kind_best["card"].qps
    # the same stages on both boards (the link is no stage option), the same in-HBM figures: only the
    # link's QPS with prefetch differs, and it decides
    h_fast, h_slow = fast.kind_best["host"], slow.kind_best["host"]
    card = fast.kind_best["card"]
    assert repr(h_fast.stages) == repr(h_slow.stages) and h_fast.qps == h_slow.qps > card.qps
    assert h_fast.rank_qps > card.rank_qps and fast.best is h_fast
    assert h_slow.rank_qps < slow.kind_best["card"].rank_qps and host_mix.kind(slow.best) == "card"
    assert fast.host_tier is h_fast.host_tier and slow.host_tier is None


def test_the_choice_in_words_and_records(outcomes, tmp_path):
    fast, slow = outcomes["fast"], outcomes["slow"]
    why = host_mix.why_text(fast)
    assert why.startswith(f"chosen: {fast.best.workload.label()} in host memory at ")
    assert f"which beats {slow.kind_best['card'].workload.label()} in HBM at " in why and "with prefetch" in why
    assert host_mix.why_text(slow).startswith(f"chosen: {slow.best.workload.label()} in HBM at ")
    rec = report.outcome_record(fast)
    assert rec["kinds"]["chosen"] == "host" and set(rec["kinds"]["candidates"]) == {"card", "host"}
    assert rec["kinds"]["candidates"]["host"]["rank_qps"] == round(fast.best.host_tier["with_prefetch"]["qps"], 1)
    assert rec["best"]["lists"] == "host memory" and rec["host_tier"] == fast.best.host_tier
    design = report.to_design(fast.best, fast, tmp_path)  # the chosen host design generates as before
    assert design.stages.pq_dist.host_tier.cache_bytes == fast.best.host_tier["cache_bytes"]
    card_design = report.to_design(slow.best, slow, tmp_path)
    assert card_design.stages.pq_dist.host_tier is None and "host_tier" not in card_design.prediction


def test_without_a_host_link_the_larger_index_is_refused_by_name(mix, boards):
    fit, big = mix
    board = boards["none"]
    assert host_mix.split([fit, big], board) == ([fit, big], [])
    out = explore([fit, big], board)
    assert out.best.workload is fit and set(out.kind_best) == {"card"} and out.host_tier is None
    (line,) = out.refused
    assert big.label() in line and str(board.path) in line and "no `host` link" in line
    assert host_mix.lines(out) == [f"not designed: {line}"]
    alone = explore([big], board)
    assert alone.best is None and line in alone.explain


def test_the_sweep_report_lists_both_kinds(outcomes):
    """The sweep report's section of each outcome: the kinds with the figure each is ranked by, and
    the host candidate's prefetch curve whether it was chosen or not."""
    for link, chosen in (("fast", "host"), ("slow", "card")):
        out = outcomes[link]
        entry = beyond.record(out, 128, None)
        kinds = entry["kinds"]
        assert kinds["chosen"] == chosen and kinds["why"] == host_mix.why_text(out) and kinds["rule"]
        assert kinds["candidates"]["card"]["ranked_by"] == "its QPS"
        assert kinds["candidates"]["host"]["ranked_by"] == "its QPS with prefetch"
        host = out.kind_best["host"]
        assert entry["host_tier"]["chosen"]["budget_bytes"] == host.host_tier["budget_bytes"]
        assert entry["host_tier"]["title"].endswith("prefetch into HBM" if chosen == "host" else "(not chosen)")
