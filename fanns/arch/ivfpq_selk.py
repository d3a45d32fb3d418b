"""SelK fed by the PQDist PEs: the cycles per query of the two as one coupled machine.

Why: a selection PE's own `interval(n)` assumes streams that deliver n keys at one per cycle
whenever it lets them. In the accelerator its streams are the PQDist PEs, and SelK's level-1
queues refuse a stream's next query until level 2 has collected them (`Hpq.stream_restart`), so
the PE behind a held stream stalls: its scan of the next query cannot overlap SelK's level-2
work beyond what the buffers between them hold. The PEs are also tied to each other: the PEs of
one channel share its feeder (two-entry FIFOs, so none runs ahead of another) and all PEs take
the LUTs through one chain (a LUT word moves on only when every PE has a free bank for it).
Measured on design k100 of benchmarks/rtl_sim.py (2 PEs on one channel, K = 100): both streams
restart only when the second does, 4·z·s1 - 1 cycles into the level-2 collection, and end
together; the old max(PQDist, SelK) model was 32 % low there.

`coupled_intervals` runs, per sample query, the recurrence of that machine for identical queries
back to back until it repeats (the last copy's interval is the steady state):

* the selection PE starts level-2 collection of query r at C_r; the PEs of channel group g
  (contiguous PEs a..b) may deliver keys of query r+1 from R_g = C_r + restart(b), and each
  stream's buffers ahead (key FIFO, datapath registers: `slack` keys) take its first keys
  at any time: item i >= slack of the query is scanned no earlier than R_g - slack + i;
* LUT c is loaded by every PE at once (the chain): its load starts when the previous one is
  done and every PE has freed the bank of cell c - banks, and takes 256 cycles
  (`PqDecode.schedule` otherwise: scan start = max(LUT loaded, previous cell scanned));
* the group's last key is taken at E_g = max(scan end + D + 1, R_g + items - 1, R_g + feed - 1),
  where feed is the channel's time for the items its FIFOs could not take while held;
* C_(r+1) = max(C_r + min_interval, max over groups of E_g - due(a)): level 2 needs stream a's
  queues settled when it reaches them (`Hpq.stream_due`).
"""
from __future__ import annotations

import numpy as np

from fanns.pe.pq_decode import KSUB, PqDecode

REPEATS = 2
"""Copies of a query simulated back to back: the first starts cold, the second is steady (its
LUT loads and scans start where the first copy left them)."""


def channel_groups(pes_per_channel: list[int]) -> list[tuple[int, int]]:
    """(first, last) PE of every channel (contiguous blocks, `PqDistStage.channel_of`)."""
    out, start = [], 0
    for n in pes_per_channel:
        if n:
            out.append((start, start + n - 1))
            start += n
    return out


def coupled_intervals(sel, pq: PqDecode, items: np.ndarray, groups: list[tuple[int, int]], feed: np.ndarray,
                      slack: int) -> np.ndarray:
    """Per sample query, cycles between SelK's queries when the PQDist PEs feed it (module
    docstring). `sel`: the selection PE (`stream_restart`, `stream_due`, `min_interval`);
    `items` [nq, cells]: one PE's items per probed cell; `groups`: (first, last) PE per channel;
    `feed` [nq]: the busiest channel's cycles for a query's items after the hold; `slack`: keys a
    held stream's buffers take."""
    n = np.asarray(items, dtype=np.float64)
    nq, cells = n.shape
    total = n.sum(1)
    cum = np.concatenate([np.zeros((nq, 1)), np.cumsum(n, 1)[:, :-1]], 1)
    restart = np.array([[sel.stream_restart(b)] for _, b in groups], dtype=np.float64)  # [groups, 1]
    due = np.array([[sel.stream_due(a)] for a, _ in groups], dtype=np.float64)
    start = np.zeros(nq)
    ld = np.full(nq, -np.inf)
    se: list[np.ndarray] = []  # per cell so far: [groups, nq] scan end of its last item
    interval = np.zeros(nq)
    for r in range(REPEATS):
        release = start + restart
        for c in range(cells):
            k = r * cells + c
            ls = np.zeros(nq) if k == 0 else ld
            if k >= pq.banks:
                ls = np.maximum(ls, se[k - pq.banks].max(0) + 1)
            ld = ls + KSUB
            ss = ld if k == 0 else np.maximum(ld, se[k - 1] + 1)
            last = cum[:, c] + n[:, c] - 1  # index of the cell's last item within the query
            held = np.where(last >= slack, release - slack + last, -np.inf)
            se.append(np.maximum(ss + n[:, c] - 1, held))
        end = np.maximum(np.maximum(se[-1] + pq.depth() + 1, release + total - 1), release + feed - 1)
        nxt = np.maximum(start + sel.min_interval(), (end - due).max(0))
        interval, start = nxt - start, nxt
    return interval
