"""DST sweep tables, best-configuration choice, and the `fanns explore --graph` command."""

import json

import faiss
import numpy as np
import pytest

from fanns.cli import main
from fanns.errors import FannsError
from fanns.explore.graph_sweep import SweepSetup, format_tables, sweep
from fanns.index.recall import recall_at_k
from fanns.model.graph.qpp import MemorySystem
from fanns.pe.bloom import Bloom
from tests.tiers import slow_params


@pytest.fixture(scope="module")
def small_sweep(synthetic):
    g = synthetic["graphs"]["hnsw"]
    qs = synthetic["queries"][:60]
    gt = faiss.knn(qs, synthetic["base"], 10)[1]
    setup = SweepSetup(
        l=32,
        cand_size=32,
        bloom=Bloom(h=2, b=2 * 1024, w=32),
        mg=(1, 2, 4),
        mc=(1, 2),
        memory=MemorySystem(latency_cycles=80),
    )
    return sweep(g, g.fmt.quantize(qs), gt, setup)


def test_tables_are_normalised_to_bfs(small_sweep):
    for mode in ("intra", "across"):
        speed = small_sweep.table(mode, "speedup")
        assert speed.shape == (2, 3) and speed[0, 0] == 1.0
        assert small_sweep.table(mode, "hops")[0, 0] == 1.0
        assert np.all(small_sweep.table(mode, "hops") >= 0.99)
        bfs, dst = small_sweep.cells[mode, 1, 1], small_sweep.cells[mode, 4, 2]
        expected = bfs.latency / dst.latency if mode == "intra" else dst.qps / bfs.qps
        assert small_sweep.speedup(mode, 4, 2) == pytest.approx(expected)
        assert small_sweep.speedup(mode, 4, 2) > 1.5


def test_best_configuration_keeps_bfs_recall(small_sweep):
    for mode in ("intra", "across"):
        mg, mc = small_sweep.best(mode)
        assert small_sweep.cells[mode, mg, mc].recall >= small_sweep.cells[mode, 1, 1].recall
        fastest = max(
            small_sweep.speedup(mode, a, b)
            for (m, a, b) in small_sweep.cells
            if m == mode and small_sweep.cells[m, a, b].recall >= small_sweep.cells[mode, 1, 1].recall
        )
        assert small_sweep.speedup(mode, mg, mc) == fastest
    data = json.loads(json.dumps(small_sweep.to_dict()))
    assert len(data["cells"]) == 2 * 3 * 2 and set(data["best"]) == {"intra", "across"}
    assert set(data["exact_bfs_recall"]) == {"intra", "across"}
    text = format_tables(small_sweep, "synthetic")
    assert "speedup over BFS" in text and "best intra-query" in text


def test_grid_grows_while_the_best_point_is_on_its_far_edge(synthetic):
    g = synthetic["graphs"]["hnsw"]
    qs = synthetic["queries"][:40]
    gt = faiss.knn(qs, synthetic["base"], 10)[1]
    base = SweepSetup(
        l=32, cand_size=32, bloom=None, mg=(1, 2), mc=(1,), memory=MemorySystem(latency_cycles=80), grow_to=6
    )
    grown = sweep(g, g.fmt.quantize(qs), gt, base)
    assert len(grown.setup.mg) > 2, "a 2-group grid cannot hold DST's optimum: mg must grow"
    for mode in ("intra", "across"):
        mg, mc = grown.best(mode)
        assert mg < max(grown.setup.mg) or mg == 6
        assert mc < max(grown.setup.mc) or mc == 6
    every = {(m, a, b) for m in ("intra", "across") for a in grown.setup.mg for b in grown.setup.mc}
    assert set(grown.cells) == every, "the grown grid is whole: every (mg, mc) of it was run"
    fixed = sweep(g, g.fmt.quantize(qs), gt, SweepSetup(**{**vars(base), "grow_to": 0}))
    assert fixed.setup.mg == (1, 2) and fixed.setup.mc == (1,) and len(fixed.cells) == 4


def test_recall_at_k_counts_padding_as_misses():
    found = np.array([[1, 2, -1], [4, 5, 6]])
    truth = np.array([[2, 1, 9], [7, 8, 9]])
    assert recall_at_k(found, truth, 3) == pytest.approx((2 / 3 + 0) / 2)


def test_sweep_requires_the_bfs_baseline():
    with pytest.raises(FannsError, match="BFS"):
        SweepSetup(mg=(2, 4))


def test_explore_command_writes_tables_and_json(tmp_path, capsys):
    out = tmp_path / "ex"
    rc = main(
        [
            "explore",
            "builtin:sift-10k",
            "--graph",
            "hnsw",
            "--max-degree",
            "16",
            "--mg",
            "1,3",
            "--mc",
            "1,2",
            "--grow-to",
            "0",
            "--graph-queries",
            "40",
            "--mem-latency",
            "60",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    data = json.loads((out / "graph_hnsw.json").read_text())
    assert data["nodes"] == 10_000 and data["max_degree"] == 16 and data["memory"]["latency_cycles"] == 60
    assert len(data["cells"]) == 8 and data["cells"][0]["recall"] > 0.5
    assert "speedup over BFS" in (out / "graph_hnsw.txt").read_text()
    assert "best across-query" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--graph", "ivf"], "unknown graph kind"),
        (["--graph", "hnsw", "--bloom", "3"], "--bloom"),
        (["--graph", "hnsw", "--mg", "2,3"], "BFS"),
        (["--graph", "hnsw", "--bloom", "3,3000"], "power-of-two"),
        ([], "nothing to explore"),
    ],
)
def test_explore_command_reports_bad_options(tmp_path, capsys, argv, message):
    assert main(["explore", "builtin:sift-10k", "--out", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err


# both graph kinds on both sets but NSG on deep-10k (its graph build, 6.6 s), which the slow tier runs
@pytest.mark.parametrize(
    "kind,name",
    slow_params(
        [(k, n) for k in ("hnsw", "nsg") for n in ("sift-10k", "deep-10k")],
        fast={("hnsw", "sift-10k"), ("hnsw", "deep-10k"), ("nsg", "sift-10k")},
    ),
)
def test_dst_recall_is_not_below_bfs_on_builtin_sets(name, kind):
    """Falcon Fig. 7.9's best configurations, (mg, mc) = (4, 1) across-query and (6, 2) intra-query,
    keep at least BFS's R@10 on the built-in sets (graphs of max degree 32, l = 64, Bloom filter)."""
    from fanns.datasets import load_dataset
    from fanns.explore.graph import load_or_build, prepare_vectors
    from fanns.index.graph_traversal import TraversalConfig
    from fanns.model.graph.fast import search_batch

    ds = load_dataset(f"builtin:{name}")
    _, queries = prepare_vectors(ds)
    gt = ds.groundtruth(10)
    g = load_or_build(ds, kind, 32, 64, 8)
    q_fx = g.fmt.quantize(queries)
    bloom = Bloom(h=3, b=3 * 2**16, w=64)
    rec = {}
    for mg, mc, units in [(1, 1, 4), (1, 1, 1), (6, 2, 4), (4, 1, 1)]:
        res = search_batch(g, q_fx, TraversalConfig(l=64, k=10, mg=mg, mc=mc, bloom=bloom, bfc_units=units), threads=2)
        rec[mg, mc, units] = recall_at_k(res.ids, gt, 10)
    assert rec[1, 1, 4] > 0.9
    assert rec[6, 2, 4] >= rec[1, 1, 4] and rec[4, 1, 1] >= rec[1, 1, 1], rec
