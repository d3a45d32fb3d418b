"""The glue PEs (`fanns.pe.glue_streams`, `fetcher`, `channel_feeder`, `result_filter`, `axil_split`): their
calibrated resources against a fresh yosys synthesis of configurations they were not fitted on,
and their place in the IVF-PQ inventory the DSE prices (`design_units`), counted as the
accelerator's RTL instantiates them."""

from collections import Counter

import pytest
from amaranth import Shape
from amaranth.hdl import Fragment

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.arch.ivfpq.top import IvfPqAccelerator
from fanns.boards import load_board
from fanns.index.ivfpq_synthetic import random_index
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.numerics import IvfPqFormat
from fanns.pe.axil_split import AxilSplit
from fanns.pe.channel_feeder import ChannelFeeder, ChannelFeederComponent
from fanns.pe.fetcher import Fetcher, FetcherComponent
from fanns.pe.glue_streams import (
    BeatSplitter,
    BeatSplitterComponent,
    Broadcast,
    BroadcastComponent,
    Regroup,
    RegroupComponent,
    select_luts,
)
from fanns.pe.result_filter import ResultFilter, ResultFilterComponent
from fanns.pe.stream_fifo import StreamFifoComponent
from fanns.pe.stream_pack import StreamPack, StreamPackComponent
from fanns.tools.yosys import synthesize

GLUE = (Broadcast, Regroup, BeatSplitter, Fetcher, ChannelFeeder, ResultFilter, StreamPack)

FRESH = [
    Broadcast(width=100, n=3),
    Regroup(in_bits=512, out_bits=128),
    Regroup(in_bits=32, out_bits=128),
    BeatSplitter(beat_bits=512, word_bits=64, tag_bits=3),
    ResultFilter(key_bits=40, max_k=50),
    Fetcher(nlist=32, channels=3),
    ChannelFeeder(m=16, port_bits=256, pes=3),
    ChannelFeeder(m=48, port_bits=128, pes=2),  # codes of 3 beats (issue 16)
    AxilSplit(n=5, addr_bits=15, window_bits=12),
]
"""One configuration per glue PE (two for regroup: split and gather; two for the feeder: codes within a
beat and codes of several beats), none a calibration point."""
LUT_TOLERANCE, FF_TOLERANCE, ABS_SLACK = 0.15, 0.10, 8
"""Relative tolerance of the calibrated estimate; small blocks get a few cells of slack."""


def test_fresh_configurations_are_not_calibration_points():
    for pe in FRESH:
        assert pe.params() not in [type(pe)(**p).params() for p in pe.calibration_points], pe


@pytest.mark.slow
@pytest.mark.long  # a fresh yosys synthesis against the calibrated model
@pytest.mark.parametrize("pe", FRESH, ids=lambda pe: pe.name)
def test_fresh_synthesis_matches_calibrated_model(pe):
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.lut == pytest.approx(predicted.lut, rel=LUT_TOLERANCE, abs=ABS_SLACK)
    assert measured.ff == pytest.approx(predicted.ff, rel=FF_TOLERANCE, abs=ABS_SLACK)
    assert measured.bram18 == pytest.approx(predicted.bram18, abs=0.01)
    assert measured.dsp == predicted.dsp == 0


def test_select_luts_follow_the_select_tree():
    assert [select_luts(1, r) for r in (1, 2, 4, 8, 16, 32)] == [0, 1, 1, 3, 7, 15]


# name: d, m, nlist, nprobe, K, ivf (PEs, lanes, storage), lut (PEs, lanes, store), pq (PEs, channels), opq
# (the configurations of benchmarks/rtl_resources.py, whose whole designs yosys measured)
CONFIGS = {
    "tiny": (32, 8, 16, 3, 10, (2, 8, "bram"), (2, 8, "bram"), (2, 1), False),
    "small-opq": (64, 8, 32, 4, 10, (2, 16, "bram"), (2, 16, "bram"), (4, 2), True),
}
LONG_QUERY_OPQ = (128, 8, 32, 4, 10, (2, 2, "bram"), (2, 4, "bram"), (2, 1), True)
"""An OPQ design whose rotated query is more words than `fifo_depth` in both stages' lanes."""


def _hw(config: str) -> IvfPqHw:
    d, m, nlist, nprobe, k, ivf, lut, pq, opq = CONFIGS.get(config, LONG_QUERY_OPQ)
    data = random_index(nlist=nlist, n=40 * nlist, d=d, m=m, opq=opq)
    fmt = IvfPqFormat(d=d, m=m, scale=1000.0, ivf_shift=8, lut_shift=10)
    design = pinned_design(data, fmt, nprobe=nprobe, k=k, ivf=ivf, lut=lut, pq=pq)
    return IvfPqHw.from_design(design, load_board(design.board))


ESTIMATED = ("to_ivf", "to_lut", "split")
"""Submodule names of the glue the inventory prices by estimate (`fanns.model.ivfpq.control`): the
front's query regroups and the I/O beat splitters (`split<w>`) depend on several stages' lanes at
once, which the DSE's per-stage option sums cannot express; each group prices its own from its
lanes (tests/model/test_control.py checks the splitters' widths)."""


def _rtl_glue(hw: IvfPqHw) -> tuple[Counter, Counter]:
    """The glue PEs the accelerator's RTL instantiates: (priced exactly, estimated by name)."""
    found, left_out = Counter(), Counter()

    def pe_of(comp):
        if isinstance(comp, BroadcastComponent):
            return Broadcast(Shape.cast(comp.shape).width, comp.n)
        if isinstance(comp, RegroupComponent):
            return Regroup(comp.in_bits, comp.out_bits)
        if isinstance(comp, BeatSplitterComponent):
            return BeatSplitter(comp.beat_bits, comp.word_bits, comp.tag_bits)
        if isinstance(comp, (FetcherComponent, ChannelFeederComponent)):
            return comp.pe
        if isinstance(comp, ResultFilterComponent):
            return ResultFilter(comp.key_bits, comp.max_k)
        if isinstance(comp, StreamPackComponent):
            return StreamPack(comp.item_bits, comp.k)
        return None

    def walk(fragment, name: str) -> None:
        for comp in fragment.origins or ():
            pe = pe_of(comp)
            if pe is not None:
                (left_out if name.startswith(ESTIMATED) else found)[pe] += 1
        for sub, sub_name, *_ in fragment.subfragments:
            walk(sub, sub_name or "")

    walk(Fragment.get(IvfPqAccelerator(hw), None), "")
    return found, left_out


@pytest.mark.parametrize("config", ["tiny", "small-opq"])
def test_design_units_count_the_glue_the_rtl_instantiates(config):
    hw = _hw(config)
    units = stage_model.design_units(hw.ctx, hw.stages)
    priced = Counter()
    for u in units:
        if isinstance(u.pe, GLUE) and not u.label.startswith(("io_split", "query_regroup")):
            priced[u.pe] += u.count
    found, estimated = _rtl_glue(hw)
    assert priced == found
    assert estimated, "the front's query regroups and the I/O splitters are instantiated"
    labels = {u.label for u in units}
    assert {"fetcher", "result_filter", "cell_fork", "table_split", "result_pack", "desc_fifo", "cmd_fifo"} <= labels
    assert sum(u.count for u in units if isinstance(u.pe, ChannelFeeder)) == hw.channels


def test_glue_is_priced_in_the_stage_it_serves():
    hw = _hw("small-opq")
    stage = {u.label: u.stage for u in stage_model.design_units(hw.ctx, hw.stages)}
    assert stage["fetcher"] == stage["table_split"] == stage["feeder[2]"] == stage["desc_fifo"] == "pq_dist"
    assert stage["result_filter"] == stage["cell_fork"] == stage["result_pack"] == "infra"


@pytest.mark.parametrize(
    ("config", "ivf_depth", "lut_depth"), [("tiny", 32, 32), ("small-opq", 32, 32), ("long", 128, 64)]
)
def test_query_fifos_hold_two_rotated_queries_in_rtl_and_model(config, ivf_depth, lut_depth):
    """With OPQ, IVFDist's and BuildLUT's query FIFOs hold two whole rotated queries (d / lanes
    words each; `stages.query_fifo_depth`), in the RTL as in the model's price of them."""
    hw = _hw(config)
    rtl: dict[str, int] = {}

    def walk(fragment, name: str) -> None:
        for comp in fragment.origins or ():
            if isinstance(comp, StreamFifoComponent) and name in ("ivf_qfifo", "lut_qfifo"):
                rtl[name] = comp.depth
        for sub, sub_name, *_ in fragment.subfragments:
            walk(sub, sub_name or "")

    walk(Fragment.get(IvfPqAccelerator(hw), None), "")
    assert rtl == {"ivf_qfifo": ivf_depth, "lut_qfifo": lut_depth}
    priced = {u.stage: u.pe.depth for u in stage_model.design_units(hw.ctx, hw.stages) if u.label == "query_fifo"}
    assert priced["ivf_dist"] == ivf_depth and priced["build_lut"] == lut_depth
