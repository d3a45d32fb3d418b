"""Lane counts that divide neither d nor d/m (issue 16, "Every dimension"): padded sub-vectors.

The hardware holds each of the m sub-vectors in `dsub_hw` elements, zeros after the real ones
(`fanns.numerics`, "Padded sub-vectors"). These fast tests check, over d from 1 to 2048, that
padding adds exactly nothing to any stage's arithmetic (format functions and the PE reference
models at lane counts that do not divide d), that the images and host buffers round-trip, that
the model prices the padded beats, and that the DSE offers the paddings: 784-d and 1024-d data
get designs on u55c that use the board, and "no design fits" names the stage, the resource, the
excess and what to change.
"""

import dataclasses

import numpy as np
import pytest

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.boards import load_board
from fanns.design.ivfpq import IvfPqDesign
from fanns.driver.ivfpq.model import index_from_images
from fanns.errors import FannsError
from fanns.images.ivfpq import IoLayout, pack
from fanns.images.ivfpq import quantised_arrays as qarrays
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import buildable, dse, options
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.report import to_design
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.numerics import IvfPqFormat, pad_subspaces, unpad_subspaces
from fanns.pe.build_lut import BuildLut
from fanns.pe.ivf_dist import IvfDist
from fanns.pe.opq import Opq
from tests.model.test_lanes import check_both, design_of
from tests.tiers import slow_params

SHAPES = ((1, 1), (3, 1), (6, 2), (96, 16), (100, 10), (300, 10), (784, 16), (1024, 16), (2048, 64))
"""(d, m): d from 1 to 2048, with few power-of-two factors, m a divisor of d (faiss's rule)."""


def _fmt(d: int, m: int, dsub_hw: int = 0) -> IvfPqFormat:
    return IvfPqFormat(d=d, m=m, scale=1.0, ivf_shift=3, lut_shift=2, vec_bits=8, dsub_hw=dsub_hw)


@pytest.mark.parametrize("d,m", SHAPES)
def test_padding_adds_exactly_nothing(d, m):
    """Every padding the DSE offers: the stage functions on padded arrays (a format of d_hw
    elements) and the PE reference models at lanes that divide d_hw but not d equal the
    unpadded computation bit for bit; OPQ's pad outputs are 0."""
    rng = np.random.default_rng(d)
    q = rng.integers(-127, 128, (3, d))
    c = rng.integers(-127, 128, (5, d))
    book = rng.integers(-127, 128, (m, 256, d // m))
    a = rng.integers(-(1 << 15) + 1, 1 << 15, (d, d))
    fmt = _fmt(d, m)
    pads = buildable.padded_dsubs(d, m)
    assert pads[0] == d // m and all(p < 2 * (d // m) for p in pads[1:])
    for dsub_hw in pads:
        pf = _fmt(d, m, dsub_hw)
        hw = IvfPqFormat(d=pf.d_hw, m=m, scale=1.0, ivf_shift=3, lut_shift=2, vec_bits=8)
        qp, cp, bp, ap = pf.pad(q), pf.pad(c), pad_subspaces(book, 1, dsub_hw), pf.pad_matrix(a)
        assert np.array_equal(pf.unpad(qp), q) and np.array_equal(unpad_subspaces(bp, 1, d // m), book)
        assert np.array_equal(hw.ivf_distances(qp, cp), fmt.ivf_distances(q, c))
        assert np.array_equal(hw.build_luts(qp[0], cp[1], bp), fmt.build_luts(q[0], c[1], book))
        y = hw.opq_rotate(qp, ap)
        assert np.array_equal(pf.unpad(y), fmt.opq_rotate(q, a))
        assert not y[:, pf.pad(np.ones(d)) == 0].any()
        ragged = [w for w in (4, 8, 16, 32) if pf.d_hw % w == 0 and d % w]
        for w in ragged[:2]:  # lanes the unpadded shape cannot take
            ivf, plain = (IvfDist(d=n, w=k, vec_bits=8, nlist=5, ivf_shift=3) for n, k in ((pf.d_hw, w), (d, 1)))
            assert np.array_equal(ivf.keys(qp[0], cp), plain.keys(q[0], c))
            assert np.array_equal(
                Opq(d=pf.d_hw, w=w, vec_bits=8).rotate(qp[1], ap), pf.pad(Opq(d=d, w=1, vec_bits=8).rotate(q[1], a))
            )
        for w in [w for w in (2, 4, 8, 16, 64) if buildable.lane_problem("build_lut", w, pf.d_hw, m, 8, 512) is None]:
            lut = BuildLut(d=pf.d_hw, m=m, w=w, vec_bits=8, lut_shift=2)
            assert np.array_equal(lut.luts(qp[2], cp[3], bp), fmt.build_luts(q[2], c[3], book))


def test_a_padding_below_the_sub_vector_is_refused():
    with pytest.raises(FannsError, match="dsub_hw=5 is not a padded sub-vector length for d/m=6"):
        _fmt(96, 16, 5)
    assert "dsub_hw" not in _fmt(96, 16).to_dict() and _fmt(96, 16, 8).to_dict()["dsub_hw"] == 8


@pytest.mark.parametrize("d,m,dsub_hw,opq", [(100, 10, 12, True), (96, 16, 8, False)])
def test_images_and_host_buffers_round_trip(d, m, dsub_hw, opq):
    """The packed images hold the padded layout (zeros in every pad position); the model backend
    reads back the index the reference model uses; queries pad and unpad."""
    data = random_index(nlist=8, n=600, d=d, m=m, opq=opq, empty=1)
    fmt = dataclasses.replace(random_format(d, m), dsub_hw=dsub_hw)
    design = pinned_design(data, fmt, nprobe=2, k=5, ivf=(2, 8, "bram"), lut=(1, 4, "bram"), pq=(2, 1), opq_lanes=8)
    images = pack(design, data)
    q = qarrays(design, data)
    mask = fmt.pad(np.ones(d)) == 0
    cent = images.get("centroids").array()
    assert cent.shape == (8, fmt.d_hw) and not cent[:, mask].any() and np.array_equal(fmt.unpad(cent), q["centroids"])
    book = images.get("codebook").array()
    assert book.shape == (256, fmt.d_hw) and not book[:, mask].any()
    if opq:
        mat = images.get("opq_matrix").array()
        assert mat.shape == (fmt.d_hw, fmt.d_hw) and not mat[mask].any() and not mat[:, mask].any()
    back = index_from_images(images, design, data.metric)
    assert np.array_equal(fmt.quantize(back.centroids), q["centroids"])
    assert np.array_equal(fmt.quantize(back.codebook), q["codebook"])
    if opq:
        assert np.array_equal(fmt.quantize_opq_matrix(back.opq_matrix), q["opq_matrix"])
    io = IoLayout.from_dict(images.io.to_dict())
    assert io == images.io and io.d_hw == fmt.d_hw and io.query_beats == -(-fmt.d_hw * 2 // 32)
    qfx = np.random.default_rng(1).integers(-300, 300, (4, d))
    assert np.array_equal(io.unpack_queries(io.pack_queries(qfx), 4), qfx)


def test_the_model_prices_the_padded_beats():
    """IVFDist, BuildLUT and OPQ run over d_hw / lanes words: 96-d with sub-vectors padded to 8
    takes 128 / 8 = 16 words per centroid at 8 lanes, where 96 / 8 = 12 unpadded."""
    board = load_board("u55c")
    w = synthetic_workload(10**4, 96, 16, 64, 4, 10, True, queries=4, seed=0)
    plain, padded = dse.context(w, board, 200.0), dse.context(w, board, 200.0, 8)
    assert (plain.d, padded.d) == (96, 128) and padded.fmt.dsub_hw == 8 and plain.fmt.dsub_hw == 0
    st = stage_model.IvfDistStage(1, 8, "bram")
    assert stage_model.ivf_pe(padded, st, 64).ii() == 65 * 16 and stage_model.ivf_pe(plain, st, 64).ii() == 65 * 12
    lut = stage_model.BuildLutStage(1, 4, "bram")
    assert stage_model.lut_pe(padded, lut).ii() == 257 * 32
    assert stage_model.opq_pe(padded, stage_model.OpqStage(8)).ii() == 129 * 16


@pytest.mark.parametrize("board_name", ("zcu104", "u250"))
def test_every_padded_lane_count_emitted_is_built_by_both_generators(board_name):
    """Issue 17's rule, for the paddings: every lane count the OPQ, front and lut groups emit in a
    padded context passes both generators' design checks (with one lane for the other stages)."""
    board = load_board(board_name)
    limits = Budget.from_board(board, 0.6).limits()
    emitted = padded = 0
    for d, m in ((6, 6), (96, 16), (100, 10), (300, 10), (784, 16), (960, 8), (1536, 16)):
        w = synthetic_workload(10**4, d, m, 8, 2, 10, True, queries=4, seed=0)
        for dsub_hw in buildable.padded_dsubs(d, m):
            ctx = dse.context(w, board, 200.0, dsub_hw)
            padded += bool(ctx.fmt.dsub_hw)
            groups = {
                "opq": options.opq_options(ctx, limits),
                "ivf_dist": options.front_options(ctx, limits),
                "build_lut": options.lut_options(ctx, limits),
            }
            for stage, opts in groups.items():
                for lanes in sorted(set(opts.lanes.tolist())):
                    emitted += 1
                    design = design_of(ctx, w, board, {"opq": 1, "ivf_dist": 1, "build_lut": 1, stage: lanes})
                    assert design.format.d_hw == ctx.d
                    check_both(design, board)
    assert padded >= 8 and emitted > 3 * padded


# d/m = 10 and 30 are slow: test_every_padded_lane_count_emitted_is_built_by_both_generators
# builds their every lane count in the fast tier
@pytest.mark.parametrize(
    "d,m",
    slow_params([(100, 10), (300, 10), (784, 16), (1024, 16), (2048, 32)], fast={(784, 16), (1024, 16), (2048, 32)}),
)
def test_every_shape_gets_a_design_both_generators_build(d, m):
    board = load_board("u55c")
    w = synthetic_workload(2000, d, m, 32, 4, 10, False, queries=6, seed=0)
    outcome = dse.run([w], board, "R@10=0.9", 200.0, top=2)
    assert outcome.best is not None, outcome.explain
    for p in outcome.top[:2]:
        check_both(to_design(p, outcome, None), board)


def _share(p, stage: str, budget) -> float:
    """The largest share of a resource of the budget that `stage` takes."""
    use, have = p.stage_resources(stage).as_array(), budget.total.as_array()
    return float(max(u / h for u, h in zip(use, have) if h > 0))


# d = 784 needs the padding (49-element sub-vectors); the slow tier adds d = 1024
@pytest.mark.parametrize("d", slow_params([784, 1024], fast={784}))
def test_high_dimensional_designs_use_the_board(d):
    """Issue 16 saw a 784-d design at 0.1 % of the LUTs per stage (one IVFDist PE). Now the
    front stages scale with d: several IVFDist PEs with wide lanes, BuildLUT PEs of 64+ lanes,
    and the design takes a large share of the binding resource."""
    board = load_board("u55c")
    w = synthetic_workload(60000, d, 16, 256, 8, 10, False, queries=20, seed=0)
    outcome = dse.run([w], board, "R@10=0.9", 200.0, top=1)
    p = outcome.best
    assert p is not None, outcome.explain
    st = p.stages
    assert st.ivf_dist.pes * st.ivf_dist.lanes >= 64 and st.build_lut.pes * st.build_lut.lanes >= 256, st
    assert _share(p, "ivf_dist", outcome.budget) > 0.01 and _share(p, "build_lut", outcome.budget) > 0.3
    if d == 784:  # 49-element sub-vectors: the lanes that pay need padding
        assert p.ctx.fmt.dsub_hw > 49 and (st.build_lut.lanes % 7 or st.ivf_dist.lanes % 7), (p.ctx.fmt, st)
    assert p.qps > 40000, p.qps


def test_nothing_fits_names_stage_resource_excess_and_change():
    board = load_board("zcu104")
    w = synthetic_workload(10**6, 2048, 16, 65536, 8, 10, False, queries=4, seed=0)
    text = "\n".join(dse.run([w], board, "R@10=0.9", 200.0, top=1).explain)
    assert "no design fits zcu104" in text and "BRAM18: needs" in text and "budget allows" in text, text
    assert "% of it in pq_dist, sel_k: a smaller K" in text and "use a board with more BRAM18" in text, text
    # a board without UltraRAM keeps the 1024-d codebooks in block RAM, where they do not fit
    small = synthetic_workload(10**4, 1024, 16, 1024, 8, 10, False, queries=4, seed=0)
    text = "\n".join(dse.run([small], load_board("pynq-z2"), "R@10=0.9", 100.0, top=1).explain)
    assert "no design fits pynq-z2" in text and "BRAM18: needs" in text, text
    assert "% of it in build_lut: a smaller d (every BuildLUT PE holds a 256 x d codebook" in text, text
    wide = synthetic_workload(10**4, 768, 256, 16, 2, 10, False, queries=4, seed=0)
    text = "\n".join(dse.run([wide], board, "R@10=0.9", 200.0, top=1).explain)
    assert "option group 'back' (pq_dist, sel_k) is empty" in text and "m=256" in text, text
    assert "use a smaller m" in text and text.count("'back' (pq_dist, sel_k) is empty") == 1, text


def test_a_bad_padding_in_design_yaml_gets_a_clear_error(tmp_path):
    """design.yaml's format.dsub_hw: not an integer or below d/m is refused at load; without the
    padding, lanes that need it are refused by the generators' check, which names the fix."""
    data = random_index(nlist=8, n=600, d=96, m=16, empty=1)
    fmt = dataclasses.replace(random_format(96, 16), dsub_hw=8)
    design = pinned_design(data, fmt, nprobe=2, k=5, ivf=(1, 8, "bram"), lut=(1, 4, "bram"), pq=(2, 1))
    design.save(tmp_path / "design.yaml")
    text = (tmp_path / "design.yaml").read_text()
    assert "dsub_hw: 8" in text
    for bad in ("'x'", "5", "true"):
        (tmp_path / "bad.yaml").write_text(text.replace("dsub_hw: 8", f"dsub_hw: {bad}"))
        with pytest.raises(FannsError, match="is not a padded sub-vector length for d/m=6"):
            IvfPqDesign.load(tmp_path / "bad.yaml")
    (tmp_path / "bad.yaml").write_text(text.replace("dsub_hw: 8", "dsub_hw: 0"))
    plain = IvfPqDesign.load(tmp_path / "bad.yaml")
    with pytest.raises(FannsError, match="4 lanes neither divide nor") as err:
        IvfPqHw.from_design(plain, plain.target_board())
    assert "format.dsub_hw" in err.value.hint


def test_the_dse_without_padding_offers_only_the_unpadded_sub_vectors():
    """`dse.run(padding=False)` (what benchmarks/padding_dse.py compares against) keeps d/m = 49:
    BuildLUT's lanes divide 49 or are multiples of it, and the best design is slower than with
    the paddings."""
    board = load_board("u55c")
    w = synthetic_workload(2000, 784, 16, 32, 4, 10, False, queries=6, seed=0)
    plain = dse.run([w], board, "R@10=0.9", 200.0, top=1, padding=False).best
    padded = dse.run([w], board, "R@10=0.9", 200.0, top=1).best
    lanes = plain.stages.build_lut.lanes
    assert plain.ctx.fmt.dsub_hw == 0 and (49 % lanes == 0 or lanes % 49 == 0), plain.stages
    assert padded.ctx.fmt.dsub_hw > 49 and padded.qps > plain.qps
