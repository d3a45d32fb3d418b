"""The design-space fuzz (`fanns.flow.design_fuzz`): draws of (board, shape, goal, clock, cap) with
fixed seeds through explore -> DSE -> both faces -> simulation. Every draw must end "ok" (every face
of the chosen design and its runner-up bit-exact, the RTL within the cycle tolerance) or "no design"
with the DSE's explanation; a crash, a mismatch or a cycle miss fails. Each draw generates and
simulates whole designs, so all run in the slow tier (the fast tier checks the draws themselves):
draws of a small box (d <= 128, K <= 16), draws of a larger one (d <= 512,
K <= 128: a K = 700 design takes Verilator over 20 minutes to build) and corner draws (the option
space's extremes, `fanns.model.ivfpq.corners`); `benchmarks/design_fuzz.py N` draws from the whole
space (d <= 2048, K <= 1000), corners included. Host-memory draws (`draw_host_case`: the board's
memory shrunk below the index): the fast tier checks that the draws are host-mode boards and that
the DSE emits a host-memory design for one; the slow tier runs one such draw end to end.

The graph draws (`fanns.flow.graph_fuzz`): the fast tier checks the sampler (every pinned draw is a
valid graph design, the draws cover both kinds, modes and boards) and that a recorded graph draw
reads back, and a graph DSE draw with no design ends with the DSE's reason; one graph draw generated
and simulated on both faces takes a Verilator build (about a minute here), so those run in the slow
tier."""

import dataclasses

import pytest

from fanns.boards import load_board
from fanns.datasets.synthetic import clustered
from fanns.design.ivfpq import IvfPqDesign
from fanns.flow.design_fuzz import (
    CORNER_NLISTS,
    FaceResult,
    FuzzCase,
    FuzzOutcome,
    base_vectors,
    draw_case,
    draw_corner_case,
    outcome_from_record,
    records,
    run_case,
    run_draws,
    table,
)
from fanns.flow.fuzz_draws import (
    HOST_BOARDS,
    HOST_CHANNELS,
    MEMORY_SHARE,
    case_board,
    channel_floor,
    draw_host_case,
    index_bytes,
    rom_bytes,
)
from fanns.flow.graph_fuzz import (
    GRAPH_BOARDS,
    GraphFuzzCase,
    any_outcome_from_record,
    draw_graph_case,
    graph_design_summary,
    run_graph_case,
)
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.dse import GraphPoint, GraphSpace, design_for
from fanns.model.ivfpq import dse, host_cache
from fanns.model.ivfpq.corners import CORNERS
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.resources import Resources
from tests.dask_cluster import dask_cluster, task_kinds  # noqa: F401  (a Dask scheduler and worker)
from tests.tiers import long_params

XC7_SEED = 18
"""Draw 18 is a pynq-z2 (Zynq-7000, device family xc7) design: the family draw #7 found uncalibrated."""
SMALL_BOX_SEEDS = (6, 11, 14)
"""Small-box draws the fast tier ran until it had to shrink (190 s for four draws)."""
SLOW_SEEDS = tuple(range(100, 104))
CORNER_SEEDS = (4, 7, 13)
"""Corner draws of the small box: 4, the most IVFDist PEs behind HSMPQG; 7, W = 8 LUT words with
the most channels; 13, the most PQDist PEs behind HPQ."""


def _check(outcomes: list[FuzzOutcome]) -> None:
    report = "\n".join(table(outcomes))
    assert all(o.passed for o in outcomes), report
    assert any(o.status == "ok" for o in outcomes), report  # the fuzz must reach the simulators
    ivfpq = [o for o in outcomes if o.status == "ok" and isinstance(o.case, FuzzCase)]
    steps = [{f.face for f in o.faces} >= {"model-steps", "hls-steps", "rtl-steps"} for o in ivfpq]
    assert all(steps), report  # the step-wise mode on the driver's model backend and both faces too


def test_draws_are_deterministic_and_in_range():
    for seed in range(200):
        case = draw_case(seed)
        assert case == draw_case(seed)
        assert 1 <= case.d <= 2048 and case.d % case.m == 0 and case.m <= 128 and 1 <= case.k <= 1000
        assert 0 < case.util < 1 and 100 <= case.clock_mhz <= 300
        small = draw_case(seed, max_d=128, max_k=16)
        assert small.d <= 128 and small.k <= 16
    # the box holds codes wider than a 512-bit beat (m > 64) and narrower than 4 bytes with d < 4
    cases = [draw_case(seed) for seed in range(200)]
    assert any(c.m > 64 for c in cases) and any(c.d < 4 for c in cases)


def test_corner_draws_visit_every_corner():
    cases = [draw_corner_case(seed) for seed in range(len(CORNERS))]
    assert sorted(c.corner for c in cases) == sorted(CORNERS)
    for seed, case in enumerate(cases):
        plain = draw_case(seed)
        assert case == draw_corner_case(seed) and (case.d, case.m, case.k, case.goal) == (
            plain.d,
            plain.m,
            plain.k,
            plain.goal,
        )
        assert case.nlist in CORNER_NLISTS and case.opq == (CORNERS[case.corner].group == "opq")
        # the two draws of a seed run side by side, each emptying its folder first
        assert case.folder != plain.folder
    # every corner's nlist trains on its draw's set (faiss: at most N / 4 lists)
    corners = [draw_corner_case(seed) for seed in range(60)]
    assert max(c.nlist for c in corners) == max(CORNER_NLISTS)
    assert all(c.nlist <= base_vectors(c) // 4 for c in corners)


def test_a_recorded_draw_reads_back_as_the_same_outcome():
    """`benchmarks/design_fuzz.py --resume` continues a run from its JSON: a record read back is the
    outcome it recorded (case, status, faces, designs), so the continued table and counts are whole."""
    outcome = FuzzOutcome(
        draw_corner_case(3),
        "ok",
        faces=[FaceResult(0, "rtl", True, "16 queries, 0 differ", 16, 0, 62.2, 61.7, 0.86)],
        seconds=12.3,
        designs=["IVF8,PQ4 nprobe 1 K 1: ..."],
    )
    failed = FuzzOutcome(draw_case(5), "failed", "rank 0 generate: boom", seconds=1.0)
    back = [outcome_from_record(r) for r in records([outcome, failed])]
    assert records(back) == records([outcome, failed]) and table(back) == table([outcome, failed])
    assert back[0].case == outcome.case and back[1].passed is False


@pytest.mark.slow  # a whole design generated and simulated (44 s), as every draw
def test_an_xc7_draw_generates_and_simulates_bit_exact(tmp_path, build_root):
    case = draw_case(XC7_SEED, max_d=128, max_k=16)
    _check([run_case(case, tmp_path / f"d{XC7_SEED}", build_root, runners_up=0)])


@pytest.mark.slow
def test_more_small_draws_generate_and_simulate_bit_exact(tmp_path, build_root):
    cases = [draw_case(s, max_d=128, max_k=16) for s in SMALL_BOX_SEEDS]
    _check([run_case(c, tmp_path / f"d{c.seed}", build_root, runners_up=0) for c in cases])


@pytest.mark.slow
def test_draws_of_the_whole_space_generate_and_simulate_bit_exact(tmp_path, build_root):
    cases = [draw_case(s, max_d=512, max_k=128) for s in SLOW_SEEDS]
    _check([run_case(c, tmp_path / f"d{c.seed}", build_root, runners_up=1) for c in cases])


# CI runs corner draw 4; draws 7 and 13 are long
@pytest.mark.slow
@pytest.mark.parametrize("seed", long_params(CORNER_SEEDS, long={7, 13}))
def test_corner_draws_generate_and_simulate_bit_exact(seed, tmp_path, build_root):
    _check([run_case(draw_corner_case(seed, max_d=128, max_k=16), tmp_path / "draw", build_root, runners_up=0)])


HOST_SEED = 0
"""The host-memory draw the slow tier runs end to end (small box; 84 s with nothing built before): a
U280 cut to 3 HBM and 2 DDR4 channels of 72 kB, 61,440 4-d vectors in IVF8,PQ4; the DSE's choice
reads its lists over the host link through 2 DDR4 PQ channels of 8 PQDist PEs each."""


def test_host_draws_shrink_the_board_below_the_index(tmp_path):
    """Every host draw runs on a board with a host link whose memory (at most `HOST_CHANNELS` channels
    a group) holds less than the draw's index lists, so the DSE keeps the lists in host memory
    (`host_cache.host_mode`); the draws are deterministic, cover every host board, and keep their
    plain draw's shape; the DSE's choice for one of them is a host-memory design."""
    cases = [draw_host_case(seed, max_d=128, max_k=16) for seed in range(30)]
    assert cases == [draw_host_case(seed, max_d=128, max_k=16) for seed in range(30)]
    assert {c.board for c in cases} == set(HOST_BOARDS) and all(c.host and not c.corner for c in cases)
    for seed, case in enumerate(cases):
        plain = draw_case(seed, max_d=128, max_k=16)
        assert dataclasses.replace(case, board=plain.board, host=False, m=plain.m) == plain and case.m == case.d
        assert case.folder not in (plain.folder, draw_corner_case(seed).folder) and "host" in case.label
        board = case_board(case, tmp_path / case.folder)
        assert board.host is not None and not board.builtin and all(g.count <= HOST_CHANNELS for g in board.memory)
        assert 0 < host_cache.board_bytes(board) <= MEMORY_SHARE * index_bytes(case)
        assert min(g.capacity_bytes for g in board.memory) >= channel_floor(case) > 2 * rom_bytes(case)
        w = synthetic_workload(base_vectors(case), case.d, case.m, case.nlist, 1, case.k, case.opq, queries=50)
        assert host_cache.index_bytes(w) == index_bytes(case) and host_cache.host_mode(w, board)
    case = cases[HOST_SEED]
    board = case_board(case, tmp_path / "dse")
    w = synthetic_workload(base_vectors(case), case.d, case.m, case.nlist, 2, case.k, case.opq, queries=50)
    outcome = dse.run([w], board, "synthetic", case.clock_mhz, case.util, top=1)
    assert outcome.best is not None and outcome.host_tier is not None and outcome.host_tier["cache_bytes"] > 0


@pytest.mark.slow
def test_a_host_memory_draw_generates_and_simulates_bit_exact(tmp_path, build_root):
    """One host draw through explore -> DSE -> both faces -> simulation: the DSE's choice keeps its
    lists in host memory (design.yaml `stages.pq_dist.host_tier`), every face bit-exact, the RTL
    (a cold cache, its PQ channels' host ports metered over the board file's link) within the
    cycle tolerance of the model."""
    case = draw_host_case(HOST_SEED, max_d=128, max_k=16)
    outcome = run_case(case, tmp_path / "draw", build_root, runners_up=0)
    _check([outcome])
    print("\n".join(table([outcome])))  # the cycle error, for the record (pytest -s)
    assert outcome.status == "ok", table([outcome])
    design = IvfPqDesign.load(tmp_path / "draw" / "design0" / "design.yaml")
    assert design.stages.pq_dist.host_tier is not None and design.stages.pq_dist.host_tier.cache_bytes > 0


def _chosen_and_runner_up(case: FuzzCase, tmp_path, build_root) -> list[IvfPqDesign]:
    """Run `case` with one runner-up; both designs must pass on both faces (and the step-wise mode
    of the C simulation). Their design files."""
    outcome = run_case(case, tmp_path / "draw", build_root, runners_up=1)
    _check([outcome])
    print("\n".join(table([outcome])))  # the faces' mismatches and cycle errors, for the record (pytest -s)
    assert outcome.status == "ok" and len(outcome.faces) == 10, table([outcome])
    return [IvfPqDesign.load(tmp_path / "draw" / f"design{rank}" / "design.yaml") for rank in (0, 1)]


FETCHED_GOALS = {1: "1-R@1=0.30", 10: "R@10=0.30", 100: "R@100=0.20"}
"""K -> the goal of the fetched-centroids draw (the DSE's choice and its runner-up fetch at both)."""


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
@pytest.mark.parametrize("k", sorted(FETCHED_GOALS))
def test_dse_chosen_designs_with_fetched_lut_centroids_are_bit_exact(k, tmp_path, build_root):
    """A draw outside the fuzz box's small nlist: 512 cells of 512-d centroids on a ZCU104 at half
    its memory, at K = 1, 10 and 100 (at K = 100 the goal R@100 = 0.20, nprobe 6: at R@100 = 0.30,
    nprobe 8, the DSE keeps the centroids in UltraRAM). BuildLUT's on-chip copy would take the UltraRAM IVFDist's lanes
    need, so the DSE's choice and its runner-up read BuildLUT's centroids from memory
    (`m_axi_lutc`); both designs are bit-exact on both faces and the RTL is within the cycle
    tolerance of the model. At K = 1 (nprobe 1, 6 BuildLUT PEs) the RTL measured +8.81 % against
    the model until the model spaced the first LUTs of a run by IVFDist's interval
    (`fanns.model.ivfpq.selk.LutSource.arrival`); now 652.3 against 652.3 cycles a query."""
    case = FuzzCase(200, "zcu104", 512, 16, 512, k, FETCHED_GOALS[k], 200.0, 0.5, False)
    for rank, design in enumerate(_chosen_and_runner_up(case, tmp_path, build_root)):
        assert design.k == k and design.stages.build_lut.centroids == "memory", (rank, design.stages)


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_dse_chosen_design_with_a_streamed_opq_matrix_is_bit_exact(tmp_path, build_root):
    """768-d OPQ on a KV260 at half its memory: the 768 x 768 matrix (1.2 MB of int16) fits
    neither the block RAM nor the UltraRAM budget, so the DSE's choice and its runner-up stream it
    from memory for every query (`stages.opq.storage: stream`); both designs are bit-exact on both
    faces and the RTL is within the cycle tolerance of the model."""
    case = FuzzCase(212, "kv260", 768, 16, 64, 10, "R@10=0.30", 200.0, 0.5, True)
    for rank, design in enumerate(_chosen_and_runner_up(case, tmp_path, build_root)):
        assert design.stages.opq is not None and design.stages.opq.storage == "stream", (rank, design.stages)


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_draws_run_as_jobs_on_an_existing_cluster(tmp_path, dask_cluster):  # noqa: F811
    """A draw shipped to a Dask worker started as its own process (reached by address, working in
    its own temporary folder) gives the outcome the same draw gives here."""
    case = draw_case(XC7_SEED, max_d=128, max_k=16)
    there = run_draws([case], tmp_path / "unused", runners_up=0, cluster=dask_cluster)
    assert "run_job" in task_kinds(dask_cluster)
    assert not (tmp_path / "unused").exists()  # the worker's folders, not this machine's
    here = run_draws([case], tmp_path / "here", runners_up=0)
    _check(there + here)
    assert [(o.status, [(f.rank, f.face, f.ok) for f in o.faces]) for o in there] == [
        (o.status, [(f.rank, f.face, f.ok) for f in o.faces]) for o in here
    ]


GRAPH_SEEDS = (1, 2, 3)
"""Graph draws of the small box (d <= 32, K <= 8) the slow tier runs; 1 (ZCU104, d = 10, 8 BFC
units, (mg, mc) = (4, 1), a one-bank 512-bit Bloom filter) is the one CI keeps; 3 is a 1-d NSG
graph searched across queries by 2 pipelines on a U250 (the data of d = 1 must be more than the two
points +1 and -1: `fanns.datasets.synthetic.clustered`)."""


def test_graph_draws_are_valid_designs_and_cover_the_space():
    """Every pinned graph draw is a design the generators accept (`GraphDesign.validate` through
    the DSE's `design_for`, on a small graph of the draw's shape); the draws cover both graph
    kinds, both modes, the DSE and every graph board, and d is not only powers of two. The whole
    space's draws reach d = 1 and d > 1024; the pinned draws at its ends are valid designs too."""
    cases = [draw_graph_case(seed, max_d=32, max_k=8) for seed in range(40)]
    assert cases == [draw_graph_case(seed, max_d=32, max_k=8) for seed in range(40)]
    assert {c.graph for c in cases} == {"hnsw", "nsg"} and {c.board for c in cases} == set(GRAPH_BOARDS)
    assert {c.mode for c in cases if not c.dse} == {"intra", "across"} and any(c.dse for c in cases)
    assert any(c.d & (c.d - 1) for c in cases) and all(1 <= c.d <= 32 and 1 <= c.k <= 8 for c in cases)
    # the whole space (the benchmark's): d from 1 to 2048, its ends drawn; one of each end checked too
    space = [draw_graph_case(seed) for seed in range(100)]
    assert min(c.d for c in space) == 1 and 1024 < max(c.d for c in space) <= 2048
    ends = [
        min((c for c in space if not c.dse), key=lambda c: (c.d, c.seed)),
        max(space, key=lambda c: (not c.dse, c.d)),
    ]
    for c in cases[:12] + ends:
        assert c.degree % 2 == 0 and (c.dse or c.k <= c.l)
        if c.dse:
            assert c.goal.startswith(f"R@{c.k}=")
            continue
        base, _ = clustered(128, 1, c.d, seed=c.seed)
        graph = build_graph(base, c.graph, max_degree=c.degree, fmt=graph_format_for(base, c.vec_bits))
        board = load_board(c.board)
        point = GraphPoint(
            c.mode, c.units, c.pipelines, c.channels, c.l, c.mg, c.mc, c.bloom_h * c.bloom_bank_bits,
            0.0, 0.0, 0.0, Resources(), False,
        )  # fmt: skip
        space = GraphSpace(dst=((c.mg, c.mc),), bloom_h=c.bloom_h, k=c.k)
        design = design_for(graph, board, point, space, board.clock.mhz, c.util)
        assert design.mode == c.mode and design.channels == c.channels, graph_design_summary(design)


def test_a_recorded_graph_draw_reads_back_as_the_same_outcome():
    outcome = FuzzOutcome(
        draw_graph_case(1, max_d=32, max_k=8),
        "ok",
        faces=[FaceResult(0, "rtl", True, "8 queries, 0 differ", 8, 0, 900.0, 900.0, 0.0)],
        seconds=9.0,
        designs=["NSG intra-query, ..."],
    )
    ivf = FuzzOutcome(draw_case(5), "failed", "rank 0 generate: boom", seconds=1.0)
    back = [any_outcome_from_record(r) for r in records([outcome, ivf])]
    assert isinstance(back[0].case, GraphFuzzCase) and isinstance(back[1].case, FuzzCase)
    assert records(back) == records([outcome, ivf]) and table(back) == table([outcome, ivf])


# each draw builds a Verilator model of its graph design (about a minute); CI runs draw 1, 2 and 3 are long
@pytest.mark.slow
@pytest.mark.parametrize("seed", long_params(GRAPH_SEEDS, long={2, 3}))
def test_graph_draws_generate_and_simulate_bit_exact(seed, tmp_path, build_root):
    _check([run_graph_case(draw_graph_case(seed, max_d=32, max_k=8), tmp_path / "draw", build_root)])


def test_a_graph_dse_draw_with_no_design_passes_with_the_reason(tmp_path):
    """A graph DSE draw whose goal no design reaches under its cap ends "no design" with the DSE's
    reason (why no design is promised), in about a second: nothing is generated."""
    case = dataclasses.replace(draw_graph_case(11, max_d=32, max_k=8), goal="R@7=0.999", util=0.05)
    assert case.dse
    outcome = run_graph_case(case, tmp_path / "draw", tmp_path / "builds")
    assert outcome.status == "no design" and outcome.passed, table([outcome])
    assert "no graph design on zcu104 can be promised R@7=0.999: " in outcome.reason
    assert not outcome.faces and not (tmp_path / "draw" / "project").exists()
