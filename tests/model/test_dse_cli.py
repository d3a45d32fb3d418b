"""`fanns dse` on a real exploration of a built-in set: outputs, determinism, errors."""

import json
from pathlib import Path

import numpy as np
import pytest

from fanns.cli import main
from fanns.datasets import load_dataset
from fanns.design.ivfpq import IvfPqDesign
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.index.goals import parse_goal
from fanns.model.ivfpq.workload import workloads_from_explore


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    ds = load_dataset("builtin:sift-10k")
    out = tmp_path_factory.mktemp("explore")
    cfg = ExploreConfig(
        goals=[parse_goal("R@10=0.5"), parse_goal("R@10=0.999")],
        nlists=[32],
        opq=(False, True),
        max_queries=100,
        qps_min_seconds=0.01,
    )
    IvfPqExplorer(ds, cfg, out).run()
    return out


def test_workloads_are_the_explored_probes(explored):
    workloads, unreachable = workloads_from_explore(explored, parse_goal("R@10=0.5"))
    data = json.loads((explored / "explore.json").read_text())
    assert len(workloads) + len(unreachable) == len(data["indexes"]) == 2
    for w, rec in zip(workloads, data["indexes"]):
        assert w.index == rec["index"] and w.nprobe == rec["goals"]["R@10=0.5"]["nprobe"]
        sizes = np.load(explored / rec["list_sizes"])
        probes = np.load(explored / rec["probes"])
        assert (w.probed == sizes[probes[:, : w.nprobe]]).all()
        assert w.codes_per_query().mean() == pytest.approx(
            rec["goals"]["R@10=0.5"]["codes_per_query"]["mean"], abs=1e-3
        )


def test_dse_writes_the_design_and_is_deterministic(explored, tmp_path, capsys):
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run
        assert (
            main(
                [
                    "dse",
                    str(explored),
                    "--board",
                    "u55c",
                    "--recall",
                    "R@10=0.5",
                    "--clock",
                    "200",
                    "--top",
                    "3",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        outs.append(out)
    printed = capsys.readouterr().out
    assert "pred. QPS" in printed and "combinations evaluated" in printed
    assert "at 200 MHz (--clock)" in printed and "clock: 200 MHz (--clock: given on the command line)" in printed
    assert "RTL timing estimate" in printed and "limited by" in printed
    for name in ("dse.json", "design.yaml"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()
    design = IvfPqDesign.load(outs[0] / "design.yaml")
    result = json.loads((outs[0] / "dse.json").read_text())
    best = result["best"]
    assert design.index.factory == best["index"] and design.nprobe == best["nprobe"] and design.k == 10
    assert (outs[0] / design.index.path).resolve().is_file()  # the trained index, relative to the design
    assert not Path(design.index.path).is_absolute()
    assert design.clock_mhz == 200.0 and design.prediction["qps"] == best["qps"]
    assert design.prediction["clock"] == {"mhz": 200.0, "origin": "user", "source": "given on the command line"}
    assert result["clock"]["origin"] == "user" and result["rtl_timing"]["family"] == "xcup"
    rtl = result["rtl_timing"]
    assert rtl["fmax_mhz"] == min(e["fmax_mhz"] for e in rtl["elements"]) == rtl["limit"]["fmax_mhz"]
    assert {e["kind"] for e in rtl["elements"]} >= {"pe", "reset"}
    # cycles are recorded to 3 decimals: a relative error up to 0.0005 / cycles (2e-6 at 257 cycles)
    assert best["qps"] == pytest.approx(200e6 / best["cycles_per_query"], rel=1e-6 + 5e-4 / best["cycles_per_query"])
    assert best["bottleneck"] in best["stages"] and len(result["top"]) == 3 and result["pareto"]
    # one space per index, and per padding or LUT words a cycle worth trying (labelled after it)
    indexes, spaces = result["search"]["indexes"], result["search"]["options"]
    assert result["search"]["evaluated"] > 0 and set(indexes) <= set(spaces)
    assert all(any(s.startswith(i) for i in indexes) for s in spaces)


def test_dse_errors(explored, tmp_path, capsys):
    assert main(["dse", str(explored), "--board", "u55c", "--recall", "R@10=0.999", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "not reachable by any explored index" in err and "best recall seen" in err
    assert "do not change recall" in err and "another board" not in err  # recall is the index's
    assert (tmp_path / "x" / "dse.json").is_file() and not (tmp_path / "x" / "design.yaml").exists()
    assert (
        main(["dse", str(explored), "--board", "nosuchboard", "--recall", "R@10=0.5", "--out", str(tmp_path / "y")])
        == 2
    )
    assert "unknown board" in capsys.readouterr().err
    assert main(["dse", str(tmp_path), "--board", "u55c", "--recall", "R@10=0.5", "--out", str(tmp_path / "z")]) == 2
    assert "explore.json not found" in capsys.readouterr().err
    assert (
        main(
            [
                "dse",
                str(explored),
                "--board",
                "kv260",
                "--recall",
                "R@10=0.5",
                "--out",
                str(tmp_path / "w"),
                "--util",
                "0.05",
            ]
        )
        == 2
    )
    assert "no design fits kv260" in capsys.readouterr().err


def tiny_board(folder: Path, channel_bytes: int = 12288) -> Path:
    """A U55C board file with 8 channels of `channel_bytes` of HBM (96 kB): smaller than any explored
    index of builtin:sift-10k (120 kB at m 8); each channel has 8 kB for a cache region after the page
    the driver keeps."""
    text = (Path(__file__).resolve().parents[2] / "boards" / "u55c.yaml").read_text()
    board = folder / "tiny.yaml"
    board.write_text(
        text.replace("count: 32", "count: 8")
        .replace("capacity_gb: 0.5", f"capacity_gb: {channel_bytes / 2**30!r}")
        .replace("name: u55c", "name: t")
    )
    return board


def test_an_index_larger_than_a_board_without_a_host_link_is_refused_by_name(explored, tmp_path, capsys):
    """No `host` link in the board file: no host-memory design; the error names the board file and
    what it lacks."""
    board = tiny_board(tmp_path)
    board.write_text("\n".join(line for line in board.read_text().splitlines() if not line.startswith("host:")))
    args = ["dse", str(explored), "--board", str(board), "--recall", "R@10=0.5", "--out", str(tmp_path / "x")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"its board file {board} has no `host` link" in err and "IVF32,PQ16 nprobe=" in err
    assert not (tmp_path / "x" / "design.yaml").exists()


def test_llm_ms_is_refused_where_it_enters(tmp_path, capsys):
    for bad in ("-1", "soon"):
        args = ["dse", str(tmp_path), "--board", "u55c", "--recall", "R@10=0.5", "--llm-ms", bad]
        assert main([*args, "--out", str(tmp_path / "x")]) == 2
        assert "--llm-ms" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_an_index_larger_than_the_board_gets_a_host_memory_design(explored, tmp_path, capsys):
    """A board file whose HBM (8 x 12 kB) is smaller than the explored index: `fanns dse` keeps the
    lists in host memory and records the cache it sizes for --llm-ms; with channels of one page (4 kB,
    the page the driver keeps) no cache fits and the index is refused by name."""
    board = tiny_board(tmp_path)
    out = tmp_path / "dse"
    args = ["dse", str(explored), "--board", str(board), "--recall", "R@10=0.5", "--llm-ms", "0.05", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "lists in host memory" in printed
    result = json.loads((out / "dse.json").read_text())
    host = result["host_tier"]
    assert host["llm_ms"] == 0.05 and 0 < host["cache_bytes"] and 0 <= host["cell_hit"] <= 1
    assert host["index_gb"] > host["board_memory_gb"]
    assert ("lists pinned" if host["pinned"] else "nothing pinned") in printed  # the console says the split
    design = IvfPqDesign.load(out / "design.yaml")
    assert design.prediction["host_tier"]["cache_bytes"] == host["cache_bytes"]
    assert list(design.stages.pq_dist.host_tier.pinned) == host["pinned"]
    (tmp_path / "page").mkdir()
    page = tiny_board(tmp_path / "page", channel_bytes=4096)
    assert main([*args[:2], "--board", str(page), "--recall", "R@10=0.5", "--out", str(tmp_path / "pg")]) == 2
    assert "no room for a cache region" in capsys.readouterr().err and not (tmp_path / "pg" / "design.yaml").exists()
    assert main(["dse", str(explored), "--board", "u55c", "--recall", "R@10=0.5", "--out", str(tmp_path / "fits")]) == 0
    assert json.loads((tmp_path / "fits" / "dse.json").read_text())["host_tier"] is None


def small_board(folder: Path, host_gbps: float = 0.5) -> Path:
    """A U55C board file with 3 x 64 kB of HBM (192 kB): smaller than builtin:sift-10k's lists at m 16
    (200 kB), larger than at m 8 (120 kB), and large enough for the I/O channel's codebook and
    centroids; a host link of `host_gbps` (0.5 GB/s: slow enough that the PEs wait for host memory,
    so a cached list saves time and pinning pays)."""
    text = (Path(__file__).resolve().parents[2] / "boards" / "u55c.yaml").read_text()
    board = folder / "small.yaml"
    board.write_text(
        text.replace("count: 32", "count: 3")
        .replace("capacity_gb: 0.5", f"capacity_gb: {65536 / 2**30!r}")
        .replace("bandwidth_gbps: 12.0, latency_us", f"bandwidth_gbps: {host_gbps!r}, latency_us")
        .replace("name: u55c", "name: s")
    )
    return board


@pytest.mark.slow
def test_generate_builds_a_host_memory_design(tmp_path, capsys):
    """An index larger than the board: `fanns generate` writes the DSE's cache and its pinned lists
    (no LLM time: only pinned lists can hit) into design.yaml (stages.pq_dist.host_tier), the
    packer takes them, both faces map the lists to host memory, and the C and RTL simulations (an
    empty table) return the reference model's keys."""
    out = tmp_path / "p"
    argv = ["generate", "builtin:sift-10k", "--recall", "R@10=0.5", "--board", str(small_board(tmp_path))]
    argv += ["--nlist", "16", "--queries", "60", "--explore-dir", str(tmp_path / "ex"), "--out", str(out)]
    argv += ["--llm-ms", "0"]  # no prefetch is hidden: the DSE pins the hottest lists
    assert main([*argv, "--sim"]) == 0
    printed = "".join(capsys.readouterr())
    assert "host-memory design" in printed and printed.count("0 queries differ from the reference model") == 2
    design = IvfPqDesign.load(out / "design.yaml")
    cache = design.prediction["host_tier"]["cache_bytes"]
    assert design.stages.pq_dist.host_tier.cache_bytes == cache > 0
    pinned = design.stages.pq_dist.host_tier.pinned  # the DSE's split: its pinned lists packed (they fit)
    assert pinned and design.prediction["host_tier"]["pinned_bytes"] > 0 and "lists pinned" in printed
    assert "pq_codes_0:HOST[0]" in (out / "hls" / "connectivity.cfg").read_text()
    ports = json.loads((out / "rtl" / "rtl" / "ports.json").read_text())["ports"]
    assert ports["m_axi_pq0"]["memory"] == "host" and ports["m_axi_cache0"]["memory"] == "hbm"


@pytest.mark.slow
def test_generate_builds_the_host_design_a_mix_chooses(tmp_path, capsys):
    """An index that fits the board (m 8: R@10=0.4 at nprobe 2) beside a larger one (m 16: at nprobe
    1; no OPQ, whose training is not repeatable to the last query), on the 12 GB/s link: the DSE
    ranks both kinds (the host-memory candidate by its QPS with prefetch) and chooses the host-memory
    design, which `fanns generate` builds in both faces, bit-exact in C and RTL simulation. (Apart
    from the test above: on links where the host design wins, 6 GB/s and up, pinning does not pay;
    on 5 GB/s and below the m 8 index on the card wins.)"""
    out = tmp_path / "p"
    argv = ["generate", "builtin:sift-10k", "--recall", "R@10=0.4", "--no-opq", "--board"]
    argv += [str(small_board(tmp_path, 12.0)), "--nlist", "16", "--m", "8,16", "--queries", "60"]
    assert main([*argv, "--explore-dir", str(tmp_path / "ex"), "--out", str(out), "--sim"]) == 0
    printed = "".join(capsys.readouterr())
    assert "host-memory design" in printed and printed.count("0 queries differ from the reference model") == 2
    flat = " ".join(printed.split())  # the console wraps long lines
    assert "chosen: IVF16,PQ16 nprobe=1 in host memory at " in flat and "QPS with prefetch" in flat
    assert "which beats IVF16,PQ8 nprobe=2 in HBM at " in flat
    design = IvfPqDesign.load(out / "design.yaml")
    assert design.index.m == 16 and design.stages.pq_dist.host_tier.cache_bytes > 0
    assert "pq_codes_0:HOST[0]" in (out / "hls" / "connectivity.cfg").read_text()
    ports = json.loads((out / "rtl" / "rtl" / "ports.json").read_text())["ports"]
    assert ports["m_axi_pq0"]["memory"] == "host" and ports["m_axi_cache0"]["memory"] == "hbm"


@pytest.mark.slow
@pytest.mark.long  # the latency model's run over a whole DSE
def test_dse_with_a_tail_latency_slo(explored, tmp_path, capsys):
    """`--slo-p99` on a real exploration: the chosen design meets it at the stated load, dse.json
    carries the SLO and every kept design's percentiles (an impossible SLO: tests/model/test_latency.py)."""
    base = ["dse", str(explored), "--board", "u55c", "--recall", "R@10=0.5", "--clock", "200", "--top", "2"]
    assert main([*base, "--out", str(tmp_path / "free")]) == 0
    free = json.loads((tmp_path / "free" / "dse.json").read_text())["best"]
    load = round(0.5 * free["qps"])
    # the limit: just above what the unconstrained best design reaches at that load
    assert main([*base, "--load", str(load), "--out", str(tmp_path / "loaded")]) == 0
    limit = 1.05 * json.loads((tmp_path / "loaded" / "dse.json").read_text())["best"]["latency"]["load"]["p99_us"]
    assert main([*base, "--slo-p99", f"{limit}us", "--load", str(load), "--tiers", "--out", str(tmp_path / "slo")]) == 0
    printed = capsys.readouterr().out
    assert "SLO P99" in printed and "P99" in printed and "tiers for the best design" in printed
    data = json.loads((tmp_path / "slo" / "dse.json").read_text())
    assert data["slo"]["percentile"] == 99 and data["slo"]["load_qps"] == load
    for rec in [data["best"], *data["top"]]:
        assert rec["latency"]["load"]["load_qps"] == load and rec["latency"]["load"]["p99_us"] <= limit
    assert data["tiers"]["designs"]
