"""Named inference accelerators and CPU retrieval servers, with the source of every figure.

Why a table: a RAG description names its hardware (`accelerator: xpu-c`, `cpu: epyc-milan`)
instead of repeating datasheet figures, and the figures the RAGO comparison rests on are the
paper's own. Peak FLOP/s are dense (no structured sparsity) at the precision each source names;
memory bandwidth and capacity are the device's HBM. A description may instead give a mapping
with its own figures (`fanns.model.ivfpq.rag.schema`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fanns.errors import FannsError


@dataclass(frozen=True)
class Accelerator:
    """One inference chip: peak FLOP/s, memory bandwidth (bytes/s) and capacity (bytes)."""

    name: str
    flops: float
    bandwidth: float
    memory: float
    source: str


@dataclass(frozen=True)
class CpuServer:
    """One retrieval server for RAGO's bytes-scanned roofline: `cores` each scanning PQ codes at
    `core_scan` bytes/s, memory bandwidth `bandwidth` (bytes/s) of which `efficiency` is usable,
    `memory` bytes holding the database shard."""

    name: str
    cores: int
    core_scan: float
    bandwidth: float
    efficiency: float
    memory: float
    source: str

    @property
    def scan_rate(self) -> float:
        """Bytes/s the whole server scans with every core busy: the lower of its cores' rate and
        its usable memory bandwidth."""
        return min(self.cores * self.core_scan, self.bandwidth * self.efficiency)


RAGO_TABLE_2 = "RAGO (Jiang et al., 2025) Table 2"
ACCELERATORS: dict[str, Accelerator] = {
    a.name: a
    for a in (
        Accelerator(
            "xpu-a", 197e12, 819e9, 16e9, f"{RAGO_TABLE_2}: XPU-A, resembles TPU v5e (197 TFLOPS, 16 GB, 819 GB/s)"
        ),
        Accelerator(
            "xpu-b", 275e12, 1200e9, 32e9, f"{RAGO_TABLE_2}: XPU-B, resembles TPU v4 (275 TFLOPS, 32 GB, 1200 GB/s)"
        ),
        Accelerator(
            "xpu-c",
            459e12,
            2765e9,
            96e9,
            f"{RAGO_TABLE_2}: XPU-C, resembles TPU v5p, RAGO's default (459 TFLOPS, 96 GB, 2765 GB/s)",
        ),
        Accelerator(
            "a100-80gb",
            312e12,
            2039e9,
            80e9,
            "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: BF16 312 TFLOPS dense (624 with sparsity), "
            "HBM2e 80 GB at 2,039 GB/s",
        ),
        Accelerator(
            "h100-sxm",
            989e12,
            3.35e12,
            80e9,
            "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: BF16 1,979 TFLOPS with sparsity, so 989 dense; "
            "HBM3 80 GB at 3.35 TB/s",
        ),
    )
}

CPU_SERVERS: dict[str, CpuServer] = {
    "epyc-milan": CpuServer(
        "epyc-milan",
        cores=96,
        core_scan=18e9,
        bandwidth=460e9,
        efficiency=0.8,
        memory=384e9,
        source=(
            "RAGO section 4: host servers modelled after AMD EPYC Milan (96 cores, 384 GB, 460 GB/s); ScaNN scans PQ "
            "codes at 18 GB/s per core with about 80 % memory bandwidth utilisation (measured by RAGO on an EPYC 7R13)"
        ),
    ),
}


def named(table: dict, name: str, what: str, where: str):
    """The entry `name` of `table`, or an error listing the names."""
    if name not in table:
        raise FannsError(
            f"{where}: unknown {what} {name!r}",
            hint=f"one of {', '.join(sorted(table))}, or a mapping with its own figures (docs/rag.md)",
        )
    return table[name]
