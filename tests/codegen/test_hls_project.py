"""The generated HLS project as files: byte-identical for the same inputs, kernel arguments and
connectivity.cfg in agreement, warning-free g++ builds of the kernel and hosts, C simulation of
corner cases (empty lists, codes wider than a memory beat, 512-bit ports), clear errors and no
half-written output."""

import re
import subprocess

import numpy as np
import pytest
import yaml

from fanns.boards import load_board
from fanns.codegen.ivfpq.hls import TestQueries, generate_hls, render_project
from fanns.codegen.project_files import PROJECT_FILE
from fanns.errors import FannsError
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.paths import shared_dir
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim
from fanns.tools.csim import compile_program

URAM_MATRIX_AND_CODEBOOKS = {"opq_storage": "uram", "lut_codebook": "uram"}
# name: (d, m, opq, board, nprobe, k, ivf, lut, pq, selection)
SMALL = {
    "onchip-opq": (32, 8, True, "u55c", 4, 7, (3, 8, "bram"), (2, 8, "bram"), (5, 2), {}),
    "stream-memory": (32, 8, False, "u55c", 5, 9, (5, 8, "stream"), (3, 16, "memory"), (7, 3), {}),
    "wide-codes-m64": (128, 64, False, "u55c", 3, 5, (2, 32, "bram"), (3, 16, "bram"), (3, 1), {}),
    "ddr512-m4": (48, 4, True, "u250", 6, 12, (12, 16, "uram"), (5, 8, "memory"), (4, 2), URAM_MATRIX_AND_CODEBOOKS),
    # HSMPQG selects the cells (s = 3 < z = 12 streams); AHPQ with short level-1 queues selects K
    "hsmpqg-ahpq": (
        32,
        8,
        False,
        "u55c",
        3,
        16,
        (12, 8, "bram"),
        (3, 8, "bram"),
        (9, 3),
        {"sel_cells": "hsmpqg", "sel_k": "ahpq", "sel_params": {"ahpq": {"target": 0.3}}},
    ),
}


def small_case(name, seed=0):
    d, m, opq, board, nprobe, k, ivf, lut, pq, selection = SMALL[name]
    data = random_index(d=d, m=m, opq=opq, seed=seed)
    fmt = random_format(d, m)
    design = pinned_design(data, fmt, board=board, nprobe=nprobe, k=k, ivf=ivf, lut=lut, pq=pq, **selection)
    rng = np.random.default_rng(seed)
    queries = rng.standard_normal((40, d)).astype(np.float32)
    gt = np.argsort(rng.random((40, data.ntotal)), axis=1)[:, :k]
    return design, data, TestQueries(queries, gt)


def tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_csim_of_corner_cases_equals_reference(name, tmp_path, build_root):
    """Sequential C simulation, and the threaded one (every process concurrent, every FIFO of its
    declared depth: no deadlock, no data left behind), both bit-exact."""
    design, data, test = small_case(name)
    generate_hls(design, data, test, tmp_path / "p")
    ref = IvfPqReference(data, design.format)
    expected = DesignReference(design, ref).search_keys(test.queries)
    if design.stages.sel_k.s1 < design.k:  # AHPQ cut short: the test must see it drop results
        assert (expected != ref.search_keys(test.queries, design.nprobe, design.k)).any()
    for threads in (False, True):
        with HlsCsim(tmp_path / "p", build_root / "hls_csim", threads=threads) as sim:
            keys = sim.search_keys(test.queries)
        assert np.array_equal(keys, expected), f"threads={threads}"


def test_same_inputs_give_byte_identical_projects(tmp_path):
    design, data, test = small_case("stream-memory", seed=5)
    generate_hls(design, data, test, tmp_path / "a")
    generate_hls(design, data, test, tmp_path / "nested" / "b")
    a, b = tree(tmp_path / "a"), tree(tmp_path / "nested" / "b")
    assert a == b
    assert {
        "src/kernel.cpp",
        "src/kernel.h",
        "src/host.cpp",
        "src/host_csim.cpp",
        "src/csim_lib.cpp",
        "src/fanns_hls.h",
        "connectivity.cfg",
        "Makefile",
        "README.md",
        "images/manifest.json",
        PROJECT_FILE,
        "data/queries.bin",
        "data/groundtruth.bin",
        "data/reference_keys.bin",
        "design.yaml",
    } <= set(a)
    for name, content in a.items():
        if not name.endswith(".bin"):
            assert str(tmp_path).encode() not in content, f"{name} holds an absolute path"
    other, _ = render_project(design, data, TestQueries(test.queries[:-1], test.groundtruth[:-1]))
    assert other["src/kernel.cpp"] == a["src/kernel.cpp"] and other["data/queries.bin"] != a["data/queries.bin"]


def _kernel_ports(files):
    header = files["src/kernel.h"].decode()
    proto = header[header.index('extern "C"') :]
    args = re.findall(r"^\s+(const )?(IoBeat|PqBeat)\* (\w+),", proto, re.M)
    pragmas = dict(re.findall(r"HLS INTERFACE mode=m_axi port=(\w+) bundle=(\w+)", files["src/kernel.cpp"].decode()))
    cfg = files["connectivity.cfg"].decode()
    sp = re.findall(r"^sp=fanns_ivfpq_1\.(\w+):(HBM|DDR)\[(\d+)\]$", cfg, re.M)
    return [a[2] for a in args], pragmas, sp, cfg


@pytest.mark.parametrize("name", sorted(SMALL))
def test_connectivity_and_kernel_arguments_agree(name):
    design, data, test = small_case(name)
    files, images = render_project(design, data, test)
    args, pragmas, sp, cfg = _kernel_ports(files)
    board = load_board(design.board)
    # every pointer argument is an m_axi port, mapped exactly once
    assert sorted(pragmas) == sorted(args)
    assert sorted(port for port, _, _ in sp) == sorted(args)
    assert len({port for port, _, _ in sp}) == len(sp)
    bank = {port: (kind, int(ch)) for port, kind, ch in sp}
    # one bundle per channel: ports share a bundle exactly when they share a channel
    by_bundle = {}
    for port, bundle in pragmas.items():
        by_bundle.setdefault(bundle, set()).add(bank[port])
    assert all(len(b) == 1 for b in by_bundle.values())
    assert len({next(iter(b)) for b in by_bundle.values()}) == len(by_bundle)
    # no channel beyond the board's range, and each port where design.yaml put its use
    count = {("HBM" if g.kind == "hbm" else "DDR"): g.count for g in board.memory}
    assert all(ch < count[kind] for kind, ch in bank.values())
    where = {(c.use, c.channel) for c in design.memory}
    assert ("io", bank["queries"][1]) in where and bank["queries"] == bank["results"] == bank["cells"] == bank["seeds"]
    for img in images.images:
        assert bank[img.name][1] == img.channel
        assert (img.use, img.channel) in where or (img.use == "rom" and bank[img.name] == bank["queries"])
    assert f"platform={board.platform}" in cfg and f"freqHz={int(design.clock_mhz * 1e6)}:fanns_ivfpq_1" in cfg
    # the XRT host passes exactly these buffers, in this order (the query buffer standing in for the
    # step-wise mode's cells and seeds), and nq, load (index load, then searches), mode 0
    calls = [c.split(", ") for c in re.findall(r"= krnl\((.*)\);", files["src/host.cpp"].decode())]
    assert [c[-2] for c in calls] == ["1u", "0u"] and all(c[-1] == "0u" for c in calls)
    assert args[-2:] == ["cells", "seeds"]
    for call in calls:
        assert len(call) == len(args) + 3 and call[:2] == ["query_bo", "result_bo"]
        assert call[2:-5] == [f"images[{i}]" for i in range(len(args) - 4)] and call[-5:-3] == ["query_bo"] * 2


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_onchip_array_is_bound_to_the_designs_memory(name):
    """Each global index array of the kernel gets one BIND_STORAGE with the memory the design and
    its resource model chose (URAM or BRAM centroids, OPQ matrix and codebooks), reshaped
    or aggregated to the word its PE reads per cycle."""
    design, data, test = small_case(name)
    kernel = render_project(design, data, test)[0]["src/kernel.cpp"].decode()
    onchip = kernel[kernel.index("// -- on-chip index memories") : kernel.index("void load_index(")]
    arrays = {name: kind for kind, name in re.findall(r"^(VecWord<T, \d+>|T|int16_t) (\w+)\[", onchip, re.M)}
    bound = dict(re.findall(r"HLS BIND_STORAGE variable=(\w+) type=ram_s2p impl=(\w+)\)", kernel))
    reshaped = dict(re.findall(r"HLS ARRAY_RESHAPE variable=(\w+) cyclic factor=(\d+) dim=2\)", kernel))
    aggregated = set(re.findall(r"HLS AGGREGATE variable=(\w+)\)", kernel))
    st = design.stages
    assert set(bound) == set(arrays) and arrays
    for array, kind in arrays.items():
        if array.startswith("ivf_store_"):
            want, words = st.ivf_dist.storage, True
        elif array == "lut_store":
            want, words = st.build_lut.centroids, True
        elif array == "opq_store":
            want, words = st.opq.storage, False
        else:
            assert array.startswith("codebook_store_"), array
            want, words = st.build_lut.codebook, False
        assert bound[array] == want, array
        assert (array in aggregated) == words == kind.startswith("VecWord"), array
        if not words:
            lanes = st.opq.lanes if array == "opq_store" else st.build_lut.lanes
            assert reshaped[array] == str(lanes), array
    assert ("ivf_store_0" in arrays) == (st.ivf_dist.storage != "stream")
    assert ("lut_store" in arrays) == (st.build_lut.centroids != "memory")


def test_hosts_compile_warning_free_and_report(tmp_path, build_root):
    """host_csim (g++ -Wall -Wextra -Werror) runs the test set and reports 0 mismatches (with AHPQ
    cutting results, so data/ must hold the stream model's keys); the XRT host passes g++'s checks
    against the XRT API subset it uses (declarations in tests/codegen/xrt_api, since XRT is not
    installed here)."""
    design, data, test = small_case("hsmpqg-ahpq", seed=2)
    folder = tmp_path / "p"
    generate_hls(design, data, test, folder)
    exe = compile_program(
        [folder / "src" / "host_csim.cpp", folder / "src" / "kernel.cpp"],
        build_root / "host_csim",
        include_dirs=[folder / "src"],
    )
    run = subprocess.run([str(exe), str(folder), "7"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "40 queries in batches of 7" in run.stdout and "reference model: 0" in run.stdout
    xrt = shared_dir("templates").parent / "tests" / "codegen" / "xrt_api"
    check = subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            f"-I{xrt}",
            f"-I{folder / 'src'}",
            str(folder / "src" / "host.cpp"),
        ],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr


def test_errors_are_clear_and_leave_nothing_behind(tmp_path):
    design, data, test = small_case("onchip-opq")
    bare = {k: v for k, v in load_board("zcu104").spec.items() if k != "block_design"}
    (tmp_path / "bare.yaml").write_text(yaml.safe_dump(bare))  # neither a Vitis platform nor a block design
    with pytest.raises(FannsError, match="no Vitis platform"):
        generate_hls(
            pinned_design(data, design.format, board=str(tmp_path / "bare.yaml"), nprobe=3, k=5, pq=(2, 1)),
            data,
            test,
            tmp_path / "x",
        )
    with pytest.raises(FannsError, match="cannot be connected"):
        generate_hls(
            pinned_design(data, design.format, board="zcu104", nprobe=3, k=5, pq=(2, 1)),
            data,
            test,
            tmp_path / "x",
            platform="xilinx_zcu104_base_202210_1",
        )
    with pytest.raises(FannsError, match="test queries"):
        generate_hls(design, data, TestQueries(test.queries[:, :5], test.groundtruth), tmp_path / "x")
    assert not (tmp_path / "x").exists() and list(tmp_path.iterdir()) == [tmp_path / "bare.yaml"]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")  # an empty folder would simply be used
    with pytest.raises(FannsError, match="already exists"):
        generate_hls(design, data, test, tmp_path / "mine")
    with pytest.raises(FannsError, match="not a generated project"):
        generate_hls(design, data, test, tmp_path / "mine", force=True)
    generate_hls(design, data, test, tmp_path / "p")
    generate_hls(design, data, test, tmp_path / "p", force=True)  # a project may be replaced
    with pytest.raises(FannsError, match="not a generated project"):
        HlsCsim(tmp_path / "mine")


def test_corrupted_image_is_caught_by_the_simulation(tmp_path, build_root):
    """The C simulation is a real check: one flipped code byte in a channel image changes results."""
    design, data, test = small_case("onchip-opq", seed=3)
    folder = tmp_path / "p"
    generate_hls(design, data, test, folder)
    expected = np.fromfile(folder / "data" / "reference_keys.bin", dtype="<u8").reshape(-1, design.k)
    img = folder / "images" / "pq_codes_0.bin"
    raw = bytearray(img.read_bytes())
    header = -(-data.nlist * 16 // 32) * 32
    for pos in range(header, len(raw), 7):
        raw[pos] ^= 0xFF
    img.write_bytes(bytes(raw))
    with HlsCsim(folder, build_root / "hls_csim") as sim:
        keys = sim.search_keys(test.queries)
    assert (keys != expected).any(1).sum() > 0


def test_index_is_a_run_time_input(tmp_path, build_root):
    """Two indexes of the same shape give the same kernel source; one compiled kernel serves
    both, loading each index's ROM images when its handle searches (alternating handles)."""
    design_a, data_a, test = small_case("onchip-opq", seed=0)
    data_b = random_index(d=32, m=8, opq=True, seed=9)
    design_b = pinned_design(
        data_b, design_a.format, board="u55c", nprobe=4, k=7, ivf=(3, 8, "bram"), lut=(2, 8, "bram"), pq=(5, 2)
    )
    generate_hls(design_a, data_a, test, tmp_path / "a")
    generate_hls(design_b, data_b, test, tmp_path / "b")
    a, b = tree(tmp_path / "a"), tree(tmp_path / "b")
    kernel = ["src/kernel.cpp", "src/kernel.h", "src/ivfpq_kernel.h"]
    assert all(a[f] == b[f] for f in kernel) and a["images/pq_codes_0.bin"] != b["images/pq_codes_0.bin"]
    ref_a = IvfPqReference(data_a, design_a.format).search_keys(test.queries, 4, 7)
    ref_b = IvfPqReference(data_b, design_b.format).search_keys(test.queries, 4, 7)
    assert (ref_a != ref_b).any()
    sim_a, sim_b = HlsCsim(tmp_path / "a", build_root / "hls_csim"), HlsCsim(tmp_path / "b", build_root / "hls_csim")
    try:
        assert sim_a._lib._name == sim_b._lib._name  # the same compiled kernel
        for sim, ref in ((sim_a, ref_a), (sim_b, ref_b), (sim_a, ref_a), (sim_a, ref_a), (sim_b, ref_b)):
            assert np.array_equal(sim.search_keys(test.queries), ref)
    finally:
        sim_a.close()
        sim_b.close()


def test_57_pqdist_pes_on_16_channels(tmp_path, build_root):
    """An irregular wide design (FANNS Fig. 6.4 has 57 PQDist PEs): 11 IVFDist, 4 BuildLUT and
    57 PQDist PEs on 16 HBM channels, most shares padding-heavy, bit-exact in C simulation."""
    data = random_index(nlist=12, n=2000, d=32, m=8, seed=5)
    fmt = random_format(32, 8)
    design = pinned_design(data, fmt, nprobe=4, k=10, ivf=(11, 8, "bram"), lut=(4, 8, "bram"), pq=(57, 16))
    queries = np.random.default_rng(1).standard_normal((40, 32)).astype(np.float32)
    project = generate_hls(design, data, TestQueries(queries, np.tile(np.arange(10), (40, 1))), tmp_path / "p")
    kernel = (project.path / "src" / "kernel.cpp").read_text()
    assert kernel.count("FANNS_PROCESS(pq_decode<") == 57 and kernel.count("FANNS_PROCESS(ivf_dist<") == 11
    assert kernel.count("FANNS_PROCESS(read_codes<") == 16 and kernel.count("FANNS_PROCESS(build_lut<") == 4
    with HlsCsim(project.path, build_root / "hls_csim") as sim:
        assert np.array_equal(sim.search_keys(queries), IvfPqReference(data, fmt).search_keys(queries, 4, 10))
