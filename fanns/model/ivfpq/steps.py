"""Latency of a step-wise search (docs/stepwise.md) per sample query: to the first partial result,
to the full result in steps, and of the normal one-shot search, each alone in the accelerator.

Why: HedraRAG starts generation on the first partial result, so what a step-wise accelerator
offers is the first result's latency against the full result's (and the price of the steps
against one normal search). Each step is one run of mode 1 of a face as generated, priced with
the per-query latency model (`fanns.model.ivfpq.latency`, checked against RTL simulation within
2 % for normal runs). The RTL core (`face="rtl"`, `fanns.arch.ivfpq`): a run's probes are the
step's cells only (none: one empty probe); its cell list and seeds are read behind the query and
the seeds merged as SelK's keys leave (`fanns.arch.ivfpq.seed_merge`), off the critical path, so
a step costs what a query of those probes costs (`rtl_step_cycles`; measured in RTL simulation
within 5 %: tests/codegen/test_rtl_stepwise.py). The HLS kernel (`face="hls"`,
`hls/ivfpq_kernel.h`): its probes are the step's cells (in probe order, then `nprobe` - c empty
lists: the kernel's other slots, which still build a LUT and pass one padding item), plus

- the cell-list and seed reads on the I/O port: their beats (`IoLayout.cell_beats`, the result
  layout's beats), behind the query read's memory latency already counted in `io_cycles`;
- the seed merge: `MERGE_PASSES` * K cycles (`merge_seeds`: three pipelined loops of K
  iterations at II = 1, read from the generated source; not measured on hardware here);
- the host link, per step: two transfers (query, cell list and seeds written; K result keys read
  back), each the board's `host.latency_us` (boards/*.yaml), plus the bytes at its
  `host.bandwidth_gbps`; a board without a host link (Zynq: the PS shares the DRAM) pays none.

The normal search pays its own run and the host link once (query in, K keys out). The IVF stage
runs in every step (the kernel passes the query through the IVFDist array to BuildLUT), which
this model charges as the normal search's front latency.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fanns.boards import HostLink
from fanns.design.ivfpq import Stages
from fanns.errors import FannsError
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import stages as stage_model

MERGE_PASSES = 3
"""Cycles per key of `merge_seeds` (read SelK's K keys, read K seeds, merge K: II = 1 each)."""
FACES = ("hls", "rtl")
CELL_BYTES = 4
KEY_BYTES = 8


@dataclass(frozen=True)
class StepLatency:
    """Per step and sample query, microseconds (device run + host link), and the normal search's."""

    cells_per_step: int
    step_us: np.ndarray  # [steps, nq]
    normal_us: np.ndarray  # [nq]

    @property
    def first_us(self) -> np.ndarray:
        """[nq] to the first partial result (the top-K of the first step's cells)."""
        return self.step_us[0]

    @property
    def full_us(self) -> np.ndarray:
        """[nq] to the full result: every step back to back."""
        return self.step_us.sum(0)

    def percentiles(self, ps: tuple[int, ...] = latency_model.PERCENTILES) -> dict[str, dict[int, float]]:
        pick = {"first": self.first_us, "full": self.full_us, "normal": self.normal_us}
        return {name: {p: float(np.percentile(v, p)) for p in ps} for name, v in pick.items()}


def host_us(host: HostLink | None, written: int, read: int) -> float:
    """One run's host-link time: a write and a read transfer (latency each) and their bytes."""
    if host is None:
        return 0.0
    return 2 * host.latency_us + (written + read) / (host.bandwidth_gbps * 1e3)


def step_latency(
    ctx: stage_model.Context,
    stages: Stages,
    probed: np.ndarray,
    cells_per_step: int,
    host: HostLink | None,
    face: str = "hls",
) -> StepLatency:
    """The step-wise search of each sample query's probed cells `probed` [nq, nprobe] (cell sizes,
    probe order) in steps of `cells_per_step` cells on `face` "hls" (every run has the kernel's
    `nprobe` slots, plus the seed merge and list reads) or "rtl" (a run probes the step's cells
    only): see the module docstring."""
    probed = np.asarray(probed, dtype=np.int64)
    nq, nprobe = probed.shape
    if not 1 <= cells_per_step <= nprobe:
        raise FannsError(
            f"{cells_per_step} cells per step: a run of this design scans 1..{nprobe} cells",
            hint=f"choose 1..{nprobe} cells per step",
        )
    port_bytes = ctx.memories[0].port_bits // 8
    io_beats = -(-nprobe * CELL_BYTES // port_bytes) + -(-ctx.k * KEY_BYTES // port_bytes)
    query_bytes = ctx.d * stage_model.stored_elem_bytes(ctx.fmt.vec_bits)
    result_bytes = ctx.k * KEY_BYTES
    step_link = host_us(host, query_bytes + nprobe * CELL_BYTES + result_bytes, result_bytes)
    if face not in FACES:
        raise FannsError(f"unknown face {face!r}", hint=f"one of {', '.join(FACES)}")
    padded = face == "hls"
    extra_us = (io_beats + MERGE_PASSES * ctx.k) / ctx.clock_mhz if padded else 0.0
    steps = []
    for first in range(0, nprobe, cells_per_step):
        part = probed[:, first : first + cells_per_step]
        sizes = np.zeros_like(probed) if padded else np.zeros_like(part)
        sizes[:, : part.shape[1]] = part
        run = latency_model.query_times(ctx, stages, stage_model.Probes.of(sizes)).alone() / ctx.clock_mhz
        steps.append(run + extra_us + step_link)
    normal = latency_model.query_times(ctx, stages, stage_model.Probes.of(probed)).alone() / ctx.clock_mhz
    return StepLatency(cells_per_step, np.stack(steps), normal + host_us(host, query_bytes, result_bytes))


def rtl_step_cycles(ctx: stage_model.Context, stages: Stages, sizes: np.ndarray) -> float:
    """Cycles of one step-wise run of the RTL core (docs/stepwise.md) of one query alone, from
    ap_start to ap_done: a query whose probes are the step's cells (`sizes`, codes per cell in
    list order; none: one empty probe), priced by the per-query latency model."""
    sizes = np.asarray(sizes, dtype=np.int64).reshape(1, -1)
    if sizes.size == 0:
        sizes = np.zeros((1, 1), dtype=np.int64)
    return float(latency_model.query_times(ctx, stages, stage_model.Probes.of(sizes)).alone()[0])
