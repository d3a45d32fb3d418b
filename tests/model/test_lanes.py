"""Every lane count the DSE's option enumerator emits is one both generators build (issue 17).

Shapes spread over d = 1..2048 (96: Deep1B; 100, 300, 784: odd shapes) and every m faiss
accepts (m divides d), on boards with 128- to 512-bit I/O ports, with 16-bit and 32-bit stored
elements. For each shape the OPQ, IVFDist and BuildLUT options are enumerated; every lane count
they carry is put into a design (its partners: one lane, which suits every count) and checked
by the RTL generator's design check (`IvfPqHw.from_design`) and the HLS generator's
(`check_design`), without simulating. "No design fits" names a group empty for its shape.
"""

import numpy as np
import pytest

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.boards import load_board
from fanns.codegen.ivfpq.hls import check_design
from fanns.design.ivfpq import BuildLutStage, IndexRef, IvfDistStage, IvfPqDesign, OpqStage, PqDistStage, Stages
from fanns.errors import FannsError
from fanns.model.ivfpq import buildable, dse, options
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.report import to_design
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.pe.opq import Opq
from tests.tiers import slow_params

DS = (1, 2, 3, 7, 16, 24, 96, 100, 128, 300, 720, 784, 960, 2048)
BOARDS = ("zcu104", "u55c", "u250")  # I/O ports of 128, 256, 512 bits (no calibration table for 64)
VEC_BITS = (16, 20)  # int16 and int32 elements in device memory


def workload(d: int, m: int, vec_bits: int, opq: bool = True):
    return synthetic_workload(10**4, d, m, 8, 2, 10, opq, queries=4, seed=0, vec_bits=vec_bits)


def design_of(ctx, w, board, lanes: dict, ivf: IvfDistStage | None = None) -> IvfPqDesign:
    """A design with these lanes (one PE each, on-chip storage; `ivf`: that IVFDist stage instead)
    and a PQ stage on the board's first memory group (codes of any m suit every port: wide ones
    take several beats)."""
    mem = ctx.memories[0]
    stages = Stages(
        opq=OpqStage(lanes["opq"]) if w.opq else None,
        ivf_dist=ivf or IvfDistStage(1, lanes["ivf_dist"], "bram"),
        sel_cells=stage_model.select_stage("hpq", ivf.pes if ivf else 1, w.nprobe, w.fmt.ivf_key_bits),
        build_lut=BuildLutStage(1, lanes["build_lut"], "bram"),
        pq_dist=PqDistStage(1, False, mem.kind, 1, mem.port_bits),
        sel_k=stage_model.select_stage("hpq", 1, w.k, w.fmt.pq_key_bits),
    )
    design = IvfPqDesign(
        board=board.name,
        clock_mhz=ctx.clock_mhz,
        util=0.6,
        index=IndexRef(factory=w.index, n=w.n, d=w.fmt.d, nlist=w.nlist, m=w.m, opq=w.opq),
        nprobe=w.nprobe,
        k=w.k,
        format=ctx.fmt,
        stages=stages,
        memory=stage_model.memory_plan(ctx, stages),
        fifo_depth=stage_model.FIFO_DEPTH,
        slr={},
    )
    design.validate()
    return design


def check_both(design: IvfPqDesign, board) -> None:
    IvfPqHw.from_design(design, board)
    check_design(design)


def opq_stores_of_the_top(workload, board, clock_mhz: float) -> set[str]:
    """The OPQ matrix stores of the DSE's top two designs for `workload`, each accepted by both
    generators."""
    outcome = dse.run([workload], board, "R@10=0.5", clock_mhz, top=2)
    assert outcome.best is not None, outcome.explain
    designs = [to_design(p, outcome, None) for p in outcome.top]
    for design in designs:
        check_both(design, board)
        assert [ch.use for ch in design.memory].count("opq_matrix") == design.stages.opq.channels
    return {design.stages.opq.storage for design in designs}


@pytest.mark.slow  # every lane count's HLS and RTL build per board: 20-30 s each
@pytest.mark.parametrize("board_name", BOARDS)
def test_every_emitted_lane_count_is_built_by_both_generators(board_name):
    board = load_board(board_name)
    limits = Budget.from_board(board, 0.6).limits()
    shapes = emitted = 0
    for vec_bits in VEC_BITS:
        for d in DS:
            ctx = dse.context(workload(d, 1, vec_bits), board, 200.0)
            groups = {"opq": options.opq_options(ctx, limits), "ivf_dist": options.front_options(ctx, limits)}
            for m in buildable.divisors(d):
                w = workload(d, m, vec_bits)
                ctx = dse.context(w, board, 200.0)
                groups["build_lut"] = options.lut_options(ctx, limits)
                shapes += 1
                for stage, opts in groups.items():
                    if stage != "build_lut" and m != 1:
                        continue  # OPQ and IVFDist lanes do not depend on m: checked once per d
                    if len(opts) == 0:  # over the budget (e.g. a d x d OPQ matrix): nothing emitted
                        continue
                    for lanes in sorted(set(opts.lanes.tolist())):
                        emitted += 1
                        design = design_of(ctx, w, board, {"opq": 1, "ivf_dist": 1, "build_lut": 1, stage: lanes})
                        check_both(design, board)
    assert shapes == 2 * sum(len(buildable.divisors(d)) for d in DS)
    assert emitted > shapes


@pytest.mark.parametrize("board_name", BOARDS)
def test_every_streamed_ivf_option_is_built_by_both_generators(board_name):
    """Streamed IVF centroids (issue 16): every (PEs, lanes, channels) the DSE offers that the
    board's channels hold passes both generators' checks; the RTL's limits a channel to as many
    PEs as a beat holds words."""
    board = load_board(board_name)
    limits = Budget.from_board(board, 0.6).limits()
    offered = 0
    for d in (16, 96, 128, 784):
        w = workload(d, 1, 16, opq=False)
        ctx = dse.context(w, board, 200.0)
        room = ctx.memories[0].count - 2  # the I/O and the PQ channel take two (the DSE's channel budget)
        opts = options.front_options(ctx, limits).configs
        streamed = {st for st, _ in opts if st.storage == "stream" and st.channels <= room}
        for st in sorted(streamed, key=lambda s: (s.lanes, s.pes))[:: max(1, len(streamed) // 12)]:
            offered += 1
            check_both(design_of(ctx, w, board, {"opq": 1, "ivf_dist": st.lanes, "build_lut": 1}, st), board)
    assert offered > 4


def test_the_lanes_the_rules_refuse_are_refused_by_the_rtl_check():
    """The other direction: a lane count outside `stage_lanes` is refused (so the enumerator is
    not stricter than it needs to be in a way the tests would miss, and the rule is the RTL's)."""
    board = load_board("u250")
    w = workload(96, 16, 16, opq=False)
    ctx = dse.context(w, board, 200.0)
    for stage in ("ivf_dist", "build_lut"):
        legal = buildable.stage_lanes(stage, 96, 16, 16, 512)
        for lanes in buildable.divisors(96):
            design = design_of(ctx, w, board, {"opq": 1, "ivf_dist": 1, "build_lut": 1, stage: lanes})
            if lanes in legal:
                check_both(design, board)
            else:
                with pytest.raises(FannsError, match="lanes"):
                    IvfPqHw.from_design(design, board)
                check_design(design)  # HLS builds every divisor of d
    assert buildable.stage_lanes("build_lut", 96, 16, 16, 512) == [1, 2, 96]
    # offered: up to 64 lanes, and 96 here because nothing from 4 to 64 is buildable
    assert options.stage_lanes(ctx, "build_lut") == ([1, 2, 96], "")
    assert options.offered_lanes([1, 2, 4, 8, 16, 32, 64, 128]) == [1, 2, 4, 8, 16, 32, 64]
    assert buildable.stage_lanes("build_lut", 96, 16, 16, 256) == [1, 2, 48, 96]
    assert buildable.stage_lanes("ivf_dist", 96, 16, 16, 128) == [1, 2, 4, 8, 16, 24, 32, 48, 96]


# the lanes do not depend on the board: its 512- and 128-bit ports stay fast, U55C's HBM (8 s) is slow
@pytest.mark.parametrize("board_name", slow_params(("u55c", "u250", "zcu104"), fast={"u250", "zcu104"}))
def test_deep96_gets_designs_both_generators_build(board_name):
    """The issue's deep-96 gap: d = 96, m = 16 had no BuildLUT lanes; now the DSE's top and
    Pareto designs (lanes combined across groups) pass both generators' checks."""
    board = load_board(board_name)
    w = synthetic_workload(10**6, 96, 16, 256, 8, 10, False, queries=20, seed=0)
    outcome = dse.run([w], board, "R@10=0.9", 200.0, top=3)
    assert outcome.best is not None, outcome.explain
    for p in outcome.top + outcome.pareto:
        check_both(to_design(p, outcome, None), board)


def test_no_design_fits_names_the_empty_group():
    board = load_board("u250")
    w = synthetic_workload(10**4, 256, 256, 16, 2, 10, False, queries=4, seed=0)
    outcome = dse.run([w], board, "R@10=0.9", 200.0, top=1)
    assert outcome.best is None
    text = "\n".join(outcome.explain)
    assert "option group 'back' (pq_dist, sel_k) is empty" in text and "m=256" in text, text
    assert "binding" not in text and "too large" not in text, text


# several beats a code on a 256-bit and a 128-bit port stay fast; the slow tier adds m = 48 on
# U55C (two beats a code, as zcu104's m = 32: 12 s) and m = 2 on U250 (its DSE prices HSMPQG
# networks of up to 689 streams: 26 s)
@pytest.mark.parametrize(
    "board_name,d,m,unit",
    slow_params(
        [("u55c", 768, 48, (1, 2)), ("u55c", 768, 96, (1, 3)), ("zcu104", 768, 32, (1, 2)), ("u250", 2, 2, (16, 1))],
        fast={("u55c", 768, 96, (1, 3)), ("zcu104", 768, 32, (1, 2))},
    ),
)
def test_codes_wider_than_a_beat_or_below_4_bytes_get_designs(board_name, d, m, unit):
    """Issue 16: m = 48 and 96 on 256-bit HBM ports and m = 32 on 128-bit HP ports take several
    beats per code (`unit`: codes per unit, beats per unit); m = 2 fills a 512-bit beat only up
    to its 16 ids. The DSE offers them, prices every beat of a PE's share (the channel moves one
    beat per cycle) and both generators accept its picks."""
    board = load_board(board_name)
    w = synthetic_workload(10**6, d, m, 256, 16, 10, False, queries=20, seed=0)
    outcome = dse.run([w], board, "R@10=0.5", 200.0, top=2)
    assert outcome.best is not None, outcome.explain
    for p in outcome.top:
        check_both(to_design(p, outcome, None), board)
    ctx, st = outcome.best.ctx, outcome.best.stages.pq_dist
    work = stage_model.pq_timing(ctx, st, stage_model.Probes.of(w.probed))[1]
    ipu, bpu = unit
    items = work.shares.items
    assert (items % ipu == 0).all()
    id_beats = -(-items * 32 // st.port_bits)
    assert np.array_equal(work.beats, (items // ipu * bpu + id_beats).sum(1))


def test_an_opq_matrix_too_large_for_block_ram_goes_to_ultraram():
    """d = 1536: the 16-bit OPQ matrix (4.5 MiB) is larger than the block RAM of any U55C SLR (a PE
    cannot span SLRs), so the DSE puts it in UltraRAM, and both generators build that. At d = 2048
    (8 MiB) no SLR's UltraRAM holds it either: the DSE streams it from a channel of its own, once
    per query, which both generators build too."""
    board = load_board("u55c")
    budget = Budget.from_board(board, 0.6)
    assert Opq(d=1536, w=64).features()["bram18_tiles"] > max(r.bram18 for r in budget.slrs.values())
    w = synthetic_workload(10**6, 1536, 96, 1024, 8, 10, True, queries=20, seed=0)
    assert opq_stores_of_the_top(w, board, 200.0) == {"uram"}
    w = synthetic_workload(10**6, 2048, 128, 1024, 8, 10, True, queries=20, seed=0)
    assert opq_stores_of_the_top(w, board, 200.0) == {"stream"}


def test_a_small_board_streams_an_opq_matrix_it_cannot_hold():
    """ZCU102 at d = 1536: the matrix (4.5 MiB) exceeds its block RAM (4 MiB, and no UltraRAM),
    so OPQ is offered streamed only: one row word of lanes x 16 bits a cycle while the channel
    delivers it, the stage's interval (d + 1) * d / lanes times the channel's shortfall. (Until
    the calibration's rounding noise was dropped, 3e-17 URAM per OPQ PE kept OPQ off this board.)"""
    board = load_board("zcu102")
    w = synthetic_workload(10**5, 1536, 96, 64, 4, 10, True, queries=20, seed=0)
    ctx = dse.context(w, board, 100.0)
    opts = options.opq_options(ctx, Budget.from_board(board, 0.6).limits())
    stages = [c[0] for c in opts.configs]
    assert stages and {st.storage for st in stages} == {"stream"}
    mem = ctx.memories[0]
    for st, cycles in zip(stages, opts.cycles, strict=True):
        slow = max(1.0, st.lanes * 16 / (mem.port_bits * mem.beats_per_cycle))
        assert cycles[0] == pytest.approx(1537 * 1536 / st.lanes * slow)
    assert opq_stores_of_the_top(w, board, 100.0) == {"stream"}


def test_a_board_whose_block_ram_the_codebooks_exhaust_keeps_them_in_ultraram(monkeypatch):
    """ZCU104 at d = 1024, m = 128: every BuildLUT PE's codebook (256 x 1024 bytes, 128 BRAM18 at
    least) and the rest of the design need more block RAM than 60 % of the board allows, so with
    codebooks in block RAM only nothing fits (as `benchmarks/datasets.py` found at 1024-d); the
    DSE puts them in UltraRAM, and both generators build that."""
    board = load_board("zcu104")
    w = synthetic_workload(10**5, 1024, 128, 512, 3, 10, False, queries=20, seed=0)
    outcome = dse.run([w], board, "R@10=0.5", 100.0, top=2)
    assert outcome.best is not None, outcome.explain
    for p in outcome.top:
        design = to_design(p, outcome, None)
        assert design.stages.build_lut.codebook == "uram"
        check_both(design, board)
    monkeypatch.setattr(buildable, "BUILT_LUT_CODEBOOKS", ("bram",))
    outcome = dse.run([w], board, "R@10=0.5", 100.0, top=1)
    assert outcome.best is None
    assert any("BRAM18" in line and "build_lut" in line for line in outcome.explain), outcome.explain


def test_a_board_without_ultraram_keeps_its_memories_in_block_ram():
    """pynq-z2 (7-series) has no UltraRAM: its calibration has no URAM points, so a URAM memory
    would be priced as free. The DSE never offers one and the PE library refuses to price one."""
    board = load_board("pynq-z2")
    with pytest.raises(FannsError, match="UltraRAM, which device family xc7 does not have"):
        Opq(d=64, w=8, storage="uram").resources("xc7")
    outcome = dse.run([workload(64, 8, 16)], board, "R@10=0.5", 100.0, top=3)
    assert outcome.best is not None, outcome.explain
    for p in outcome.top:
        st = to_design(p, outcome, None).stages
        assert st.opq.storage == "bram" and st.ivf_dist.storage != "uram" and st.build_lut.centroids != "uram"
        assert st.build_lut.codebook == "bram"
