"""Choices and defaults that command-line options offer and heavy layers act on.

Why here, at the bottom: `fanns --help` and every `fanns CMD --help` show these values, and the
option definitions (`fanns.flow.parsers`) must not import the layers that use them (codegen, sim,
driver, index: amaranth, cocotb, faiss, ...) just to print them (issue 47). Each value is defined
once, here, and those layers import it.
"""

from __future__ import annotations

FACES = ("hls", "rtl")
"""The faces of a generated IVF-PQ project (`fanns.codegen.ivfpq.project`), in the order they are written."""

DRIVER_BACKENDS = ("model", "c-sim", "rtl-sim", "pynq")
"""Where the host driver runs a project (`fanns.driver.open`)."""

RTL_HARNESSES = ("cocotb", "fast")
"""How an IVF-PQ project's RTL is simulated (`fanns.sim.ivfpq.rtl.RtlProjectSim`): cocotb with AXI
memory models in Python, or the compiled fast harness with its memories in RTL."""

DEFAULT_RTL_HARNESS = "fast"
"""The harness `RtlProjectSim`, `fanns sim` and `generate --sim` use unless told: the fast one gives
the cocotb harness's result keys and cycle registers on every design of tests/codegen/test_rtl.py
and a tiered one (tests/codegen/test_rtl_fast.py), at 127x the simulated cycles per processor
second on small-k10 (benchmarks/sim_speed.py); "cocotb" keeps the Python memory models (any memory
rate, not only one beat per cycle)."""

SIM_MODELS_ENV = "FANNS_SIM_MODELS"
"""The environment variable naming where compiled simulator models are kept (`fanns.tools.modelcache`)."""

BUILD_DIR_HELP = (
    "where simulation runs keep their files (default: the fanns cache folder); compiled simulators are "
    f"kept by content in ${SIM_MODELS_ENV} (default: the cache folder's sim-models)"
)
"""The help of the commands' --build-dir."""

DEFAULT_SHARD_ROWS = 1 << 20
"""Base vectors added in RAM before they go to disk when an index's inverted lists live on disk
(`fanns.index.ivfpq_lists.ListsOnDisk`): about 25 MB of lists at m = 16."""

ASSUMED_LATENCY_CYCLES = 100
"""Graph model's memory latency in cycles for memories without a published measurement in their
board file (PS DDR of the Zynq boards, the U50's slower HBM; `fanns.model.graph.qpp.MemorySystem`):
an assumption, 500 ns at 200 MHz, not a measurement."""

GRAPH_KINDS = ("hnsw", "nsg")
"""The graph indexes the graph accelerator searches (`fanns.index.graph`): HNSW's base layer and NSG."""

DEFAULT_LLM_MS = 100.0
"""The time in ms the LLM leaves for the lookahead prefetch when an index's lists live in host memory
(`fanns dse --llm-ms`, docs/host_tier.md): TeleRAG sets its prefetch budget to B x t_LLM, and its
Table 4 budgets (1.25-7 GB on an RTX 4090 at 24 GB/s effective PCIe 4, 3-9 GB on an H100 at 51 GB/s
PCIe 5, its Table 3) are LLM times of 52-292 ms before retrieval; 100 ms is a short step of that
range."""
