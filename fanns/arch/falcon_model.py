"""Cycle-level model of one Falcon query processing pipeline (QPP), driven by a traversal trace.

Why: DST trades extra hops for a fuller pipeline; whether that pays off depends on memory latency,
bandwidth, queue costs and the number of BFC units, so latency must be *modelled*, per query, from
what the traversal actually did (`fanns.explore.traversal.Trace`). The traversal's result does not
depend on timing (groups commit in launch order), so the model only turns the trace into time.

The pipeline (Falcon 7.3, Fig. 7.1 and 7.5); every stage is first-in first-out, so one pass over
the groups in launch order evaluates these recurrences exactly (times in cycles):

* controller: launches group g at T_g (T_0 = 0); after the sync of a completed group it pops the
  candidates of each group it launches, `pop_cycles` per candidate, after `sync_cycles` of control.
* S1, neighbour-list fetch (one engine per QPP, `outstanding` requests in flight): candidate c
  issues at ``max(T_g, issue_{c-1} + beats_{c-1}, done_{c-outstanding})`` and its list arrives
  complete at ``issue_c + mem_latency + beats_c``; beats = ceil(4 (1 + degree) / port_bytes).
* dispatch: the ids of each list go to BFC unit ``id % bfc_units``, `bfc_units` ids per cycle.
* S2, Bloom filter per unit (the Bloom PE: II 1, latency L): result at ``in + L``.
* S3, vector fetch per unit for unvisited ids (`outstanding` requests in flight, one vector of
  ceil(bytes / beat) beats at a time on the unit's share of the memory bandwidth).
* S4, distance per unit (the l2dist PE with w = beat bytes / element bytes, so compute matches
  fetch, Falcon 7.3.2.4): start at ``max(vector arrived, previous start + II)``, result at + L.
* S5, queue inserter (one per QPP, C and R in parallel): takes group g's distances in arrival
  order only after the sync of group g-1; a key above Max(R) (latched when the group's insertion
  starts, as the traversal specifies) is dropped in one cycle, a kept key occupies the systolic
  queues for `insert_ii` cycles.
* S6, sync: group g is complete when its last check left the Bloom filter, its last distance was
  inserted and all its lists arrived; the queues are sorted `sort_cycles` after the last
  insertion; then the controller launches the groups the traversal launched at this point.

The query ends after the last sync plus k cycles to stream the results out. The Bloom filter is
cleared afterwards (Bloom PE `query_gap`), which bounds how soon the QPP takes its next query:
`occupancy`. Across-query mode runs `pipelines` QPPs with one BFC unit each; every fetch engine
gets ``min(port_bytes, total bandwidth / engines)`` bytes per cycle.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fanns.errors import FannsError
from fanns.pe.bloom import Bloom
from fanns.pe.l2dist import L2Dist


@dataclass(frozen=True)
class MemorySystem:
    """Off-chip memory seen by the accelerator. Defaults: Falcon's U250 prototype (7.5.1)."""

    freq_mhz: float = 200.0  # Falcon 7.5.1: accelerator clock
    channels: int = 4  # Falcon 7.5.1: four DDR4 channels
    total_gbps: float = 77.0  # Falcon 7.5.1: 77 GB/s in total
    port_bytes: int = 64  # Falcon 7.3.2.3: 64-byte FIFO between a fetch unit and the controller
    outstanding: int = 64  # Falcon 7.3.2.3: up to 64 read requests in flight per fetch unit
    latency_cycles: int = 100  # assumption (not published by Falcon, not measured here): 500 ns at 200 MHz
    source: str = "Falcon thesis 7.5.1 / 7.3.2.3; latency_cycles assumed"

    def bytes_per_cycle(self) -> float:
        return self.total_gbps * 1e9 / (self.freq_mhz * 1e6)

    @classmethod
    def from_board(cls, board, freq_mhz: float | None = None, latency_cycles: int | None = None) -> MemorySystem:
        """The memory of a board file (its first memory group: channels, bandwidth, port width;
        its kernel clock unless `freq_mhz` is given). Latency and outstanding requests are not in
        board files: Falcon's 64 requests and the stated latency assumption apply."""
        mem = board.memory[0]
        return cls(
            freq_mhz=float(freq_mhz or board.clock_mhz),
            channels=mem.count,
            total_gbps=mem.total_bandwidth_gbps,
            port_bytes=mem.port_bits // 8,
            latency_cycles=cls.latency_cycles if latency_cycles is None else latency_cycles,
            source=f"board {board.name} ({mem.describe()}, {board.clock_mhz:g} MHz); outstanding: Falcon 7.3.2.3; "
            + ("latency_cycles given" if latency_cycles is not None else "latency_cycles assumed"),
        )


@dataclass(frozen=True)
class QueueCosts:
    """Per-operation cycles of the systolic priority queues (Falcon 7.3.2.1 where published)."""

    insert_ii: int = 2  # Falcon 7.3.2.1: one insertion per two cycles
    sort_per_slot: int = 1  # Falcon 7.3.2.1: sorted in s - 1 cycles
    pop_cycles: int = 1  # assumption: the head of a sorted register array shifts out in a cycle
    sync_cycles: int = 2  # assumption: controller reads the threshold and decides (two cycles)

    def sort_cycles(self, slots: int) -> int:
        return self.sort_per_slot * max(0, slots - 1)


@dataclass(frozen=True)
class QppConfig:
    """One query processing pipeline: its BFC units, queues, and its share of the memory."""

    d: int
    elem_bytes: int
    l: int
    k: int
    cand_size: int
    bfc_units: int = 1
    pipelines: int = 1
    bloom: Bloom = Bloom()
    memory: MemorySystem = MemorySystem()
    queues: QueueCosts = QueueCosts()

    def __post_init__(self) -> None:
        if self.bfc_units < 1 or self.pipelines < 1:
            raise FannsError("bfc_units and pipelines must be at least 1")
        if self.memory.latency_cycles < 0 or self.memory.outstanding < 1:
            raise FannsError("memory latency must be >= 0 and outstanding requests >= 1")

    @property
    def beat_bytes(self) -> float:
        """Bytes per cycle one vector-fetch engine gets."""
        share = self.memory.bytes_per_cycle() / (self.bfc_units * self.pipelines)
        return min(float(self.memory.port_bytes), share)

    def vector_beats(self) -> int:
        return math.ceil(self.d * self.elem_bytes / self.beat_bytes)

    def list_beats(self, degree: int) -> int:
        return math.ceil(4 * (1 + degree) / min(float(self.memory.port_bytes), self.memory.bytes_per_cycle() / self.memory.channels))

    def l2dist(self) -> L2Dist:
        lanes = max(1, int(self.memory.port_bytes // self.elem_bytes))
        w = max(x for x in range(1, min(lanes, self.d) + 1) if self.d % x == 0)
        return L2Dist(d=self.d, w=w, vec_bits=8 * self.elem_bytes, signed=True)

    def sort_cycles(self) -> int:
        return self.queues.sort_cycles(max(self.l, self.cand_size))

    def timing(self) -> dict[str, int]:
        """The integer constants of the recurrences (shared with the compiled model, in this order)."""
        l2 = self.l2dist()
        return {
            "units": self.bfc_units,
            "mem_latency": self.memory.latency_cycles,
            "outstanding": self.memory.outstanding,
            "vector_beats": self.vector_beats(),
            "compute_ii": l2.ii(),
            "compute_latency": l2.latency(),
            "query_load": l2.words,
            "bloom_latency": self.bloom.latency(),
            "bloom_gap": self.bloom.query_gap(),
            "sort": self.sort_cycles(),
            "insert_ii": self.queues.insert_ii,
            "pop": self.queues.pop_cycles,
            "sync": self.queues.sync_cycles,
            "k": self.k,
        }

    def timing_vector(self, max_degree: int) -> np.ndarray:
        """`timing()` values followed by the list-fetch beats for degrees 0..max_degree."""
        beats = [self.list_beats(deg) for deg in range(max_degree + 1)]
        return np.array(list(self.timing().values()) + beats, dtype=np.int64)


@dataclass
class QueryTiming:
    latency: int  # cycles from the query's arrival to its last result
    occupancy: int  # cycles until the QPP can start its next query (Bloom cleared)
    launch: np.ndarray  # per group: launch cycle
    complete: np.ndarray  # per group: cycle its synchronisation finished


def simulate(trace, cfg: QppConfig) -> QueryTiming:
    """Evaluate the pipeline recurrences of the module docstring over one traversal trace."""
    p = cfg.timing()
    units, window, lat = p["units"], p["outstanding"], p["mem_latency"]
    vbeats, c_ii, c_lat, qload = p["vector_beats"], p["compute_ii"], p["compute_latency"], p["query_load"]
    b_lat, sort = p["bloom_latency"], p["sort"]

    G = trace.groups
    launch = np.zeros(G, dtype=np.int64)
    sync_done = np.zeros(G, dtype=np.int64)
    children = [[] for _ in range(G)]
    for g in range(1, G):
        children[trace.group_parent[g]].append(g)

    list_issue_prev, list_beats_prev = -(10**9), 0
    list_done_hist: list[int] = []
    disp_hist: list[int] = []
    bloom_prev = [-(10**9)] * units
    vf_issue_prev = [-(10**9)] * units
    vf_done_hist: list[list[int]] = [[] for _ in range(units)]
    comp_prev = [-(10**9)] * units
    ins_free = 0
    last_bloom_in = 0
    kept_pos = 0
    check_new = trace.check_new
    for g in range(G):
        t_g = int(launch[g])
        c0, c1 = int(trace.group_cands[g]), int(trace.group_cands[g + 1])
        list_done = {}
        group_done = t_g
        for c in range(c0, c1):
            beats = cfg.list_beats(int(trace.cand_degree[c]))
            issue = max(t_g, list_issue_prev + list_beats_prev)
            if len(list_done_hist) >= window:
                issue = max(issue, list_done_hist[-window])
            done = issue + lat + beats
            list_issue_prev, list_beats_prev = issue, beats
            list_done_hist.append(done)
            list_done[c] = done
            group_done = max(group_done, done)
        arrivals = []
        k0, k1 = int(trace.group_checks[g]), int(trace.group_checks[g + 1])
        for i in range(k0, k1):
            owner = int(trace.check_cand[i])
            ready = t_g if owner < 0 else list_done[owner]
            disp = ready if len(disp_hist) < units else max(ready, disp_hist[-units] + 1)
            disp_hist.append(disp)
            u = int(trace.check_node[i]) % units
            b_in = max(disp + 1, bloom_prev[u] + 1)
            bloom_prev[u] = b_in
            last_bloom_in = max(last_bloom_in, b_in)
            b_out = b_in + b_lat
            group_done = max(group_done, b_out)
            if not check_new[i]:
                continue
            issue = max(b_out, vf_issue_prev[u] + vbeats)
            hist = vf_done_hist[u]
            if len(hist) >= window:
                issue = max(issue, hist[-window])
            vf_issue_prev[u] = issue
            arrived = issue + lat + vbeats
            hist.append(arrived)
            start = max(arrived, comp_prev[u] + c_ii, qload)
            comp_prev[u] = start
            arrivals.append((start + c_lat, len(arrivals)))
        kept = trace.new_kept[kept_pos : kept_pos + len(arrivals)]
        kept_pos += len(arrivals)
        gate = int(sync_done[g - 1]) if g else 0
        ins_free = max(ins_free, gate)
        last_kept = None
        for t, j in sorted(arrivals):
            start = max(t, ins_free)
            ins_free = start + (p["insert_ii"] if kept[j] else 1)
            if kept[j]:
                last_kept = ins_free
        group_done = max(group_done, ins_free, gate)
        ready = group_done if last_kept is None else max(group_done, last_kept + sort)
        t = ready + p["sync"]
        for child in children[g]:
            t += p["pop"] * int(trace.group_cands[child + 1] - trace.group_cands[child])
            launch[child] = t
        sync_done[g] = t
    latency = int(sync_done[-1]) + p["k"]
    occupancy = max(latency, last_bloom_in + p["bloom_gap"])
    return QueryTiming(latency=latency, occupancy=occupancy, launch=launch, complete=sync_done)
