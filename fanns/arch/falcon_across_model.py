"""Cycle model of an across-query accelerator: P QPPs on different queries sharing the channels.

Why a separate step on top of `fanns.arch.falcon_model.simulate`: each QPP's traversal is
independent and its pipeline is the single-QPP model; what the QPPs share is the memory
channels, each moving one beat per cycle among all masters mapped to it. The model:

* Channel load: a query's beats per channel from its trace — its candidates' adjacency rows
  (node n lives in graph channel n % C), its new nodes' vectors, its query and result row on the
  I/O channel.
* Sharing: a master of QPP p finds channel c busy with the other masters' beats a fraction
  ``rho_other`` of the cycles, so its beats arrive ``1 / (1 - rho_other)`` times as far apart
  as on a channel of its own. The QPP model runs with that port rate (`QppConfig` with the
  channel's bandwidth, `port_bytes * (1 - rho_other)` per cycle per fetch engine); the channel
  utilisation follows from the batch time, so the two are iterated to a fixed point.
* Batch: QPP p runs its block of queries one after the other (its occupancies add up); the
  batch takes the slowest QPP's time, and never less than the busiest channel's beats.

With all fetch engines always busy this reduces to every engine getting an equal share of the
channel (the static ``total bandwidth / engines`` rule the model used before, which was too slow
when the engines are mostly waiting on latency, as graph traversal's are).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from fanns.arch.falcon_model import QppConfig, simulate
from fanns.errors import FannsError

ITERATIONS = 4


def channel_beats(trace, cfg: QppConfig, channels: int, io_channel: int = 0) -> np.ndarray:
    """Beats one query moves on each of `channels` graph channels."""
    beats = np.zeros(channels, dtype=np.int64)
    np.add.at(beats, np.asarray(trace.cand_node) % channels, cfg.row_beats())
    new = np.asarray(trace.check_node)[np.asarray(trace.check_new, dtype=bool)]
    np.add.at(beats, new % channels, cfg.vector_beats())
    result_beats = -(-(8 * cfg.k + 32) // cfg.memory.port_bytes)
    beats[io_channel] += cfg.vector_beats() + result_beats
    return beats


@dataclass
class AcrossTiming:
    batch: int  # cycles of the whole batch (first start to the last QPP's last query)
    latency: np.ndarray  # per query: cycles from its start to its k-th result
    occupancy: np.ndarray  # per query: cycles from its start to its QPP's next query
    utilisation: np.ndarray  # per channel: beats per cycle over the batch
    qpp_cycles: np.ndarray  # per QPP: its block's cycles


def across_batch_cycles(traces: list, cfg: QppConfig, blocks: list[tuple[int, int]], channels: int,
                        io_channel: int = 0) -> AcrossTiming:
    """The batch of `traces` (query i's traversal) run by len(blocks) QPPs of `cfg`, QPP p taking
    queries blocks[p] = (first, count), on `channels` channels of one beat per cycle each."""
    if sum(n for _, n in blocks) != len(traces):
        raise FannsError(f"the blocks cover {sum(n for _, n in blocks)} queries, the batch has {len(traces)}")
    port = cfg.memory.port_bytes
    beats = np.stack([channel_beats(t, cfg, channels, io_channel) for t in traces])
    owner = np.concatenate([np.full(n, p, dtype=np.int64) for p, (_, n) in enumerate(blocks)])
    rho_other = np.zeros(len(blocks))
    engines = cfg.bfc_units + 1
    floor = min(1.0, channels / (len(blocks) * engines))  # every engine always busy: an equal split
    for _ in range(ITERATIONS):
        lat = np.zeros(len(traces), dtype=np.int64)
        occ = np.zeros(len(traces), dtype=np.int64)
        for p, (first, n) in enumerate(blocks):
            share = max(1.0 - rho_other[p], floor)
            gbps = share * port * engines * cfg.memory.freq_mhz / 1e3
            qcfg = replace(cfg, pipelines=1, memory=replace(cfg.memory, channels=channels, total_gbps=gbps))
            for i in range(first, first + n):
                t = simulate(traces[i], qcfg)
                lat[i], occ[i] = t.latency, t.occupancy
        qpp_cycles = np.array([occ[first : first + n].sum() for first, n in blocks], dtype=np.int64)
        batch = int(max(qpp_cycles.max(), beats.sum(0).max()))
        util = beats.sum(0) / batch
        # The others' load on the channels this QPP uses, weighted by how much it uses each.
        for p in range(len(blocks)):
            own = beats[owner == p].sum(0) / batch
            weight = own / max(own.sum(), 1e-12)
            rho_other[p] = float(np.dot(weight, util - own))
    return AcrossTiming(batch=batch, latency=lat, occupancy=occ, utilisation=util, qpp_cycles=qpp_cycles)
