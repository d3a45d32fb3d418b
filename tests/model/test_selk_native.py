"""The compiled SelK recurrence (`fanns.model.ivfpq.selk_native`) against its numpy specification."""

import numpy as np
import pytest

from fanns.model.ivfpq.selk import (
    Buffers,
    ChannelFeed,
    LutSource,
    channel_groups,
    recurrence,
)
from fanns.pe.hpq import Hpq
from fanns.pe.hsmpqg import Hsmpqg
from fanns.pe.pq_decode import PqDecode


def _configs(rng: np.random.Generator, nq: int, cells: int) -> list[tuple]:
    """Selection PEs over several channel groupings, with channels from idle to binding; the
    last config shares the third's feed (`_machine` passes each distinct feed once)."""
    out = []
    for sel, ppc, scale in (
        (Hpq(z=6, s=100, key_bits=52), [6], 0.0),
        (Hpq(z=6, s=10, key_bits=52), [2, 2, 2], 3.0),
        (Hsmpqg(z=7, s=5, key_bits=52), [3, 2, 2], 0.7),
        (Hpq(z=1, s=100, key_bits=52), [1], 40.0),
    ):
        cell_cycles = scale * rng.integers(1, 200, size=(nq, cells))
        feed = ChannelFeed(cell_cycles.sum(1) * rng.random(nq), cell_cycles, float(rng.integers(0, 64)))
        out.append((sel, channel_groups(ppc), feed))
    out.append((Hpq(z=7, s=10, key_bits=52), channel_groups([3, 2, 2]), out[2][2]))
    return out


@pytest.mark.parametrize("double_buffer", [True, False])
@pytest.mark.parametrize(
    "lut",
    [
        None,
        LutSource(pes=3, ii=900.0, latency=1100.0, fifo_luts=2, arrival=350.0),  # BuildLUT sets the pace
        LutSource(pes=4, ii=100.0, latency=150.0, fifo_luts=2, arrival=9000.0),  # the queries arrive slowly
    ],
    ids=["no-lut", "slow-lut", "spaced-arrivals"],
)
def test_compiled_recurrence_equals_the_specification(double_buffer, lut):
    """Bit for bit over mixed configs, rounds of several lanes, cells from 1 item to thousands
    (held streams, chain lag and channel-bound cells all occur), with and without a LUT source."""
    rng = np.random.default_rng(7 + double_buffer)
    nq, cells = 12, 9
    items = rng.integers(1, 3000, size=(nq, cells))
    items[rng.random(items.shape) < 0.3] = 1
    configs = _configs(rng, nq, cells)
    pq = PqDecode(m=16, double_buffer=double_buffer)
    buffers = Buffers(keys=32 + pq.depth() + 1, chain=32)
    rounds = [rng.integers(0, nq, size=11) for _ in range(4)]  # one whole block of lanes and a part
    want = recurrence(configs, pq, items, buffers, rounds, lut, compiled=False)
    got = recurrence(configs, pq, items, buffers, rounds, lut)
    assert got.shape == want.shape == (4, len(configs), 11)
    assert np.array_equal(got, want)
