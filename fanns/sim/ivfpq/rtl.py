"""System simulation of a generated IVF-PQ RTL project under Verilator, on one of two harnesses:
"cocotb" (`sim/tb_ivfpq.py`, cocotbext-axi memory models in Python, any memory rate) or "fast"
(`fanns.sim.ivfpq.fast`: the project's Verilog and memories in RTL in one compiled Verilated model
driven without cocotb; the same keys and cycle registers at pause 0, `tests/codegen/test_rtl_fast.py`).

`RtlProjectSim` builds the project's Verilog once (cached in a build folder) and runs batches of
the project's test queries through the whole accelerator against memory models holding the
project's memory images, checking the result keys bit for bit against expected keys (the
project's `data/reference_keys.bin` for the design's nprobe and K, or keys the caller computed
for other run-time values). `measured_interval` turns the accelerator's own cycle registers into
the steady-state cycles per query that the performance model predicts, and `predicted_run` is
that prediction for exactly the simulated queries in their order (their probed cells, found from
the project's quantised queries and ROM images with the fixed-point stage functions; the
sequence model of `fanns.model.ivfpq.sequence`), with the per-stage timings beside it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.choices import DEFAULT_RTL_HARNESS, RTL_HARNESSES
from fanns.codegen.ivfpq.rtl import TOP
from fanns.codegen.project_files import PROJECT_FILE
from fanns.design.ivfpq import IvfPqDesign
from fanns.errors import FannsError
from fanns.images.ivfpq import TABLE_WORDS, IoLayout, MemoryImages, hot_lists, stored_centroids
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import sequence as sequence_model
from fanns.model.ivfpq import skew as skew_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq import steps as steps_model
from fanns.model.ivfpq.latency import query_times, tandem
from fanns.sim.compiled import check_trace
from fanns.sim.ivfpq.fast import FastBench, check_timing
from fanns.sim.ivfpq.runs import NO_LIMITS, Limits, PrefetchRun, RamTiming, Run
from fanns.sim.ivfpq.runs import Step as Step  # re-exported: the runs are imported from here
from fanns.tools.vbuild import BuildOptions
from fanns.tools.verilator import DesignStuck, RtlSim
from fanns.tools.vmodel import DEFAULT_BUILD

MEM_LATENCY = 100
"""Read/write latency of the simulated memories in cycles: the performance model's assumption
(`fanns.model.ivfpq.stages.MEM_LATENCY_CYCLES`)."""


CXX_OPT = "-O0"
"""C++ optimisation of the cocotb harness's Verilated model: its Python memory models, not the model,
set the simulation speed of a whole accelerator, and -O0 halves its build (measured: 65 s -> 29 s
of CPU for a small design, simulation time unchanged). The fast harness's build is
`fanns.tools.vmodel`'s."""


STALL_MIN = 20_000
"""Fewest cycles without progress before the watchdog stops a run (`sim/tb_ivfpq.py`)."""
STALL_FACTOR = 4
"""The watchdog's bound is this many times the model's longest stage latency plus interval: no
stage-boundary stream or memory port stays still longer while the design works."""


CYCLES_MIN = 20_000_000
"""Fewest simulated cycles a run may take before the watchdog stops it."""
CYCLE_FACTOR = 4
"""The watchdog's bound on a run's cycles is this many times the model's cycles for it with no
stage overlapping another (a design 2.9 M cycles a query in BuildLUT ran 16 test queries for
46 M cycles: a fixed 20 M bound called it hung)."""


def test_queries_fx(project: Path, record: dict, fmt) -> np.ndarray:
    """The project's quantised test queries [nq, d] (int64), unpacked from `data/queries.bin`."""
    io = IoLayout.from_dict(record["io"])
    raw = (Path(project) / "data" / "queries.bin").read_bytes()
    return io.unpack_queries(raw, len(raw) // (io.query_beats * io.port_bits // 8))


def predicted_interval(times) -> float:
    """The model's steady-state cycles per query for a run of these queries submitted at once:
    the tandem's (`fanns.model.ivfpq.latency.tandem`) span between the first and the last completion
    over the queries in between — what `measured_interval` measures."""

    done = tandem(np.zeros(times.queries), times.service, times.latency)
    return float(done[-1] - done[0]) / (times.queries - 1)


@dataclass(frozen=True)
class Prediction:
    """The model's cycles per query for a run (`fanns.model.ivfpq.sequence.run_interval`: the
    queries in their order through the finite buffers) and the stage timings it rests on."""

    interval: float
    timings: dict

    @property
    def stage_interval(self) -> float:
        """The stage model's bound: the slowest stage's mean interval."""
        return max(t.interval for t in self.timings.values())

    @property
    def bottleneck(self) -> str:
        return max(self.timings, key=lambda s: self.timings[s].interval)

    def error_pct(self, measured: float) -> float:
        return 100 * (measured - self.interval) / self.interval


def measured_interval(run: dict) -> float:
    """Steady-state cycles per query of a run: the span between the first and the last query's
    completion over the queries in between (pipeline fill excluded)."""
    if run["nq"] < 2:
        raise FannsError("the steady-state interval needs at least two queries")
    return (run["last_cycles"] - run["first_cycles"]) / (run["nq"] - 1)


class RtlProjectSim:
    """A generated RTL project, built for simulation (see the module docstring)."""

    def __init__(
        self,
        project: Path,
        build_root: Path,
        harness: str = DEFAULT_RTL_HARNESS,
        options: BuildOptions | None = DEFAULT_BUILD,
        trace: Path | None = None,
        queries: int | None = None,
    ):
        """`harness`: "cocotb" (`sim/tb_ivfpq.py`: cocotbext-axi memory models in Python) or
        "fast" (`fanns.sim.ivfpq.fast`: the project's Verilog with its memories in RTL, compiled);
        `options`: how the fast harness's model is compiled (`fanns.tools.vbuild.BuildOptions`;
        None: the build with the least expected build and run time for simulating `queries` test
        queries); `trace`: a VCD file every run writes the waveforms of every signal to (fast harness)."""
        if harness not in RTL_HARNESSES:
            raise FannsError(f"unknown simulation harness {harness!r}", hint=f"one of {', '.join(RTL_HARNESSES)}")
        check_trace(trace, harness)
        self.harness = harness
        # absolute: the testbench opens the project's files from the simulator's build folder
        self.project = Path(project).resolve()
        if not (self.project / PROJECT_FILE).is_file() or not (self.project / "rtl" / f"{TOP}.v").is_file():
            raise FannsError(
                f"{self.project} is not a generated RTL project", hint="create it with `fanns generate-rtl`"
            )
        self.record = json.loads((self.project / PROJECT_FILE).read_text())
        self.design = IvfPqDesign.load(self.project / "design.yaml")
        self.hw = IvfPqHw.from_design(self.design, self.design.target_board())
        text = (self.project / "rtl" / f"{TOP}.v").read_text()
        tag = hashlib.sha256(text.encode()).hexdigest()[:16]
        if harness == "fast":
            run_cycles = 0
            if options is None:
                nq = min(queries or self.test_queries, self.test_queries)
                model = self.predicted_run(0, nq)  # the queries' cycles and the pipeline's fill
                run_cycles = round(nq * model.interval + sum(t.latency for t in model.timings.values()))
            self.fast = FastBench(self.project, self.record, text, Path(build_root), options, trace, run_cycles)
            self.sim = self.fast.sim
        else:
            self.sim = RtlSim({f"{TOP}.v": text}, TOP, Path(build_root) / f"ivfpq_{tag}", cxx_opt=CXX_OPT)

    def probed_sizes(self, first: int, nq: int, nprobe: int) -> np.ndarray:
        """[nq, nprobe] sizes of the cells the test queries first .. first+nq-1 probe."""
        return self.probed(first, nq, nprobe)[1]

    def probed(self, first: int, nq: int, nprobe: int) -> tuple[np.ndarray, np.ndarray]:
        """([nq, nprobe] cell ids, their sizes) the test queries first .. first+nq-1 probe."""
        fmt = self.design.format
        images = MemoryImages.read(self.project / "images")
        q_fx = fmt.pad(test_queries_fx(self.project, self.record, fmt)[first : first + nq])  # as the images
        if self.design.index.opq:
            q_fx = fmt.opq_rotate(q_fx, images.get("opq_matrix").array().astype(np.int64))
        centroids = stored_centroids(images)
        cells = fmt.select_cells(fmt.ivf_distances(q_fx, centroids), nprobe)
        return cells, self.list_sizes[cells]

    @cached_property
    def list_sizes(self) -> np.ndarray:
        """[nlist] codes per list, from the first PQ channel's list table."""
        images = MemoryImages.read(self.project / "images")
        table = np.frombuffer(images.by_use("pq_codes")[0].data[: self.hw.nlist * TABLE_WORDS * 4], dtype="<u4")
        return table.reshape(self.hw.nlist, TABLE_WORDS)[:, 3].astype(np.int64)

    def predicted_step_cycles(self, cells: np.ndarray) -> np.ndarray:
        """The model's cycles of each step-wise run of one query alone: `cells` [steps, c] (-1:
        none), per row the cycles from ap_start to ap_done (`fanns.model.ivfpq.steps.rtl_step_cycles`)."""
        return np.array(
            [
                steps_model.rtl_step_cycles(self.simulated_ctx, self.design.stages, self.list_sizes[row[row >= 0]])
                for row in np.asarray(cells)
            ]
        )

    @cached_property
    def simulated_ctx(self) -> stage_model.Context:
        """The model's context of the machine simulated: the design's, with every memory
        delivering one beat a cycle, as both harnesses' memories do unless a run says otherwise
        (`RamTiming`). Why: a board memory slower than that (the PYNQ-Z2's DDR3 at a high
        clock: 0.29 beats a cycle at 229 MHz) is in the DSE's figures, but not in a simulation,
        and its prediction must be of the memory simulated."""
        ctx = self.hw.ctx
        return dataclasses.replace(
            ctx, memories=tuple(dataclasses.replace(m, beats_per_cycle=1.0) for m in ctx.memories)
        )

    def predicted_timings(self, first: int, nq: int, nprobe: int | None = None) -> dict[str, stage_model.StageTiming]:
        """The performance model's stage timings for these queries (`fanns.model.ivfpq.stages.stage_timings`);
        a tiered design's PQDist interval is the tiered one (each PE's scan or the busier tier's
        busiest channel, per query, as `fanns.model.ivfpq.latency.query_times` has it)."""
        return self._timings(*self._feed(first, nq, nprobe))

    def _timings(
        self, ctx: stage_model.Context, probes: stage_model.Probes, feed
    ) -> dict[str, stage_model.StageTiming]:
        timings = stage_model.stage_timings(ctx, self.design.stages, probes)
        if feed is not None:
            st = self.design.stages.pq_dist
            work = stage_model.pq_work(
                stage_model.pq_shares(ctx.m, probes, st.pes, st.port_bits), stage_model.pq_pe(ctx, st)
            )
            pq = timings["pq_dist"]
            timings["pq_dist"] = dataclasses.replace(
                pq,
                interval=float(np.maximum(work.pe_cycles, feed.bound()).mean()),
                detail={**pq.detail, "tiered": True},
            )
        return timings

    def predicted_run(self, first: int, nq: int, nprobe: int | None = None) -> Prediction:
        """The performance model for a run of these queries (`Prediction`). Codes that cross a link
        (`CodeFeed.link`: host memory) are read ahead of the PEs, so the link is a server of its own
        rather than part of each query's PQDist time: the run's interval is the sequence model's
        with the PEs' and channels' time, or the link's mean over the queries after the first (the
        span `measured_interval` measures), whichever is larger."""

        ctx, probes, feed = self._feed(first, nq, nprobe)
        timings = self._timings(ctx, probes, feed)
        busy = None if feed is None else feed.busy
        interval = sequence_model.run_interval(ctx, self.design.stages, probes, busy)
        if feed is not None and feed.link is not None:
            interval = max(interval, float(feed.link[1:].mean()))
        return Prediction(interval, timings)

    def predicted_query_times(
        self,
        first: int,
        nq: int,
        nprobe: int | None = None,
        pq_memory: RamTiming | None = None,
        hot_memory: RamTiming | None = None,
        cached: np.ndarray | None = None,
    ):
        """The latency model's per-query times (`fanns.model.ivfpq.latency.QueryTimes`) for these queries;
        with `pq_memory` / `hot_memory` (the simulated memories of `run`), the PQ codes arrive as
        those memories deliver them (`fanns.model.ivfpq.skew.cells_feed`: hot lists from the fast tier).
        A host-memory design reads the probes `cached` ([nq, nprobe] bool, the driver's table mirror;
        None: a cold cache) from the cache regions (`hot_memory`), the others from host memory
        (`pq_memory`; `host_memory()` is the board's), `fanns.model.ivfpq.skew.mask_feed`."""

        ctx, probes, feed = self._feed(first, nq, nprobe, pq_memory, hot_memory, cached)
        return query_times(ctx, self.design.stages, probes, feed)

    def _feed(
        self,
        first: int,
        nq: int,
        nprobe: int | None,
        pq_memory: RamTiming | None = None,
        hot_memory: RamTiming | None = None,
        cached: np.ndarray | None = None,
    ):
        """(context, probes, code feed) of these queries; the feed is None (the model's default:
        every list on the design's PQ channels at the board's rate) unless the design is tiered
        or `pq_memory` says how the simulated memory delivers."""

        nprobe = nprobe or self.design.nprobe
        ctx = (
            self.simulated_ctx
            if nprobe == self.hw.ctx.nprobe
            else dataclasses.replace(self.simulated_ctx, nprobe=nprobe)
        )
        cells, sizes = self.probed(first, nq, nprobe)
        probes = stage_model.Probes.of(sizes)
        if pq_memory is None and not self.hw.tiered and not self.hw.host_tier:
            return ctx, probes, None
        st = self.design.stages.pq_dist
        ppc = max(st.pes_per_channel())
        if self.hw.host_tier and pq_memory is None:
            pq_memory = self.host_memory()
        pq_memory, hot_memory = pq_memory or RamTiming(MEM_LATENCY), hot_memory or RamTiming(MEM_LATENCY)
        if self.hw.host_tier:  # the host ports share one link, metered by the fast harness (`_run_fast`)
            link = pq_memory.rate * st.channels
            slow = skew_model.link_tier("host", pq_memory.latency, link, tuple(st.pes_per_channel()), st.port_bits)
            fast = skew_model.ram_tier(st.memory, hot_memory.latency, hot_memory.rate, ppc, st.port_bits)
            in_fast = np.zeros(cells.shape, bool) if cached is None else np.asarray(cached, bool)
            return ctx, probes, skew_model.mask_feed(ctx, self.design.stages, probes, in_fast, fast, slow)
        slow = skew_model.ram_tier(st.memory, pq_memory.latency, pq_memory.rate, ppc, st.port_bits)
        if not self.hw.tiered:
            return (
                ctx,
                probes,
                latency_model.channel_feed(
                    latency_model.cell_beats(ctx, st, probes), ppc, slow.rate, slow.latency_cycles
                ),
            )
        fast = skew_model.ram_tier(st.tiers.memory, hot_memory.latency, hot_memory.rate, ppc, st.port_bits)
        return (
            ctx,
            probes,
            skew_model.cells_feed(ctx, self.design.stages, cells, probes, hot_lists(self.design), fast, slow),
        )

    def host_memory(self) -> RamTiming:
        """Host memory as the board file's `host` figures give it to one PQ channel's host port
        (`fanns.model.ivfpq.skew.host_bandwidth`): the link latency in cycles of the design's clock,
        and the link's bandwidth as an even share of the PQ channels, at most a beat a cycle, in the
        fast harness's steps (`link_rate`: 1/256 beat a cycle for the whole link, which the ports
        take round robin: the model's `skew.SharedLink`)."""
        st = self.design.stages.pq_dist
        board, clock = self.design.target_board(), self.design.clock_mhz
        tier = skew_model.host_tier(board, clock, st.pes, st.channels, st.port_bits)
        link = skew_model.host_bandwidth(board, clock, st.channels, st.port_bits) / (clock * 1e6) / (st.port_bits / 8)
        steps = max(1, int(link * 256))  # the whole link's beats a cycle, rounded down to 1/256
        return RamTiming(round(tier.latency_cycles), min(1.0, steps / 256 / st.channels))

    def query_latencies(
        self,
        first: int,
        nq: int,
        latency: int = MEM_LATENCY,
        pq_memory: RamTiming | None = None,
        hot_memory: RamTiming | None = None,
    ) -> np.ndarray:
        """Measured cycles of each query alone (batch 1): one run per query, ap_start to ap_done
        from the accelerator's cycle register, the first run's index load subtracted. Results are
        checked bit for bit as in every run."""
        d = self.design
        out = self.run(
            [Run(nq=1, nprobe=d.nprobe, k=d.k, first=first + i) for i in range(nq)],
            latency=latency,
            pq_memory=pq_memory,
            hot_memory=hot_memory,
        )
        bad = [r.get("first_bad") for r in out["runs"] if r["mismatched_queries"]]
        if bad:
            raise FannsError(f"batch-1 runs returned wrong keys: {bad[0]}")
        return np.array(
            [r["cycles"] - (r["load_cycles"] if i == 0 else 0) for i, r in enumerate(out["runs"])], dtype=np.float64
        )

    @property
    def test_queries(self) -> int:
        return int(self.record["test"]["nq"])

    def build(self) -> bool:
        """Build the simulator unless the model cache has it; True if it was built now."""
        return self.sim.build()

    def describe(self) -> str:
        """The simulator and its build, for a printout (e.g. "Verilator, fast harness, g++ -O1 ...")."""
        return f"{self.sim.describe()}, {self.harness} harness"

    def stall_bound(self, latency: int) -> int:
        """Cycles without progress after which the watchdog stops a run (see `STALL_FACTOR`)."""
        timings = self.predicted_timings(0, self.test_queries)
        longest = max(t.latency + t.interval for t in timings.values())
        return int(max(STALL_MIN, STALL_FACTOR * (longest + latency)))

    def cycle_bound(self, run: Run, latency: int) -> int:
        """Simulated cycles after which `run` is stopped (see `CYCLE_FACTOR`): every stage's
        latency and its queries' intervals one after the other, a bound however the stages overlap."""
        timings = self.predicted_timings(run.first, run.nq, run.nprobe)
        serial = latency + sum(t.latency + run.nq * t.interval for t in timings.values())
        return int(max(CYCLES_MIN, CYCLE_FACTOR * serial))

    def run(
        self,
        runs: list[Run],
        latency: int = MEM_LATENCY,
        pause: float = 0.0,
        bad_params: bool = False,
        pq_memory: RamTiming | None = None,
        hot_memory: RamTiming | None = None,
        limits: Limits = NO_LIMITS,
        frozen: tuple[str, ...] = (),
    ) -> dict:
        """Simulate `runs` back to back (the first loads the index) and return the bench's report;
        `pq_memory` / `hot_memory` time the PQ-code RAMs of the slow / fast tier (default:
        `latency`, one beat per cycle; a host-memory design's `pq_memory` is `host_memory()` and its
        `hot_memory` the cache regions; `PrefetchRun`s among `runs` run its prefetch command). A run
        the watchdog stops (`limits`) raises `DesignStuck`
        with the bench's account of where the design stands; `frozen` memory ports (e.g.
        "m_axi_pq0") never answer, a fault that proves the watchdog."""
        io = self.record["io"]
        ref = self.project / "data" / "reference_keys.bin"
        if self.hw.host_tier and pq_memory is None:  # the lists come over the host link
            pq_memory = self.host_memory()
        specs = []
        for r in runs:
            if isinstance(r, PrefetchRun):
                if self.harness != "fast" or not self.hw.host_tier:
                    raise FannsError("a prefetch run needs a host-memory design and the fast harness")
                raw = np.ascontiguousarray(r.descriptors, dtype="<u4").reshape(-1, 4).tobytes()
                specs.append({"prefetch": raw, "nprobe": self.design.nprobe, "k": self.design.k, "pokes": r.pokes})
                continue
            if r.step is not None:
                specs.append(self._step_spec(r, len(specs)))
                continue
            if not 1 <= r.nq or r.first + r.nq > self.test_queries:
                raise FannsError(
                    f"queries {r.first}..{r.first + r.nq - 1}: the project has {self.test_queries} test queries"
                )
            expected = r.expected
            if expected is None:
                if (r.nprobe, r.k) != (self.design.nprobe, self.design.k):
                    raise FannsError("expected keys are needed for a run-time nprobe / k other than the design's")
                keys = np.fromfile(ref, dtype="<u8").reshape(self.test_queries, -1)[r.first : r.first + r.nq]
                expected = self.sim.build_dir / f"expected_{r.first}_{r.nq}.bin"
                keys.tofile(expected)
            specs.append(
                {
                    "nq": r.nq,
                    "first": r.first,
                    "nprobe": r.nprobe,
                    "k": r.k,
                    "expected": str(expected),
                    "stride": io["result_beats"] * io["port_bits"] // 8,
                    "keys": str(self.sim.build_dir / f"keys_{len(specs)}.bin"),
                    "pokes": r.pokes,
                }
            )
        watchdog = {
            "stall": limits.stall or self.stall_bound(latency),
            "cycles": limits.cycles or max(self.cycle_bound(r, latency) for r in runs if isinstance(r, Run)),
            "seconds": min(limits.seconds, 1e9),
        }
        if self.harness == "fast":
            out = self._run_fast(specs, latency, pause, bad_params, pq_memory, hot_memory, watchdog, frozen)
        else:
            params = {
                "regmap": str(self.project / "rtl" / "regmap.json"),
                "images": str(self.project / "images"),
                "queries": str(self.project / "data" / "queries.bin"),
                "query_stride": io["query_beats"] * io["port_bits"] // 8,
                "channels": self.hw.channels,
                "latency": latency,
                "pq_memory": pq_memory.as_dict() if pq_memory else None,
                "hot_memory": hot_memory.as_dict() if hot_memory else None,
                "pause": pause,
                "bad_params": bad_params,
                "frozen": list(frozen),
                "runs": specs,
                "limits": watchdog,
            }
            out = self.sim.run("tb_ivfpq", params)
        if "stuck" in out:
            raise DesignStuck(
                f"{self.project.name}: the simulation was stopped: {out['stuck']}",
                hint="a hang is a bug of the generated hardware: report it with the project's design.yaml; "
                "raise the watchdog bound with --timeout only if the design is merely slow",
            )
        for spec, row in zip(specs, out["runs"]):
            if "keys" in spec:
                row["keys"] = np.fromfile(spec["keys"], dtype="<u8").reshape(spec["nq"], spec["k"])
        return out

    def _step_spec(self, r: Run, n: int) -> dict:
        """The bench's spec of a step-wise run: its query rows, cell lists and seeds as buffers."""
        io = IoLayout.from_dict(self.record["io"])
        rows = np.asarray(r.step.rows, dtype=np.int64)
        if self.harness != "fast" or r.expected is None:
            raise FannsError("a step-wise run needs the fast harness and its expected keys")
        if r.nq != rows.size or rows.min() < 0 or rows.max() >= self.test_queries:
            raise FannsError(f"step rows {rows.tolist()}: {r.nq} of the {self.test_queries} test queries expected")
        raw = (self.project / "data" / "queries.bin").read_bytes()
        stride = io.query_beats * io.port_bits // 8
        return {
            "nq": r.nq,
            "first": 0,
            "nprobe": r.nprobe,
            "k": r.k,
            "expected": str(r.expected),
            "stride": io.result_beats * io.port_bits // 8,
            "keys": str(self.sim.build_dir / f"keys_{n}.bin"),
            "step": {
                "queries": b"".join(raw[i * stride : (i + 1) * stride] for i in rows),
                "cells": io.pack_cells(r.step.cells, self.design.nprobe),
                "seeds": io.pack_results(r.step.seeds),
            },
        }

    def _run_fast(self, specs, latency, pause, bad_params, pq_memory, hot_memory, watchdog, frozen) -> dict:
        """`run` on the fast harness (`fanns.sim.ivfpq.fast`): one latency per memory tier; in a
        host-memory design the PQ memory's rate (per channel) meters the one link all its
        `m_axi_pq<c>` ports share (`link_rate`)."""
        tiers, link_rate = {"io": latency}, 0
        for tier, timing in (("pq", pq_memory), ("hot", hot_memory)):
            if timing is not None and tier == "pq" and self.hw.host_tier:
                if not 0 < timing.rate <= 1:
                    raise FannsError(f"the host memory's rate {timing.rate}: 0 to 1 beat a cycle a channel")
                link_rate = max(1, round(timing.rate * self.hw.channels * 256))
            elif timing is not None:
                check_timing(timing.rate, f"the {tier} memory")
            tiers[tier] = timing.latency if timing else latency
        return self.fast.run(specs, tiers, min(255, round(pause * 256)), bad_params, frozen, watchdog, link_rate)
