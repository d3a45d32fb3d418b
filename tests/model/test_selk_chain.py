"""The LUT chain in the SelK-PQDist recurrence (`fanns.model.ivfpq.selk`): its FIFOs let the first
PEs run ahead of a held last channel.

The figures are RTL measurements (benchmarks/k100_skew.py --per-query, the DSE's U55C K = 100
design on `zipf_clustered`: IVF64,PQ16, nprobe 4, 17 PQDist PEs on 3 channels, AHPQ SelK, 4
BuildLUT PEs at 1,028 cycles a LUT): per query the items one PE scans per probed cell, and the
cycles between the completions of consecutive queries.
"""

from __future__ import annotations

import numpy as np

from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.selk import LutSource, chain, channel_groups, sequence_starts
from fanns.pe.ahpq import Ahpq
from fanns.pe.pq_decode import PqDecode

ITEMS = np.array(
    [[40, 26, 14, 20], [32, 36, 38, 38], [8, 16, 18, 36], [16, 26, 6, 20], [52, 16, 8, 16], [36, 36, 32, 38]]
)
RTL = np.array([1058, 1038, 1024, 1036, 1062])
"""Measured intervals of queries 1-5; query 4's first cell (52 items a PE) exceeds what a held
SelK stream's buffers take (39 keys)."""


def _intervals(chain_fifo: int) -> np.ndarray:
    pq = PqDecode(m=16)
    sel = Ahpq(z=17, s=100, key_bits=52, target=0.99)
    starts = sequence_starts(
        sel,
        pq,
        ITEMS,
        channel_groups([6, 6, 5]),
        np.zeros(len(ITEMS)),
        stage_model.selk_slack(pq),
        LutSource(4, 1028.0, 1035.0, 2),
        np.arange(len(ITEMS)),
        chain_fifo,
    )
    return np.diff(starts)


def test_a_held_first_cell_costs_what_rtl_measured_with_the_chain_fifos():
    got = _intervals(stage_model.FIFO_DEPTH)
    assert np.all(np.abs(got - RTL) <= 0.02 * RTL), got
    # every PE loading each LUT at once (no chain FIFOs) stalls query 4 by ~200 cycles
    lockstep = _intervals(0)
    assert lockstep[3] > 1.15 * RTL[3]
    assert np.allclose(lockstep[[0, 1, 2, 4]], got[[0, 1, 2, 4]], atol=16)


def test_chain_bounds_the_lead_of_earlier_pes():
    # [configs, PEs, lanes]: PE positions 0, 5, 16 on their own ready at 0, 0, 600
    ld = np.array([[[0.0], [0.0], [600.0]]])
    position = np.array([[[0.0], [5.0], [16.0]]])
    real = np.ones((1, 3, 1), dtype=bool)
    out = chain(ld, position, real, np.array([2]), 32)
    assert out[0, :, 0].tolist() == [600 - 32 * 16, 600 - 32 * 11, 600]
    # a later PE never loads before an earlier one; no FIFO room: all at once
    assert chain(ld[:, ::-1], position, real, np.array([2]), 32)[0, :, 0].tolist() == [600, 600, 600]
    assert chain(ld, position, real, np.array([2]), 0)[0, :, 0].tolist() == [600, 600, 600]
    # padding entries copy the last real PE and constrain nothing
    padded = chain(ld, position, np.array([[[True], [True], [False]]]), np.array([1]), 32)
    assert padded[0, :, 0].tolist() == [0, 0, 0]
