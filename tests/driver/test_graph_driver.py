"""The host driver on a graph project: `fanns.driver.open` on a folder holding the HLS and RTL faces
of one design (hls/, rtl/) picks the face by backend (model and c-sim: hls, rtl-sim: rtl) or by
`face=`, and every backend returns what the DST reference returns for the same float queries —
the RTL simulation through the kernel's ap_ctrl_hs register map, as the board's host programs it."""

import numpy as np
import pytest

import fanns.driver
from fanns.codegen.graph.hls import generate_graph_hls
from fanns.codegen.graph.rtl import generate_graph_rtl
from fanns.design.graph import Runtime
from fanns.errors import FannsError
from fanns.images.graph import split_keys
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.pinned import pinned_graph_design
from fanns.reference.graph import reference


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    base = np.random.default_rng(7).standard_normal((300, 16)).astype(np.float32)
    graph = build_graph(base, "hnsw", max_degree=16, fmt=graph_format_for(base))
    design = pinned_graph_design(graph, units=1, channels=1, l_max=16, k_max=5, bloom=(2, 2048), limits=(2, 2))
    queries = np.random.default_rng(8).standard_normal((6, 16)).astype(np.float32)
    root = tmp_path_factory.mktemp("graph-driver") / "project"
    q_fx = graph.fmt.quantize(base[:3])
    generate_graph_hls(design, graph, q_fx, root / "hls")
    generate_graph_rtl(design, graph, q_fx, root / "rtl")
    return {"path": root, "design": design, "graph": graph, "queries": queries}


def expected(root, runtime: Runtime | None = None):
    design, graph = root["design"], root["graph"]
    rt = runtime or design.runtime
    keys = reference(design, graph, graph.fmt.quantize(root["queries"]), rt).keys
    return split_keys(keys, rt.k)


def check(acc, root, runtime: Runtime | None = None):
    ids, distances = acc.search(root["queries"])
    want_ids, want_dists = expected(root, runtime)
    assert np.array_equal(ids, want_ids)
    scale = float(root["design"].fmt.scale)
    assert np.allclose(distances[ids >= 0], want_dists[want_ids >= 0] / scale**2)


def test_model_on_the_root_picks_the_hls_face_and_equals_the_reference(root):
    with fanns.driver.open(root["path"], backend="model", batch=4) as acc:
        assert acc.face == "hls" and acc.path == root["path"] / "hls"
        check(acc, root)
        acc.set_params(l=12, k=4, mg=2, mc=2)
        check(acc, root, Runtime(l=12, k=4, mg=2, mc=2))
        assert acc.stats()["runs"] == 4  # 6 queries in batches of 4, twice
    with fanns.driver.open(root["path"], backend="model", face="rtl") as acc:
        assert acc.face == "rtl"
        check(acc, root)


def test_c_sim_runs_the_hls_kernel_of_the_root(root, build_root):
    with fanns.driver.open(root["path"], backend="c-sim", build_dir=build_root / "graph-driver-csim") as acc:
        assert acc.face == "hls"
        check(acc, root)


@pytest.mark.slow
@pytest.mark.long  # one more graph pipeline of a kind CI simulates
def test_rtl_sim_runs_the_rtl_kernel_of_the_root(root, build_root):
    with fanns.driver.open(root["path"], backend="rtl-sim", build_dir=build_root / "graph-driver-rtl") as acc:
        assert acc.face == "rtl"
        check(acc, root)
        assert acc.stats()["cycles"] > 0


def test_wrong_faces_backends_and_parameters_are_refused(root):
    with pytest.raises(FannsError, match="runs the HLS face"):
        fanns.driver.open(root["path"] / "rtl", backend="c-sim")
    with pytest.raises(FannsError, match="has no hls face|not hls"):
        fanns.driver.open(root["path"] / "rtl", backend="model", face="hls")
    with pytest.raises(FannsError, match="no face has a built bitstream"):
        fanns.driver.open(root["path"], backend="pynq")
    with pytest.raises(FannsError, match="are the pynq backend's"):
        fanns.driver.open(root["path"], backend="model", bitstream="x.xclbin")
    with fanns.driver.open(root["path"], backend="model") as acc:
        with pytest.raises(FannsError, match="outside what the hardware supports"):
            acc.set_params(l=17)
        with pytest.raises(FannsError, match="queries must be"):
            acc.search(root["queries"][:, :3])


def test_fanns_run_on_the_root(root, tmp_path, capsys):
    from fanns.cli import main

    queries = tmp_path / "q.npy"
    np.save(queries, root["queries"])
    gt = tmp_path / "gt.npy"
    ids, _ = expected(root)
    np.save(gt, np.where(ids < 0, 0, ids))
    assert main(["run", str(root["path"]), "--queries", str(queries), "--groundtruth", str(gt)]) == 0
    out = capsys.readouterr().out
    assert "backend model (graph hls project)" in out and f"R@{root['design'].runtime.k} = 1.000000" in out
    assert main(["run", str(root["path"]), "--queries", str(queries), "--nprobe", "3"]) == 2
    assert "a graph project has no nprobe" in capsys.readouterr().err
