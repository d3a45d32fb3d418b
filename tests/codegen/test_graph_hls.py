"""The generated graph HLS project (`fanns generate-graph-hls`): its kernel, compiled once by g++ and
run in-process, returns the DST reference's result rows bit for bit on real queries of a
2,000-node SIFT HNSW at several run-time (l, k, mg, mc) — BFS and DST — with a Bloom filter small
enough to report false positives (so each unit's filter must see the reference's order of ids);
corrupt images and reference files are detected; the project is deterministic."""

import numpy as np
import pytest

from fanns.boards import load_board
from fanns.cli import main
from fanns.codegen.graph.hls import generate_graph_hls, is_graph_hls_project
from fanns.datasets import load_dataset
from fanns.design.graph import Runtime
from fanns.errors import FannsError
from fanns.flow.graph_hls_sim import graph_csim_report
from fanns.images.graph import GraphImages, pack
from fanns.images.ivfpq import Image
from fanns.index.graph import build_graph, graph_format_for
from fanns.index.graph_traversal import dst
from fanns.model.graph.pinned import pinned_graph_design
from fanns.reference.graph import STATS, reference, traversal_config
from fanns.sim.graph.csim import GraphHlsCsim
from fanns.tools.csim import compile_program

NODES, QUERIES = 2000, 6
RUNTIMES = [(64, 10, 1, 1), (64, 10, 4, 2), (48, 10, 8, 4), (32, 5, 2, 3)]


@pytest.fixture(scope="module")
def bench(build_root, tmp_path_factory):
    ds = load_dataset("builtin:sift-10k")
    base = np.asarray(ds.base[:NODES], dtype=np.float32)
    graph = build_graph(base, "hnsw", max_degree=32, fmt=graph_format_for(base))
    design = pinned_graph_design(graph, units=2, channels=2, l_max=64, k_max=10, bloom=(2, 2 * 1024), limits=(8, 4))
    queries = graph.fmt.quantize(np.asarray(ds.queries[:QUERIES], dtype=np.float32))
    project = tmp_path_factory.mktemp("graph-hls") / "p"
    generate_graph_hls(design, graph, queries, project)
    sim = GraphHlsCsim(project, build_root / "graph-csim")
    yield {"design": design, "graph": graph, "queries": queries, "project": project, "sim": sim, "build": build_root}
    sim.close()


@pytest.mark.parametrize("l,k,mg,mc", RUNTIMES, ids=["bfs", "dst-4x2", "dst-8x4", "dst-2x3-l32"])
def test_results_equal_reference(bench, l, k, mg, mc):
    design, graph, q = bench["design"], bench["graph"], bench["queries"]
    rt = Runtime(l=l, k=k, mg=mg, mc=mc)
    keys, stats = bench["sim"].search(q, rt)
    ref = reference(design, graph, q, rt)
    assert np.array_equal(keys, ref.keys), "result keys differ from the DST reference"
    for name in STATS:
        assert np.array_equal(stats[name], ref.stats[name]), name
    assert np.all(keys[:, k:] == np.uint64(2**64 - 1)) and np.all(keys[:, :k] != np.uint64(2**64 - 1))
    assert np.all(stats["cycles"] == 0)
    if mg > 1:
        assert np.any(stats["groups"] < stats["hops"])  # groups of several candidates were launched


def test_the_bloom_filters_report_false_positives(bench):
    """Otherwise the per-unit order of ids would not be exercised by the comparison above."""
    cfg = traversal_config(bench["design"], Runtime(64, 10, 4, 2))
    assert sum(dst(bench["graph"], q, cfg).bloom_fp for q in bench["queries"]) > 0


def test_corrupted_images_are_detected(bench, tmp_path):
    design, graph, q = bench["design"], bench["graph"], bench["queries"]
    images = pack(design, graph)
    top = int(reference(design, graph, q[:1]).keys[0, 0] & np.uint64(0xFFFFFFFF))
    name = f"vectors_{top % design.channels}"
    vec = bytearray(images.get(name).data)
    vec[(top // design.channels) * design.vector_row_bytes] ^= 0x40  # the nearest node's first element
    bad = GraphImages(
        tuple(
            Image(i.name, i.use, i.memory, i.channel, bytes(vec), i.layout) if i.name == name else i
            for i in images.images
        ),
        images.io,
        images.info,
    )
    with GraphHlsCsim(bench["project"], bench["build"] / "graph-csim", bad) as sim:
        keys, _ = sim.search(q[:1])
    assert not np.array_equal(keys, reference(design, graph, q[:1]).keys)
    short = GraphImages(
        tuple(
            Image(i.name, i.use, i.memory, i.channel, i.data[:-64], i.layout) if i.name == "vectors_1" else i
            for i in images.images
        ),
        images.io,
        images.info,
    )
    with pytest.raises(FannsError, match="vectors_1.bin holds"):
        GraphHlsCsim(bench["project"], bench["build"] / "graph-csim", short)
    bad.write(tmp_path / "images")
    raw = bytearray((tmp_path / "images" / "adjacency_0.bin").read_bytes())
    raw[100] ^= 1
    (tmp_path / "images" / "adjacency_0.bin").write_bytes(bytes(raw))
    with pytest.raises(FannsError, match="sha256"):
        GraphImages.read(tmp_path / "images")


def test_make_csim_host_flags_a_flipped_reference_key(bench, tmp_path):
    import shutil
    import subprocess

    project = tmp_path / "p"
    shutil.copytree(bench["project"], project)
    src = project / "src"
    host = compile_program(
        [src / "host_csim.cpp", src / "kernel.cpp"], bench["build"] / "graph-host", include_dirs=[src]
    )
    ok = subprocess.run([str(host), str(project)], capture_output=True, text=True)
    assert ok.returncode == 0 and "differing from the DST reference: 0" in ok.stdout
    ref = project / "data" / "reference_keys.bin"
    keys = np.fromfile(ref, dtype="<u8")
    keys[3 * 10 + 2] ^= np.uint64(1 << 40)  # query 3, key 2: its distance
    keys.tofile(ref)
    bad = subprocess.run([str(host), str(project)], capture_output=True, text=True)
    assert bad.returncode == 1 and "query 3 differs from the reference: key 2" in bad.stdout
    with pytest.raises(FannsError, match="differ from the reference recomputed"):
        graph_csim_report(project, bench["build"], None, 0, None, _Quiet())


def test_project_is_deterministic(bench, tmp_path):
    design, graph, q = bench["design"], bench["graph"], bench["queries"]
    a = generate_graph_hls(design, graph, q, tmp_path / "a")
    b = generate_graph_hls(design, graph, q, tmp_path / "b")
    assert a.files == b.files and is_graph_hls_project(tmp_path / "a")
    for rel in a.files:
        data = (tmp_path / "a" / rel).read_bytes()
        assert data == (tmp_path / "b" / rel).read_bytes(), rel
        assert str(tmp_path).encode() not in data, rel
    assert (tmp_path / "a" / "images" / "adjacency_1.bin").read_bytes() == pack(design, graph).get("adjacency_1").data
    cfg = (tmp_path / "a" / "connectivity.cfg").read_text()
    assert "sp=fanns_falcon_qpp_1.adj_1:DDR[1]" in cfg and "sp=fanns_falcon_qpp_1.vec_0:DDR[0]" in cfg


def test_bad_runtime_is_refused(bench):
    with pytest.raises(FannsError, match="l=65"):
        bench["sim"].search(bench["queries"][:1], Runtime(l=65, k=10, mg=1, mc=1))
    with pytest.raises(FannsError, match="mg=9"):
        bench["sim"].search(bench["queries"][:1], Runtime(l=64, k=10, mg=9, mc=1))


def test_fanns_sim_csim_on_the_project(bench, capsys):
    rc = main(["sim", str(bench["project"]), "--runtime", "40,10,8,4", "--build-dir", str(bench["build"])])
    out = capsys.readouterr().out
    assert rc == 0 and "0 differ from the DST reference" in out
    assert main(["sim", str(bench["project"]), "--backend", "rtl"]) == 2
    assert "--backend csim" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--nodes", "999999"], "base vectors"),
        (["--runtime", "64,10,1"], "--runtime takes 4"),
        (["--board", "u250", "--limits", "8"], "--limits takes 2"),
    ],
)
def test_cli_input_errors(tmp_path, capsys, extra, message):
    rc = main(["generate-graph-hls", "builtin:sift-10k", "--nodes", "300", "--out", str(tmp_path / "p"), *extra])
    assert rc == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


class _Quiet:
    def print(self, *args, **kwargs) -> None:
        pass


def test_across_design_links_p_compute_units(bench, tmp_path):
    """Across-query mode in HLS: `pipelines` compute units of the one-QPP kernel, every CU's
    m_axi ports on the channels design.yaml assigns, the host splitting a batch between them."""
    from fanns.codegen.graph.hls import render

    graph = bench["graph"]
    design = pinned_graph_design(
        graph, mode="across", pipelines=3, units=1, channels=2, l_max=64, k_max=10, bloom=(2, 2 * 1024), limits=(8, 4)
    )
    files, _ = render(design, graph, bench["queries"][:2])
    cfg = files["connectivity.cfg"].decode()
    assert "nk=fanns_falcon_qpp:3:fanns_falcon_qpp_1.fanns_falcon_qpp_2.fanns_falcon_qpp_3" in cfg
    for cu in (1, 2, 3):
        assert f"sp=fanns_falcon_qpp_{cu}.adj_1:DDR[1]" in cfg and f"sp=fanns_falcon_qpp_{cu}.queries:DDR[0]" in cfg
        assert f"freqHz={round(load_board('u250').clock_mhz * 1e6)}:fanns_falcon_qpp_{cu}" in cfg  # sourced clock
    assert "constexpr uint32_t CUS = 3;" in files["src/host_common.h"].decode()
    single = render(bench["design"], graph, bench["queries"][:2])[0]["connectivity.cfg"].decode()
    assert "nk=fanns_falcon_qpp:1:fanns_falcon_qpp_1\n" in single
