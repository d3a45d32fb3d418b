"""The step-wise latency model (`fanns.model.ivfpq.steps`, docs/stepwise.md): one step of every
cell is the normal search plus exactly the step's extras (the RTL core's: none on the device);
smaller steps give an earlier first result only where a run probes the step's cells alone (the
RTL core); the host link is priced per step."""

import numpy as np
import pytest

from fanns.boards import HostLink
from fanns.errors import FannsError
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.steps import MERGE_PASSES, host_us, step_latency
from fanns.reference.ivfpq import IvfPqReference

HOST = HostLink(capacity_gb=256, bandwidth_gbps=12.0, latency_us=1.0)


@pytest.fixture(scope="module")
def case():
    data = random_index(nlist=24, n=3000, d=32, m=8, seed=2)
    design = pinned_design(data, random_format(32, 8), nprobe=6, k=10)
    ref = IvfPqReference(data, design.format)
    queries = np.random.default_rng(1).standard_normal((30, 32)).astype(np.float32)
    probed = data.list_sizes[ref.probe(ref.prepare(queries), design.nprobe)]
    return design, stage_model.design_context(design, design.target_board()), probed


def test_one_step_of_every_cell_is_the_normal_search_plus_its_extras(case):
    design, ctx, probed = case
    lat = step_latency(ctx, design.stages, probed, design.nprobe, HOST)
    assert lat.step_us.shape == (1, probed.shape[0])
    beat = ctx.memories[0].port_bits // 8
    io_beats = -(-design.nprobe * 4 // beat) + -(-design.k * 8 // beat)
    query = ctx.d * stage_model.stored_elem_bytes(ctx.fmt.vec_bits)
    extra = (io_beats + MERGE_PASSES * design.k) / ctx.clock_mhz
    link = host_us(HOST, query + 4 * design.nprobe + 8 * design.k, 8 * design.k) - host_us(HOST, query, 8 * design.k)
    assert np.allclose(lat.full_us - lat.normal_us, extra + link)
    assert host_us(None, query, 8 * design.k) == 0  # a board without a host link (Zynq) pays none
    rtl = step_latency(ctx, design.stages, probed, design.nprobe, HOST, face="rtl")
    assert np.allclose(rtl.full_us - rtl.normal_us, link)  # the RTL core's reads and merge are hidden


def test_smaller_steps_give_an_earlier_first_result_only_on_the_rtl_core(case):
    design, ctx, probed = case
    one = step_latency(ctx, design.stages, probed, 1, HOST, face="rtl")
    assert one.step_us.shape[0] == design.nprobe
    assert (one.first_us < one.normal_us).all() and (one.full_us > one.normal_us).all()
    padded = step_latency(ctx, design.stages, probed, 1, HOST)
    assert (padded.first_us >= one.first_us).all() and (padded.full_us >= one.full_us).all()
    assert set(one.percentiles()) == {"first", "full", "normal"}


@pytest.mark.parametrize("cells", [0, 7])
def test_steps_wider_than_a_run_are_refused(case, cells):
    design, ctx, probed = case
    with pytest.raises(FannsError, match="cells per step"):
        step_latency(ctx, design.stages, probed, cells, HOST)
