"""Cycle model of fetch engines sharing memory channels: P QPPs on different queries (across-query
mode), or the engines of one QPP.

Why a step on top of `fanns.model.graph.qpp.simulate`: each QPP's traversal is independent and
its pipeline is the single-QPP model; what the fetch engines share is the memory channels, each
moving `capacity` beats per cycle (1 for a U250 DDR4 channel at 300 MHz: 19.25 GB/s, 64-byte
beats) among all masters mapped to it. The model:

* Channel load: a query's beats per channel from its trace — its candidates' adjacency rows
  (node n lives in graph channel n % C), its new nodes' vectors, its query and result row on the
  I/O channel.
* Sharing: an engine finds a channel busy with the other engines' beats a fraction
  ``rho_other = rho * (1 - 1 / engines)`` of its capacity (rho: the channel's utilisation, every
  engine reads every channel), so its beats come at ``capacity * (1 - rho_other)`` of a port's
  rate, at most a port's and at least an equal split of the channels among all engines (what
  they get when all are always busy). The QPP model runs at that rate (`QppConfig` with the
  matching bandwidth: back-to-back reads spread out, isolated ones are not delayed); the
  utilisation follows from the batch time, so the two are iterated to a fixed point.
* Batch: QPP p runs its block of queries one after the other (its occupancies add up); the
  batch takes the slowest QPP's time, and never less than the busiest channel needs.

The rule the model used before — every engine always getting ``total bandwidth / engines`` —
is the floor here; graph traversal mostly waits on latency, so it was too slow.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from fanns.errors import FannsError
from fanns.model.graph.fast import search_batch
from fanns.model.graph.qpp import QppConfig, simulate

ITERATIONS = 3


def channel_beats(trace, cfg: QppConfig, channels: int, io_channel: int = 0) -> np.ndarray:
    """Beats one query moves on each of `channels` graph channels."""
    beats = np.zeros(channels, dtype=np.int64)
    np.add.at(beats, np.asarray(trace.cand_node) % channels, cfg.row_beats())
    new = np.asarray(trace.check_node)[np.asarray(trace.check_new, dtype=bool)]
    np.add.at(beats, new % channels, cfg.vector_beats())
    beats[io_channel] += io_beats(cfg)
    return beats


def io_beats(cfg: QppConfig) -> int:
    """Beats of a query's own vector and its result row (k_max keys and the statistics)."""
    return cfg.vector_beats() + -(-(8 * cfg.k + 32) // cfg.memory.port_bytes)


def port_share(utilisation: float, engines: int, channels: int, capacity: float = 1.0) -> float:
    """Fraction of a port's rate one of `engines` fetch engines gets on channels of `capacity`
    beats per cycle busy `utilisation` of it (module docstring)."""
    rho_other = utilisation * (1.0 - 1.0 / engines)
    floor = min(1.0, capacity * channels / engines)
    return max(min(1.0, capacity * (1.0 - rho_other)), floor)


def shared_config(cfg: QppConfig, share: float) -> QppConfig:
    """`cfg` (one QPP) with each of its fetch engines at `share` of a port's rate."""
    engines = cfg.bfc_units + 1
    gbps = share * cfg.memory.port_bytes * engines * cfg.memory.freq_mhz / 1e3
    return replace(cfg, pipelines=1, memory=replace(cfg.memory, total_gbps=gbps))


@dataclass
class AcrossTiming:
    batch: int  # cycles of the whole batch (first start to the last QPP's last query)
    latency: np.ndarray  # per query: cycles from its start to its k-th result
    occupancy: np.ndarray  # per query: cycles from its start to its QPP's next query
    utilisation: np.ndarray  # per channel: beats per cycle over the batch, over its capacity
    share: float  # fraction of a port's rate each fetch engine got
    qpp_cycles: np.ndarray  # per QPP: its block's cycles


def across_batch_cycles(
    traces: list,
    cfg: QppConfig,
    blocks: list[tuple[int, int]],
    channels: int,
    io_channel: int = 0,
    capacity: float = 1.0,
) -> AcrossTiming:
    """The batch of `traces` (query i's traversal) run by len(blocks) QPPs of `cfg`, QPP p taking
    queries blocks[p] = (first, count), on `channels` channels of `capacity` beats per cycle."""
    if sum(n for _, n in blocks) != len(traces) or min(n for _, n in blocks) < 0:
        raise FannsError(f"the blocks cover {sum(n for _, n in blocks)} queries, the batch has {len(traces)}")
    beats = np.stack([channel_beats(t, cfg, channels, io_channel) for t in traces]).sum(0)
    engines = len(blocks) * (cfg.bfc_units + 1)
    share = used = 1.0
    for _ in range(ITERATIONS):
        used = share
        qcfg = shared_config(cfg, used)
        timing = [simulate(t, qcfg) for t in traces]
        occ = np.array([t.occupancy for t in timing], dtype=np.int64)
        qpp_cycles = np.array([occ[first : first + n].sum() for first, n in blocks], dtype=np.int64)
        batch = int(max(qpp_cycles.max(), np.ceil(beats.max() / capacity)))
        util = beats / (batch * capacity)
        share = port_share(float(np.dot(util, beats) / beats.sum()), engines, channels, capacity)
    latency = np.array([t.latency for t in timing], dtype=np.int64)
    return AcrossTiming(
        batch=batch, latency=latency, occupancy=occ, utilisation=util, share=used, qpp_cycles=qpp_cycles
    )


def shared_search_batch(
    graph, queries_fx: np.ndarray, cfg, qpps: list[QppConfig], pipelines: list[int], capacity: float, threads: int = 1
):
    """The compiled reference's batch (`fanns.model.graph.fast.search_batch`) timed on each QPP of
    `qpps` (one QPP each, `memory.channels` channels of `capacity` beats per cycle) while
    `pipelines[j]` such QPPs share the channels: a first pass at a port's rate gives the channels'
    utilisation, a second one (only if some engine gets less) runs at the resulting share (one
    step of the fixed point of `across_batch_cycles`: the first pass's shorter time slightly
    overstates the load). Returns the batch and, per QPP, the mean beats per query — throughput
    is at most ``channels * capacity / beats`` queries per cycle."""

    full = [shared_config(q, 1.0) for q in qpps]
    batch = search_batch(graph, queries_fx, cfg, full, threads=threads)
    beats = np.array(
        [float(np.mean(batch.hops * q.row_beats() + batch.visited * q.vector_beats() + io_beats(q))) for q in full]
    )
    shares = []
    for j, q in enumerate(qpps):
        util = pipelines[j] * beats[j] / (q.memory.channels * capacity * float(batch.occupancy[:, j].mean()))
        shares.append(port_share(util, pipelines[j] * (q.bfc_units + 1), q.memory.channels, capacity))
    if min(shares) < 1.0:
        batch = search_batch(
            graph, queries_fx, cfg, [shared_config(q, s) for q, s in zip(qpps, shares)], threads=threads
        )
    return batch, beats
