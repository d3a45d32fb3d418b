"""Cycle-level model of one Falcon query processing pipeline (QPP), driven by a traversal trace.

Why: DST trades extra hops for a fuller pipeline; whether that pays off depends on memory latency,
bandwidth, queue costs and the number of BFC units, so latency must be *modelled*, per query, from
what the traversal actually did (`fanns.index.graph_traversal.Trace`). The traversal's result does not
depend on timing (groups commit in launch order), so the model only turns the trace into time.

The model is the generated pipeline (`fanns.arch.graph.top`, docs/graph_architecture.md "The
QPP"), written as event recurrences over the groups in launch order — every stage is first-in
first-out — and checked against its RTL simulation (`tests/sim/test_falcon_rtl.py`). Cycle 0 is
the query's start; times are the cycles in which a handshake happens.

* Read masters (`axi_reader`, one command's beat j leaves at ``cmd + latency + 4 + j``): the
  memory answers `latency` cycles after the AR handshake, one beat per cycle per port; at most
  `outstanding` bursts in flight. A port that gets only a share of its rate (`beat_bytes` below
  the port's width) moves its beats through a channel-time cursor in 1/`RATE_SCALE` cycles: beat
  j of a read starting at channel time s is out in the cycle its share of the channel finishes
  it, ``(s + (j + 1) * time // beats) // RATE_SCALE - 1``, and the next read starts no earlier
  than ``s + time`` — back-to-back reads are spread at the share's rate, an isolated read is not
  delayed by a fraction of a cycle.
* Controller: group 0's tokens ENTRY, CAND(entry), GROUP_END at cycles 1, 2, 3; the result queue
  gets l_max - l blocked inserts (every 2 cycles) from cycle 4. A sync (after the inserter took a
  group's last marker at cycle e): T latched at e + 1 (e + 2 right after an insert); each refill
  round pops mc candidates, one per cycle, the first once the candidate queue has settled
  (``last insert + cand``); a popped candidate's CAND token is pushed the cycle it leaves, the
  round's GROUP_END mc + 1 cycles after its first pop, the next round starts 2 cycles later. A
  round that took fewer than mc candidates ends the refill; so does one that took none (a round
  is spent on it unless mg groups are in flight). The next group's insertion starts 2 cycles
  after the refill; with none in flight the result queue is flushed (once settled) and the k-th
  real key leaves l_max - l + k cycles later: the query's latency.
* Dispatcher: takes one token per cycle (a cycle after its push); a CAND issues its whole
  adjacency row (`row_beats` beats); tokens are then processed in order a cycle later: ENTRY and
  markers in one cycle, a row beat by beat, beat j in max(1, max_u ids of unit u in the beat)
  cycles (each unit takes its ids in lane order, one per cycle).
* BFC unit u: a token enters the Bloom PE (or passes it) one cycle after dispatch, one per
  cycle; the Bloom result comes `L - 1` cycles later; results and bypassing markers are merged in
  order, one per cycle; a new id issues its vector read; `VectorWords` collects the vector's
  beats and hands it to its emitter (a cycle after the last beat, once the previous vector's
  words left), whose words go to the l2dist PE one per cycle (not before the query is loaded);
  the distance leaves `L - 1` cycles after the vector's first word; each distance (or marker) is
  paired with its record in order, one per cycle, and reaches the inserter a cycle later.
* Inserter: from its start cycle, every cycle it takes every unit's group-end marker at the head,
  and the new key of the lowest-numbered unit that has one: a kept key (at most T; the entry's
  key goes to R only) only when neither queue took an insert in the previous cycle, a dropped key
  in any cycle. The group is done in the cycle its last marker is taken.

Occupancy (when the QPP starts its next query): the later of the result queue's flush end + 2,
every unit's Bloom filter cleared after the QUERY_END token (`clear_cycles`) and its last dummy
distance. Across-query mode runs `pipelines` QPPs with one BFC unit each; every fetch engine gets
``min(port_bytes, total bandwidth / engines)`` bytes per cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fanns.choices import ASSUMED_LATENCY_CYCLES
from fanns.errors import FannsError
from fanns.pe.bloom import Bloom
from fanns.pe.l2dist import L2Dist

READER_CYCLES = 4
"""`axi_reader`: a command's first word leaves `latency + 4` cycles after the command (its
transfer model: burst load +1, AR handshake +1, the data FIFO +2)."""
NEVER = -(10**9)
RATE_SCALE = 64
"""Channel time unit of the read masters, 1/64 cycle (`_Reader`; the compiled face uses the same)."""


GRAPH_ACCESS = "page_miss"
"""The row state a graph read meets (`fanns.boards.MemoryLatency`): neighbour rows and vectors of
nodes scattered over gigabytes are read in no order, so a read almost never finds its row open;
with an open-page controller the bank holds another row (a miss), the slowest idle case."""
FALCON_LATENCY_CYCLES = 22
"""Falcon's U250 at 200 MHz: boards/u250.yaml's DDR4 row-miss idle latency, 32 cycles at 300 MHz
(106.7 ns, Shuhai), is 21.3 cycles of 200 MHz, rounded up (`tests/arch/test_falcon_model.py`
checks it against the board file). Idle: queueing under load and the clock crossing between the
kernel and the memory controller's user clock are not in it, so it is a lower bound."""


@dataclass(frozen=True)
class MemorySystem:
    """Off-chip memory seen by the accelerator. Defaults: Falcon's U250 prototype (7.5.1)."""

    freq_mhz: float = 200.0  # Falcon 7.5.1: accelerator clock
    channels: int = 4  # Falcon 7.5.1: four DDR4 channels
    total_gbps: float = 77.0  # Falcon 7.5.1: 77 GB/s in total
    port_bytes: int = 64  # Falcon 7.3.2.3: 64-byte FIFO between a fetch unit and the controller
    outstanding: int = 64  # Falcon 7.3.2.3: up to 64 read requests in flight per fetch unit
    latency_cycles: int = FALCON_LATENCY_CYCLES  # boards/u250.yaml: DDR4 idle row-miss latency at 200 MHz
    source: str = "Falcon thesis 7.5.1 / 7.3.2.3; latency_cycles: Shuhai's DDR4 row-miss latency (boards/u250.yaml)"

    def bytes_per_cycle(self) -> float:
        return self.total_gbps * 1e9 / (self.freq_mhz * 1e6)

    @classmethod
    def from_board(cls, board, freq_mhz: float | None = None, latency_cycles: int | None = None) -> MemorySystem:
        """The memory of a board file (its first memory group: channels, bandwidth, port width;
        its kernel clock unless `freq_mhz` is given). The latency, unless `latency_cycles`
        overrides it, is the group's published idle latency of a read to a row other than the open
        one (`GRAPH_ACCESS`), in whole cycles of the design clock; a group without a published
        measurement falls back to `ASSUMED_LATENCY_CYCLES` and says so in `source`. Outstanding
        requests are not in board files: Falcon's 64 apply."""
        mem = board.memory[0]
        freq = float(freq_mhz or board.clock_mhz)
        where = f"board {board.name} ({mem.describe()}, {freq:g} MHz); outstanding: Falcon 7.3.2.3; "
        if latency_cycles is not None:
            latency, note = latency_cycles, "latency_cycles given"
        elif mem.latency is not None:
            lat = mem.latency
            latency = lat.cycles_at(freq, GRAPH_ACCESS)
            note = (
                f"latency_cycles {latency}: {GRAPH_ACCESS.replace('_', ' ')} {getattr(lat, GRAPH_ACCESS)} cycles at "
                f"{lat.clock_mhz:g} MHz = {lat.ns(GRAPH_ACCESS):.1f} ns ({lat.source})"
            )
        else:
            latency, note = ASSUMED_LATENCY_CYCLES, "latency_cycles assumed (no published latency in the board file)"
        return cls(
            freq_mhz=freq,
            channels=mem.count,
            total_gbps=mem.total_bandwidth_gbps,
            port_bytes=mem.port_bits // 8,
            latency_cycles=latency,
            source=where + note,
        )


@dataclass(frozen=True)
class QppConfig:
    """One query processing pipeline: its BFC units, queues, and its share of the memory.

    `l` is the run-time result queue size, `l_max` the queue's capacity (0: the same as l),
    `cand_size` the candidate queue's capacity and `max_degree` the graph's (the adjacency row
    every neighbour-list fetch reads)."""

    d: int
    elem_bytes: int
    l: int
    k: int
    cand_size: int
    bfc_units: int = 1
    pipelines: int = 1
    bloom: Bloom = Bloom()
    memory: MemorySystem = MemorySystem()
    l_max: int = 0
    max_degree: int = 64

    def __post_init__(self) -> None:
        if self.bfc_units < 1 or self.pipelines < 1:
            raise FannsError("bfc_units and pipelines must be at least 1")
        if self.memory.latency_cycles < 1 or self.memory.outstanding < 1:
            raise FannsError("memory latency and outstanding requests must be at least 1")
        if not self.k <= self.l <= self.capacity:
            raise FannsError(f"the queue sizes need k <= l <= l_max (k={self.k}, l={self.l}, l_max={self.capacity})")
        if self.max_degree < 1:
            raise FannsError("max_degree must be at least 1")

    @classmethod
    def of_design(cls, design, latency_cycles: int, runtime=None, total_gbps: float | None = None) -> QppConfig:
        """One QPP of a `GraphDesign` at its run-time (l, k) (or `runtime`'s), with memory answering
        `latency_cycles` after each AR handshake; `total_gbps` (default: unlimited, every port
        one beat per cycle as in the RTL bench) caps the bandwidth shared by the fetch engines."""
        rt = runtime or design.runtime
        port = design.memory.port_bits // 8
        engines = (design.bfc_units + 1) * (design.pipelines if design.mode == "across" else 1)
        gbps = total_gbps if total_gbps is not None else port * engines * design.clock_mhz / 1e3
        memory = MemorySystem(
            freq_mhz=design.clock_mhz,
            channels=design.channels,
            total_gbps=gbps,
            port_bytes=port,
            outstanding=design.memory.outstanding,
            latency_cycles=latency_cycles,
            source="graph design",
        )
        return cls(
            d=design.graph.d,
            elem_bytes=design.graph.elem_bytes,
            l=rt.l,
            k=rt.k,
            cand_size=design.queues.cand,
            bfc_units=design.bfc_units,
            pipelines=1,
            bloom=design.bloom.pe(),
            memory=memory,
            l_max=design.queues.l_max,
            max_degree=design.graph.max_degree,
        )

    @property
    def capacity(self) -> int:
        return self.l_max or self.l

    @property
    def beat_bytes(self) -> float:
        """Bytes per cycle one fetch engine gets: a port, or its share of the total bandwidth."""
        engines = (self.bfc_units + 1) * self.pipelines
        return min(float(self.memory.port_bytes), self.memory.bytes_per_cycle() / engines)

    def _time(self, beats: int) -> int:
        """Channel time (1/RATE_SCALE cycles) of a read of `beats` whole beats at this engine's rate."""
        return max(beats * RATE_SCALE, math.ceil(RATE_SCALE * beats * self.memory.port_bytes / self.beat_bytes - 1e-9))

    def row_bytes(self) -> int:
        return 64 * math.ceil(4 * (1 + self.max_degree) / 64)

    def row_beats(self) -> int:
        return math.ceil(self.row_bytes() / self.memory.port_bytes)

    def vector_beats(self) -> int:
        return math.ceil(self.d * self.elem_bytes / self.memory.port_bytes)

    def l2dist(self) -> L2Dist:
        lanes = max(1, int(self.memory.port_bytes // self.elem_bytes))
        w = max(x for x in range(1, min(lanes, self.d) + 1) if self.d % x == 0)
        return L2Dist(d=self.d, w=w, vec_bits=8 * self.elem_bytes, signed=True)

    def timing(self) -> dict[str, int]:
        """The integer constants of the recurrences (shared with the compiled model, in this order)."""
        l2 = self.l2dist()
        return {
            "units": self.bfc_units,
            "mem_latency": self.memory.latency_cycles,
            "outstanding": self.memory.outstanding,
            "lanes": self.memory.port_bytes // 4,
            "row_beats": self.row_beats(),
            "row_time": self._time(self.row_beats()),
            "vector_beats": self.vector_beats(),
            "vector_time": self._time(self.vector_beats()),
            "words": l2.words,
            "compute_latency": l2.latency(),
            "bloom_latency": self.bloom.latency(),
            "bloom_clear": self.bloom.clear_cycles(),
            "cand": self.cand_size,
            "l_max": self.capacity,
            "l": self.l,
            "k": self.k,
        }

    def timing_vector(self) -> np.ndarray:
        return np.array(list(self.timing().values()), dtype=np.int64)


@dataclass
class QueryTiming:
    latency: int  # cycles from the query's start to its k-th result
    occupancy: int  # cycles from the query's start to the start of the next query
    launch: np.ndarray  # per group: cycle of its first token
    complete: np.ndarray  # per group: cycle its insertion finished


class _Reader:
    """An `axi_reader` and its memory port: beat leave times of one command after another."""

    def __init__(self, latency: int, window: int):
        self.latency, self.window = latency, window
        self.load = NEVER
        self.r_last = NEVER
        self.busy = NEVER  # channel time (1/RATE_SCALE cycles) the port's share is taken until
        self.lasts: list[int] = []

    def read(self, cmd: int, beats: int, time: int) -> list[int]:
        load = max(cmd + 1, self.load + 1)
        if len(self.lasts) >= self.window:
            load = max(load, self.lasts[-self.window] + 1)
        first = max(load + 1 + self.latency, self.r_last + 1)
        start = max(first * RATE_SCALE, self.busy)
        r = [(start + ((j + 1) * time) // beats) // RATE_SCALE - 1 for j in range(beats)]
        self.busy = start + time
        self.load, self.r_last = load, r[-1]
        self.lasts.append(r[-1])
        return [t + READER_CYCLES - 2 for t in r]


class _Unit:
    """One BFC unit's pipeline state (module docstring)."""

    def __init__(self, p: dict[str, int], q_loaded: int):
        self.p = p
        self.reader = _Reader(p["mem_latency"], p["outstanding"])
        self.front = self.merge = self.pair = NEVER
        self.coll_free = NEVER
        self.last_word = NEVER
        self.q_loaded = q_loaded

    def _distance(self, hand: int) -> int:
        first = max(hand + 1, self.last_word + 1, self.q_loaded)
        self.last_word = first + self.p["words"] - 1
        return first + self.p["compute_latency"] - 1

    def token(self, dispatched: int, kind: str) -> tuple[int, int]:
        """A token written into the unit at `dispatched`: ("check", "new" or "end") -> (cycle it
        reaches the inserter (NEVER for a visited check), cycle it entered the Bloom PE)."""
        p = self.p
        f = max(dispatched + 1, self.front + 1)
        self.front = f
        if kind == "end":
            self.merge = max(f + 1, self.merge + 1)
            self.pair = max(self.merge + 1, self.pair + 1)
            return self.pair + 1, f
        self.merge = max(f + p["bloom_latency"] - 1, self.merge + 1)
        if kind == "check":
            return NEVER, f
        beats = self.reader.read(self.merge, p["vector_beats"], p["vector_time"])
        acc = max(beats[0], self.coll_free)
        for t in beats[1:]:
            acc = max(t, acc + 1)
        hand = max(acc + 1, self.last_word)
        self.coll_free = hand
        self.pair = max(self._distance(hand), self.pair + 1)
        return self.pair + 1, f

    def query_end(self, dispatched: int) -> int:
        """The QUERY_END token: the cycle this unit is ready for the next query."""
        p = self.p
        f = max(dispatched + 1, self.front + 1)
        self.merge = max(f + p["bloom_latency"] - 1, self.merge + 1)
        hand = max(self.merge + 1, self.last_word)
        self.pair = max(self._distance(hand), self.pair + 1)
        return max(f + p["bloom_latency"] - 1 + p["bloom_clear"], self.pair + 1)


def simulate(trace, cfg: QppConfig) -> QueryTiming:
    """Evaluate the pipeline recurrences of the module docstring over one traversal trace."""
    p = cfg.timing()
    units, lanes = p["units"], p["lanes"]
    mg, mc = trace.mg, trace.mc
    G = trace.groups
    lat = p["mem_latency"]
    # The query vector: read at cycle 0, collected, handed over, broadcast, loaded into l2dist.
    q_last = lat + READER_CYCLES + (p["vector_beats"] - 1)
    q_loaded = q_last + 3 + p["words"]
    uu = [_Unit(p, q_loaded) for _ in range(units)]
    lister = _Reader(lat, p["outstanding"])

    pre = p["l_max"] - p["l"]
    last_r = 4 + 2 * (pre - 1) if pre else NEVER
    last_c = NEVER
    ins_start = 2 * pre + 5 if pre else 6
    launch = np.zeros(G, dtype=np.int64)
    complete = np.zeros(G, dtype=np.int64)
    children: list[list[int]] = [[] for _ in range(G)]
    for g in range(1, G):
        children[trace.group_parent[g]].append(g)
    pushes: dict[int, tuple[list[int], int]] = {0: ([1, 2], 3)}  # group: (token push cycles, GROUP_END push)
    intake = NEVER
    d_free = NEVER
    cands, checks = trace.group_cands, trace.group_checks
    kept_pos = 0
    in_flight = 1
    finish = 0
    for g in range(G):
        cand_push, ge_push = pushes.pop(g)
        launch[g] = cand_push[0] if cand_push else ge_push
        # Dispatcher intake: tokens in push order; CAND issues its row read.
        c0, c1 = int(cands[g]), int(cands[g + 1])
        entry = g == 0
        rows = []
        takes = []
        for i, t in enumerate(cand_push):
            intake = max(t + 1, intake + 1)
            takes.append(intake)
            if not (entry and i == 0):
                rows.append(lister.read(intake, p["row_beats"], p["row_time"]))
        intake = max(ge_push + 1, intake + 1)
        ge_take = intake
        # Dispatch: per unit, the (cycle, check index) of its tokens, in order.
        per_unit: list[list[tuple[int, int]]] = [[] for _ in range(units)]
        k0, k1 = int(checks[g]), int(checks[g + 1])
        k = k0
        if entry:
            s = max(takes[0] + 1, d_free)
            per_unit[int(trace.check_node[k]) % units].append((s, k))
            d_free = s + 1
            k += 1
        for ci, c in enumerate(range(c0, c1)):
            deg = int(trace.cand_degree[c])
            beats = rows[ci]
            for j in range(p["row_beats"]):
                s = max(beats[j], d_free)
                lo, hi = max(0, j * lanes - 1), min(deg, (j + 1) * lanes - 1)
                rank = [0] * units
                for pos in range(lo, hi):
                    u = int(trace.check_node[k + pos]) % units
                    per_unit[u].append((s + rank[u], k + pos))
                    rank[u] += 1
                d_free = s + max(1, max(rank))
            k += deg
        s = max(ge_take + 1, d_free)
        d_free = s + 1
        # Units: each token through Bloom, fetch, distance; the group-end marker last.
        n_new = int(np.count_nonzero(trace.check_new[k0:k1]))
        kept = trace.new_kept[kept_pos : kept_pos + n_new]
        new_index = np.cumsum(trace.check_new[k0:k1]) - 1
        kept_pos += n_new
        items: list[list[tuple[int, bool, bool]]] = []  # per unit: (arrival, kept, entry) then the marker
        for u in range(units):
            seq = []
            for t, i in per_unit[u]:
                if trace.check_new[i]:
                    arrive, _ = uu[u].token(t, "new")
                    seq.append((arrive, bool(kept[new_index[i - k0]]), bool(entry and i == k0)))
                else:
                    uu[u].token(t, "check")
            arrive, _ = uu[u].token(s, "end")
            seq.append((arrive, False, False))
            items.append(seq)
        # Inserter.
        t = ins_start
        heads = [0] * units
        ended = [False] * units
        visible = [ins_start] * units  # a unit's next item is visible a cycle after the previous was taken
        while True:
            for u in range(units):
                seq = items[u]
                if not ended[u] and heads[u] == len(seq) - 1 and max(seq[-1][0], visible[u]) <= t:
                    ended[u] = True
            if all(ended):
                break
            pick = next(
                (
                    u
                    for u in range(units)
                    if not ended[u] and heads[u] < len(items[u]) - 1 and max(items[u][heads[u]][0], visible[u]) <= t
                ),
                None,
            )
            if pick is not None:
                _, is_kept, is_entry = items[pick][heads[pick]]
                if is_entry or is_kept:
                    if t >= last_r + 2 and (is_entry or t >= last_c + 2):
                        last_r = t
                        if not is_entry:
                            last_c = t
                        heads[pick] += 1
                        visible[pick] = t + 1
                else:
                    heads[pick] += 1
                    visible[pick] = t + 1
            # Jump to the next cycle in which something can happen.
            nxt = t + 1
            cands_t = [max(items[u][heads[u]][0], visible[u]) for u in range(units) if not ended[u]]
            if pick is None and cands_t:
                nxt = max(nxt, min(cands_t))
            t = nxt
        e = t
        complete[g] = e
        in_flight -= 1
        # Sync and refill.
        r = e + 2 + (1 if last_r == e else 0)
        kids = children[g]
        for child in kids:
            n = int(cands[child + 1] - cands[child])
            a0 = max(r + 1, last_c + p["cand"])
            pushes[child] = ([a0 + 1 + i for i in range(n)], a0 + mc + 1)
            in_flight += 1
            r = a0 + mc + 2
        if not kids or (int(cands[kids[-1] + 1] - cands[kids[-1]]) == mc and in_flight < mg):
            a0 = max(r + 1, last_c + p["cand"])
            sync_end = a0 + mc + 1
        else:
            sync_end = r + 1
        if in_flight == 0:
            finish = sync_end + 1
        ins_start = sync_end + 2
    flush = max(finish, last_r + p["l_max"])
    latency = flush + pre + p["k"]
    done = flush + p["l_max"]
    # QUERY_END: pushed at FINISH, through the dispatcher to every unit.
    intake = max(finish + 1, intake + 1)
    s = max(intake + 1, d_free)
    ready = max([done + 2] + [u.query_end(s) for u in uu])
    return QueryTiming(latency=latency, occupancy=ready, launch=launch, complete=complete)
