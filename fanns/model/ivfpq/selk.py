"""SelK fed by the PQDist PEs: the cycles per query of the two as one coupled machine.

Why: a selection PE's own `interval(n)` assumes streams that deliver n keys at one per cycle
whenever it lets them. In the accelerator its streams are the PQDist PEs, and SelK's level-1
queues refuse a stream's next query until level 2 has collected them (`Hpq.stream_restart`), so
the PE behind a held stream stalls: its scan of the next query cannot overlap SelK's level-2
work beyond what the buffers between them hold. The PEs are also tied to each other: the PEs of
one channel share its feeder (two-entry FIFOs, so none runs ahead of another) and all PEs take
the LUTs through one chain (a LUT word moves on only when the next PE's chain FIFO has room).
Measured on design k100 of benchmarks/rtl_sim.py (2 PEs on one channel, K = 100): both streams
restart only when the second does, 4·z·s1 - 1 cycles into the level-2 collection, and end
together; the old max(PQDist, SelK) model was 32 % low there.

`coupled_intervals` runs, per sample query, the recurrence of that machine for `REPEATS`
identical queries back to back (the last copy's interval is the steady state):

* the selection PE starts level-2 collection of query r at C_r; stream p takes keys of query
  r+1 from its own restart C_r + restart(p), one a cycle, and each stream's buffers ahead (key
  FIFO, datapath registers: h = `Buffers.keys` keys) take its first keys at any time; but PE p
  of the channel group of PEs a..b scans item i >= h of the query no earlier than R_p - h + i,
  R_p = C_r + restart(b): the group's feeder serves its PEs in turn, so none gets items while
  another is held;
* LUT c reaches PE p through the chain: its load takes 256 / W cycles (`PqDecode.load_cycles`,
  W LUT words a beat) once the PE's previous load
  is done and it has freed the bank of cell c - banks (`PqDecode.schedule`: scan start =
  max(LUT loaded, previous cell scanned)); PE p loads no word before PE p-1, and runs at most
  FIFO_DEPTH·(q - p) words ahead of a later PE q (the chain FIFOs, `chain`). So when the PEs of
  the last channel, which restart last, are held, the first PEs load and scan on, and SelK's
  level 2, which reaches stream q 4·s1·q cycles after stream 0, takes the lag. The PEs timed
  are the first and the last of each dominant group (`dominant_groups`, `timed_pes`);
* the busiest channel delivers the cells' beats in order (`ChannelFeed`): cell c's beats take its
  channel cycles, starting no earlier than the last cell's and no earlier than `lead` cycles
  before the PEs start scanning cell c (its reader's FIFO is all that runs ahead of them), and
  a cell's scan ends no earlier than its last beat. So a channel-bound scan delays the LUT
  loads behind it (a bank is freed only when its cell is scanned), and a channel cannot bank
  the cycles its PEs spend waiting for a LUT beyond its FIFO;
* PE p's last key is taken at E_p = max(scan end + D + 1, C_r + restart(p) + items - 1,
  R_p + feed - 1), where feed is the channel's time for the items its FIFOs could not take
  while held;
* C_(r+1) = max(C_r + min_interval, max over PEs of E_p - due(p)): level 2 needs stream p's
  queues settled when it reaches them (`Hpq.stream_due`).

Until the channel entered the scans (`ChannelFeed.cells`), it was only a floor on each query, as
in the PQDist stage model: a channel-bound query's next LUT loads then overlapped its scan, and
channel-bound designs with near-tied stages measured 13-18 % slower in RTL than the model said
(the 784-d U55C design of docs/datasets.md: +13.08 %, now +2.8 %; tests/codegen/test_channel_bound.py).
Until each stream took its buffered keys from its own restart (the group's restart bounds only
the scans), a stream held the keys of its buffers until its group's last stream restarted: on
a design whose PEs scan about as many codes as the buffers hold (the design fuzz's draw 14:
7 PEs on 3 channels, 90-140 codes a PE per query, 38 keys buffered) the model was 8.4 %
pessimistic (RTL 138.9 cycles a query, model 151.7; now 138.9).
Until the chain FIFOs were modelled every PE loaded each LUT at once, so a held last channel
stalled all PEs: on the DSE's K = 100 design for `zipf_clustered` (tests/codegen/test_k100_skew.py,
17 PEs on 4 channels) the model was 5.5 % pessimistic (RTL 1,041.4 cycles a query, model 1,102.2;
now 1,053.0, -1.1 %). An earlier version timed every PE of every group and made the DSE 16x
slower; timing only `timed_pes` makes it about 1.5x slower (benchmarks/dse.py: 104 -> 162 s).
Not modelled: LUTs arriving late from BuildLUT (its own stage interval), the channels of groups
other than the busiest (each group is timed as the busiest), and the stages in front of BuildLUT
holding a query's cells back from the fetcher. Checked against RTL simulation: tests/codegen/test_rtl.py
(within 5 %), benchmarks/rtl_sim.py.

`recurrence` runs the machine compiled (`fanns.model.ivfpq.selk_native`), each (config, query)
on its own with the same float64 operations as the numpy specification (`compiled=False`), bit
for bit the same (tests/model/test_selk_native.py). The DSE and the sequence model use the
compiled one: at nprobe 383 (text-384's OPQ16,IVF512,PQ16, 7,982 PQDist x
SelK options) numpy took 570 s of the options' 586 s on one core.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from fanns.model.ivfpq.selk_native import native_recurrence
from fanns.pe.pq_decode import PqDecode

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


def dominant_groups(groups: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The groups that can set the interval: the last (it restarts last, so its scans set the
    LUT chain's pace) and the first of each size. Of two groups of one size the later restarts
    4·s1·(its offset) later and is due as much later, and its last key is no later by more than
    that (every constraint on it moves at most one cycle per cycle of its restart)."""
    keep, sizes = [], set()
    for a, b in groups:
        if b - a not in sizes:
            sizes.add(b - a)
            keep.append((a, b))
    return keep + ([groups[-1]] if groups[-1] not in keep else [])


@dataclass(frozen=True)
class ChannelFeed:
    """The busiest PQ channel as its PEs' source: `held` [nq] its cycles for a query's items
    that the held streams' buffers could not take (`fanns.model.ivfpq.stages.pq_feed_cycles`);
    `cells` [nq, cells] its cycles for the beats of each probed cell; `lead`: the cycles its
    reader can run ahead of the PEs (`fanns.model.ivfpq.memory.reader_lead`)."""

    held: np.ndarray
    cells: np.ndarray
    lead: float


@dataclass(frozen=True)
class Buffers:
    """What the FIFOs between the PQDist PEs and SelK hold: `keys` a held stream's buffers take
    (its key FIFO and the PE's datapath registers), `chain` words one LUT chain FIFO takes."""

    keys: int
    chain: int


def coupled_intervals(
    sel, pq: PqDecode, items: np.ndarray, groups: list[tuple[int, int]], feed: ChannelFeed, buffers: Buffers
) -> np.ndarray:
    """Per sample query, cycles between SelK's queries when the PQDist PEs feed it (module
    docstring). `sel`: the selection PE (`stream_restart`, `stream_due`, `min_interval`);
    `items` [nq, cells]: one PE's items per probed cell; `groups`: (first, last) PE per channel;
    `feed`: the busiest channel; `buffers`: the FIFOs' capacities."""
    return coupled_intervals_many([(sel, groups, feed)], pq, items, buffers)[0]


def coupled_intervals_many(configs: list[tuple], pq: PqDecode, items: np.ndarray, buffers: Buffers) -> np.ndarray:
    """`coupled_intervals` for several (sel, groups, feed) at once, [configs, nq] (the DSE
    tries every channel count and selection PE for the same PEs: one vectorised recurrence)."""
    nq = np.asarray(items).shape[0]
    starts = recurrence(configs, pq, items, buffers, [np.arange(nq)] * REPEATS)
    return starts[-1] - starts[-2] if REPEATS > 1 else starts[-1]


FLOOR_MARGIN = 1e-9
"""`interval_floors` is lowered by this fraction: the machine adds the same terms in another order
(from the previous start), so its float result may round below the floor's own by an ulp or so."""


def interval_floors(configs: list[tuple], items: np.ndarray) -> np.ndarray:
    """[configs] a lower bound of each config's mean interval (`coupled_intervals_many(...).mean(1)`)
    without running the machine; `configs`: (sel, groups, held [nq]: `ChannelFeed.held`).

    Why: the DSE times thousands of PQDist x SelK options of which few survive the Pareto pruning;
    one whose floor is already no better than an option timed before it is never timed (see
    `fanns.model.ivfpq.options.back_options`). The floor, per query, from the recurrence's last
    step: level 2 starts the next query no sooner than `min_interval` after this one, and no
    sooner than each timed PE p's last key less its due, a key taken no earlier than the stream's
    own restart plus its items (`own(p) + items - 1`) and no earlier than its group's restart plus
    the channel's time after a hold (`restart(p) + held - 1`)."""
    total = np.asarray(items, dtype=np.float64).sum(1)
    if not configs:
        return np.zeros(0)
    rows = {id(held): held for _, _, held in configs}  # configs share a channel's feed
    index = {key: i for i, key in enumerate(rows)}
    helds = np.stack([np.asarray(h, dtype=np.float64) for h in rows.values()])
    own, group, least = np.array([_restart_bounds(sel, tuple(groups)) for sel, groups, _ in configs]).T
    which = np.array([index[id(held)] for _, _, held in configs])
    per_query = np.maximum(own[:, None] + total[None, :] - 1, group[:, None] + helds[which] - 1)
    return np.maximum(per_query, least[:, None]).mean(1) * (1 - FLOOR_MARGIN)


@cache
def _restart_bounds(sel, groups: tuple[tuple[int, int], ...]) -> tuple[float, float, float]:
    """(max own restart - due, max group restart - due, minimum interval) over the PEs the
    recurrence times (`interval_floors`): the same for every query."""
    pes = timed_pes(dominant_groups(list(groups)))
    own = max(sel.stream_restart(q) - sel.stream_due(q) for q, _ in pes)
    group = max(sel.stream_restart(b) - sel.stream_due(q) for q, b in pes)
    return float(own), float(group), float(sel.min_interval())


@dataclass(frozen=True)
class LutSource:
    """BuildLUT as the producer of the LUTs (`fanns.arch.ivfpq.lut`): `pes` PEs, PE k mod P
    builds the k-th LUT of the run (the probes of the queries in order, across queries), one LUT
    every `ii` cycles, the first `latency` cycles after its input; each PE writes into its own
    FIFO of `fifo_luts` whole LUTs and stalls when it is full. The probes of the run's r-th query
    reach it no earlier than r·`arrival` cycles after the first's: the pace of the stages in front
    (their largest interval), which spaces the first LUTs of a run over the PEs when BuildLUT has
    more PEs than a query has probes."""

    pes: int
    ii: float
    latency: float
    fifo_luts: int
    arrival: float = 0.0


def sequence_starts(
    sel,
    pq: PqDecode,
    items: np.ndarray,
    groups: list[tuple[int, int]],
    feed: ChannelFeed,
    buffers: Buffers,
    lut: LutSource,
    order: np.ndarray,
) -> np.ndarray:
    """The cycle at which SelK starts the level-2 collection of each query of `order` (indices
    into `items` / `feed`), the queries submitted back to back in that order: the recurrence of
    the module docstring run over the sequence instead of over copies of one query, with the LUTs
    built by `lut`. `order` [queries] is one sequence, [queries, lanes] as many independent ones
    (run side by side in one vectorised recurrence); the result has its shape. Differences of
    these are the accelerator's intervals."""
    order = np.asarray(order, dtype=np.int64)
    rounds = list(order.reshape(order.shape[0], -1))
    return recurrence([(sel, groups, feed)], pq, items, buffers, rounds, lut)[:, 0, :].reshape(order.shape)


def timed_pes(groups: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The PEs the recurrence times, as (position in the LUT chain, the group's last PE, whose
    restart its scans wait for: the feeder serves its PEs in turn): the first and the last PE of every
    group. The PEs between have the same work and restart and lie between the two in the chain;
    level 2 wants the first's keys earliest (`stream_due`), the last may lag most when later
    groups hold the chain. The last group's last PE is left out: no later PE holds it, so it
    loads and ends with the group's first, which is due earlier."""
    return [(q, b) for i, (a, b) in enumerate(groups) for q in (sorted({a, b}) if i < len(groups) - 1 else [a])]


def chain(ld: np.ndarray, position: np.ndarray, fifo: int) -> np.ndarray:
    """[PEs, configs, lanes] when each PE has loaded a LUT through the chain, from `ld`, when it
    would have on its own (its previous LUT, its free bank; the first PE: the LUT built). A PE
    loads no word before the PE ahead of it in the chain passed it on, and takes a word only
    while its successor's chain FIFO of `fifo` words has room (`fanns.arch.ivfpq.scan`), so PE
    x runs at most `fifo`·(y - x) words ahead of a later PE y: its load ends no earlier than
    y's minus that many cycles. `position` [PEs, configs, 1]: each entry's place in the chain.
    (A loop over the few PEs, each a contiguous slice: numpy's `accumulate` is far slower here.)"""
    ld = ld.copy()
    for x in range(1, ld.shape[0]):
        np.maximum(ld[x], ld[x - 1], out=ld[x])
    behind = ld - fifo * position
    for x in range(ld.shape[0] - 2, -1, -1):  # max over y >= x
        np.maximum(behind[x], behind[x + 1], out=behind[x])
    return np.maximum(ld, behind + fifo * position)  # still ascending: PE x gains more from a y than PE x - 1


@dataclass(frozen=True)
class _Machine:
    """The recurrence's inputs as arrays (`_machine`): the shared form of the numpy
    specification and the compiled face."""

    n: np.ndarray  # [nq, cells] one PE's items per probed cell
    chan: np.ndarray  # [feeds, nq, cells] the busiest channel's cycles per cell, per distinct feed
    feed_of: np.ndarray  # [configs] each config's row of `chan` (configs often share one feed)
    lead: np.ndarray  # [configs] how far the channel's reader runs ahead
    timed: np.ndarray  # [PEs, configs, 4]: chain position, group restart, due, own restart of every timed PE
    floor: np.ndarray  # [configs] the selection PE's minimum interval
    held: np.ndarray  # [configs, nq] the channel's cycles after a hold (`ChannelFeed.held`)


def _machine(configs: list[tuple], items: np.ndarray) -> _Machine:
    n = np.asarray(items, dtype=np.float64)
    distinct = {id(f): f for _, _, f in configs}  # insertion order: a feed's row is its first config's rank
    rows = {key: row for row, key in enumerate(distinct)}
    feed_of = np.array([rows[id(f)] for _, _, f in configs], dtype=np.int64)
    chan = np.stack([np.broadcast_to(f.cells, n.shape) for f in distinct.values()])
    lead = np.array([f.lead for _, _, f in configs], dtype=np.float64)
    pes = [timed_pes(dominant_groups(groups)) for _, groups, _ in configs]
    width = max(len(e) for e in pes)
    pes = [e + [e[-1]] * (width - len(e)) for e in pes]  # a padding entry repeats the last PE (same maxima)
    timed = np.array(
        [
            [(q, sel.stream_restart(b), sel.stream_due(q), sel.stream_restart(q)) for q, b in e]
            for (sel, _, _), e in zip(configs, pes)
        ],
        dtype=np.float64,
    ).transpose(1, 0, 2)
    floor = np.array([sel.min_interval() for sel, _, _ in configs], dtype=np.float64)
    held = np.stack([np.broadcast_to(np.asarray(f.held, dtype=np.float64), (n.shape[0],)) for _, _, f in configs])
    return _Machine(n, chan, feed_of, lead, timed, floor, held)


def recurrence(
    configs: list[tuple],
    pq: PqDecode,
    items: np.ndarray,
    buffers: Buffers,
    rounds: list[np.ndarray],
    lut: LutSource | None = None,
    compiled: bool = True,
) -> np.ndarray:
    """[rounds, configs, queries per round]: the level-2 start of every round's queries. Round r
    takes the queries `rounds[r]` (indices into `items`; the same count every round) right
    after round r-1's, one query per lane. Without `lut` the LUTs are there when a bank is free
    (the steady state of a query repeated, where BuildLUT's own interval is a separate stage);
    with it, LUT c of a round is complete no earlier than its BuildLUT PE has built it
    (`LutSource.ii` after its previous LUT, `LutSource.latency` after round r's probes arrived
    at r·`LutSource.arrival`) and no earlier than the PE's FIFO had room for it (the same PE's
    LUT `fifo_luts` back fully loaded into the PQDist banks). Run compiled
    (`fanns.model.ivfpq.selk_native`), or with `compiled=False` in numpy, the specification:
    the same result, bit for bit."""
    mach = _machine(configs, items)
    if not compiled:
        return _numpy_recurrence(mach, pq, buffers, rounds, lut)
    source = (0, 0.0, 0.0, 0, 0.0) if lut is None else (lut.pes, lut.ii, lut.latency, lut.fifo_luts, lut.arrival)
    return native_recurrence(
        mach.n,
        mach.chan,
        mach.feed_of,
        mach.lead,
        mach.timed,
        mach.floor,
        mach.held,
        np.stack(rounds),
        (pq.banks, pq.load_cycles, pq.depth(), buffers.keys, buffers.chain),
        source,
    )


def _numpy_recurrence(
    mach: _Machine, pq: PqDecode, buffers: Buffers, rounds: list[np.ndarray], lut: LutSource | None
) -> np.ndarray:
    """`recurrence` in numpy, vectorised over configs and lanes: the specification."""
    n, chan, feed = mach.n, mach.chan[mach.feed_of], mach.held[None]
    lead, floor = mach.lead[:, None], mach.floor[:, None]
    cells, width = n.shape[1], mach.timed.shape[0]
    total = n.sum(1)
    cum = np.concatenate([np.zeros((n.shape[0], 1)), np.cumsum(n, 1)[:, :-1]], 1)
    position, restart, due, own = (mach.timed[:, :, i, None] for i in range(4))  # each [PEs, configs, 1]
    lanes = (mach.timed.shape[1], len(rounds[0]))
    start = np.zeros(lanes)
    ld = np.zeros((width, *lanes))  # per PE: when it has loaded its latest LUT
    fed = np.zeros(lanes)  # the busiest channel's last beat of the latest cell
    se: list[np.ndarray] = []  # the last `banks` cells: [PEs, configs, lanes] scan end of their last item
    built = [np.full(lanes, lut.latency - lut.ii) for _ in range(lut.pes)] if lut else []
    loaded: list[list[np.ndarray]] = [[] for _ in built]  # per BuildLUT PE: load-done times of its LUTs in its FIFO
    out = []
    k = 0
    for r, idx in enumerate(rounds):
        release = start[None] + restart
        for c in range(cells):
            ld = (ld if k < pq.banks else np.maximum(ld, se[-pq.banks] + 1)) + pq.load_cycles
            if lut:
                p = k % lut.pes  # LUT k of the run, across queries
                built[p] = np.maximum(built[p] + lut.ii, r * lut.arrival + lut.latency)
                if len(loaded[p]) == lut.fifo_luts:
                    built[p] = np.maximum(built[p], loaded[p][0] + 1)
                ld[0] = np.maximum(ld[0], built[p] + 1)
            if width > 1:
                ld = chain(ld, position, buffers.chain)
            if lut:
                loaded[p] = (loaded[p] + [ld[0]])[-lut.fifo_luts :]
            ss = ld if k == 0 else np.maximum(ld, se[-1] + 1)
            last = cum[idx, c] + n[idx, c] - 1  # index of the cell's last item within the query
            held = np.where(last >= buffers.keys, release - buffers.keys + last, -np.inf)
            fed = np.maximum(fed, ss.max(0) - lead) + chan[:, idx, c]
            se = (se + [np.maximum(np.maximum(ss + n[idx, c] - 1, held), fed[None])])[-pq.banks :]
            k += 1
        taken = start[None] + own + total[idx] - 1  # the stream's keys, one a cycle from its own restart
        end = np.maximum(np.maximum(se[-1] + pq.depth() + 1, taken), release + feed[:, :, idx] - 1)
        start = np.maximum(start + floor, (end - due).max(0))
        out.append(start)
    return np.stack(out)
