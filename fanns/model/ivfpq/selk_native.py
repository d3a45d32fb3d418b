"""The coupled PQDist-SelK recurrence through its compiled face (csrc/selk_recurrence.cpp), via ctypes.

Why: the DSE runs the recurrence of `fanns.model.ivfpq.selk` for every PQDist option over every
sample query and probed cell; at nprobe in the hundreds numpy's temporaries made that minutes
per workload. `selk.recurrence(..., compiled=False)`, in numpy, remains the specification; the
tests check that the two agree bit for bit.
"""

from __future__ import annotations

import ctypes
from functools import cache
from pathlib import Path

import numpy as np

from fanns.datasets.cache import cache_root
from fanns.errors import FannsError
from fanns.model.cpu_baseline import all_threads
from fanns.tools.csim import compile_program

SOURCE = Path(__file__).parent / "csrc" / "selk_recurrence.cpp"


@cache
def _library() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(compile_program([SOURCE], cache_root() / "native", shared=True)))
    p, i32, f64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_double
    shapes, arrays = [i32] * 4, [p] * 7  # configs, width, nq, cells; n .. held
    lib.fanns_selk_recurrence.argtypes = [*shapes, *arrays, i32, i32, p, i32, f64, f64, f64, f64, p, i32, p]
    lib.fanns_selk_recurrence.restype = ctypes.c_int
    return lib


def _f64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def native_recurrence(
    n: np.ndarray,
    chan: np.ndarray,
    feed_of: np.ndarray,
    lead: np.ndarray,
    timed: np.ndarray,
    floor: np.ndarray,
    held: np.ndarray,
    order: np.ndarray,
    pe: tuple[int, int, int, int, int],
    lut: tuple[int, float, float, int, float],
) -> np.ndarray:
    """[rounds, configs, lanes] level-2 starts. `n` [nq, cells]; `chan` [feeds, nq, cells] and
    `feed_of` [configs]: config c's channel cycles are `chan[feed_of[c]]`; `lead` [configs];
    `timed` [PEs, configs, 4] (chain position, group restart, due, own restart); `floor`
    [configs]; `held` [configs, nq]; `order` [rounds, lanes] query indices; `pe` = (banks, LUT load cycles, datapath
    depth, a held stream's buffered keys, chain FIFO words); `lut` = (BuildLUT PEs, 0 for none;
    its interval, latency, FIFO LUTs, arrival pace). The machines run on every core this
    process may use."""
    n, chan, lead, timed, floor, held, lut_row = map(_f64, (n, chan, lead, timed, floor, held, lut))
    order = np.ascontiguousarray(order, dtype=np.int64)
    feed_of = np.ascontiguousarray(feed_of, dtype=np.int64)
    nq, cells = n.shape
    width, configs = timed.shape[:2]
    rounds, lanes = order.shape
    bad_feed = feed_of.shape != (configs,) or feed_of.min() < 0 or feed_of.max() >= chan.shape[0]
    if chan.shape[1:] != (nq, cells) or bad_feed or held.shape != (configs, nq) or timed.shape[2] != 4:
        raise FannsError(f"recurrence inputs disagree: n {n.shape}, chan {chan.shape}, held {held.shape}")
    out = np.empty((rounds, configs, lanes))
    banks, ksub, depth, keys, fifo = pe
    rc = _library().fanns_selk_recurrence(
        configs,
        width,
        nq,
        cells,
        n.ctypes.data,
        chan.ctypes.data,
        feed_of.ctypes.data,
        lead.ctypes.data,
        timed.ctypes.data,
        floor.ctypes.data,
        held.ctypes.data,
        rounds,
        lanes,
        order.ctypes.data,
        banks,
        float(ksub),
        float(depth),
        float(keys),
        float(fifo),
        lut_row.ctypes.data,
        all_threads(),
        out.ctypes.data,
    )
    if rc:
        raise FannsError(f"the compiled SelK recurrence refused its inputs (code {rc})")
    return out
