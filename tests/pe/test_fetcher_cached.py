"""The Fetcher of a host-memory design (`Fetcher.cached`, docs/host_tier.md) and the prefetch
command's walker and copy engine (`fanns.arch.ivfpq.prefetch`), in Amaranth's simulator: the
location table is empty after a table load, prefetch descriptors set and clear it and send each
copy once, and a probed cell goes to the cache reader at its offset when valid, else to host memory
at the list table's start, with the list table's beats either way. Random back-pressure on every
output. The whole accelerator with them: tests/codegen/test_host_tier_rtl.py."""

import numpy as np
from amaranth.sim import Simulator

from fanns.arch.ivfpq.prefetch import CopyEngine, DescriptorWalker
from fanns.pe.fetcher import EVICT, FROM_HOST, MOVE, Fetcher

NLIST, BEAT = 8, 32
BASE, CACHE = 0x10000, 0x80000


def _table(rng) -> list[tuple[int, int, int]]:
    """(start_beat, beats, share_items) per list."""
    beats = rng.integers(1, 6, NLIST)
    start = NLIST * 16 // BEAT + np.concatenate([[0], np.cumsum(beats)[:-1]])
    return [(int(s), int(b), int(b) * 2) for s, b in zip(start, beats)]


def _run(seed: int, requests: list[tuple[int, int, int, int]], cells: list[int], reload: bool = False):
    """Load the table (twice with `reload`), run the descriptors, then the cells; return the copies,
    the commands of each reader and the descriptors' tiers."""
    rng = np.random.default_rng(seed)
    table = _table(rng)
    pe = Fetcher(nlist=NLIST, channels=1, beat_bytes=BEAT, cached=True, len_bits=32, record_bits=128)
    dut = pe.instance()
    got = {"copy": [], "cmd": [], "hot": [], "tier": []}

    async def bench(ctx):
        ctx.set(dut.base0, BASE)
        ctx.set(dut.hot_base0, CACHE)
        for rnd in range(2 if reload else 1):
            requests_now = [] if rnd else requests  # a second load empties the location table again
            for start, beats, share in table:
                ctx.set(dut.table_fill0.valid, 1)
                ctx.set(dut.table_fill0.payload, start | beats << 32 | share << 64)
                await ctx.tick()
            ctx.set(dut.table_fill0.valid, 0)
            for cell, op, at, source in requests_now:
                ctx.set(dut.copy_req.valid, 1)
                ctx.set(dut.copy_req.payload, {"cell": cell, "op": op, "at": at, "source": source})
                while True:
                    await _drain(ctx, dut, got, rng)
                    if ctx.get(dut.copy_req.ready):
                        await ctx.tick()
                        break
                    await ctx.tick()
                ctx.set(dut.copy_req.valid, 0)
        for i, cell in enumerate(cells):
            ctx.set(dut.cells.valid, 1)
            ctx.set(dut.cells.payload, {"cell": cell, "last": i == len(cells) - 1, "empty": 0})
            while True:
                await _drain(ctx, dut, got, rng)
                if ctx.get(dut.cells.ready):
                    await ctx.tick()
                    break
                await ctx.tick()
        ctx.set(dut.cells.valid, 0)
        for _ in range(50):
            await _drain(ctx, dut, got, rng)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return table, got


async def _drain(ctx, dut, got, rng) -> None:
    """Take what each output offers this cycle, ready at random."""
    for name, port in (("copy", dut.copy0), ("cmd", dut.cmd0), ("hot", dut.hot_cmd0), ("tier", dut.desc0)):
        ready = bool(rng.random() < 0.6)
        ctx.set(port.ready, ready)
        if ready and ctx.get(port.valid):
            p = ctx.get(port.payload)
            if name == "copy":
                got[name].append((p.src, p.dst, p.len, p.host))
            elif name == "tier":
                got[name].append(p.tier)
            else:
                got[name].append((p.addr, p.len))


def test_descriptors_set_the_table_and_cells_read_the_tier_it_names():
    requests = [(2, FROM_HOST, 5, 0), (3, FROM_HOST, 9, 0), (3, EVICT, 0, 0), (4, MOVE, 1, 20)]
    cells = [2, 3, 4, 0]
    table, got = _run(1, requests, cells)
    s = {c: table[c] for c in range(NLIST)}
    assert got["copy"] == [
        (BASE + s[2][0] * BEAT, CACHE + 5 * BEAT, s[2][1] * BEAT, 1),
        (BASE + s[3][0] * BEAT, CACHE + 9 * BEAT, s[3][1] * BEAT, 1),
        (CACHE + 20 * BEAT, CACHE + 1 * BEAT, s[4][1] * BEAT, 0),
    ]  # the eviction copies nothing
    assert got["tier"] == [1, 0, 1, 0]
    assert got["hot"] == [(CACHE + 5 * BEAT, s[2][1] * BEAT), (CACHE + 1 * BEAT, s[4][1] * BEAT)]
    assert got["cmd"] == [(BASE + s[3][0] * BEAT, s[3][1] * BEAT), (BASE + s[0][0] * BEAT, s[0][1] * BEAT)]


def test_a_table_load_empties_the_location_table():
    table, got = _run(2, [(2, FROM_HOST, 5, 0), (6, FROM_HOST, 0, 0)], [2, 6], reload=True)
    assert got["tier"] == [0, 0] and got["hot"] == []
    assert got["cmd"] == [(BASE + table[c][0] * BEAT, table[c][1] * BEAT) for c in (2, 6)]


def test_the_walker_gathers_descriptors_and_the_copy_engine_routes_beats():
    """Words to descriptors; copies alternating host and cache sources, their beats (ready at
    random) reach the writer in command order and the engine is idle once every write is answered."""
    walker, engine = DescriptorWalker(), CopyEngine(64, 32, 64)
    rng = np.random.default_rng(3)
    words = [7, FROM_HOST, 11, 0, 9, MOVE, 2, 30]

    async def walk(ctx):
        out = []
        for i, w in enumerate(words):
            ctx.set(walker.words.valid, 1)
            ctx.set(walker.words.payload, w | (i == len(words) - 1) << 32)
            ctx.set(walker.o.ready, 1)
            if ctx.get(walker.o.valid):
                p = ctx.get(walker.o.payload)
                out.append((p.cell, p.op, p.at, p.source))
            await ctx.tick()
        ctx.set(walker.words.valid, 0)
        await ctx.tick()
        assert out == [(7, FROM_HOST, 11, 0), (9, MOVE, 2, 30)]
        assert ctx.get(walker.taken) == 2

    sim = Simulator(walker)
    sim.add_clock(1e-8)
    sim.add_testbench(walk)
    sim.run()

    copies = [(1, 3), (0, 2), (1, 1)]  # (host?, beats)

    async def copy(ctx):
        written, cmds = [], []
        reads = {1: [], 0: []}
        for n, (host, beats) in enumerate(copies):
            ctx.set(engine.copy.valid, 1)
            ctx.set(engine.copy.payload, {"src": 100 * n, "dst": 1000 + n, "len": beats * 8, "host": host})
            ctx.set(engine.host_cmd.ready, 1)
            ctx.set(engine.cache_cmd.ready, 1)
            ctx.set(engine.write_cmd.ready, 1)
            while not ctx.get(engine.copy.ready):
                await ctx.tick()
            for src, port in ((1, engine.host_cmd), (0, engine.cache_cmd)):
                if ctx.get(port.valid):
                    reads[src].append((n, beats))
            cmds.append(int(ctx.get(engine.write_cmd.payload.addr)))
            await ctx.tick()
        ctx.set(engine.copy.valid, 0)
        assert reads == {1: [(0, 3), (2, 1)], 0: [(1, 2)]} and cmds == [1000, 1001, 1002]
        pending = {1: [(n, b, b == beats - 1) for n, beats in reads[1] for b in range(beats)]}
        pending[0] = [(n, b, b == beats - 1) for n, beats in reads[0] for b in range(beats)]
        for _ in range(60):  # both readers offer their beats; the engine takes them in command order
            for src, port in ((1, engine.host_beats), (0, engine.cache_beats)):
                ctx.set(port.valid, bool(pending[src]) and bool(rng.random() < 0.7))
                if pending[src]:
                    n, b, last = pending[src][0]
                    ctx.set(port.payload, {"data": 16 * n + b, "keep": 0xFF, "last": last})
            ready = bool(rng.random() < 0.7)
            ctx.set(engine.write_data.ready, ready)
            for src, port in ((1, engine.host_beats), (0, engine.cache_beats)):
                if ctx.get(port.valid) and ctx.get(port.ready):
                    pending[src].pop(0)
            if ready and ctx.get(engine.write_data.valid):
                written.append(int(ctx.get(engine.write_data.payload.data)))
            await ctx.tick()
        assert written == [0, 1, 2, 16, 17, 32]
        assert not ctx.get(engine.idle)  # three writes not yet answered
        for _ in copies:
            ctx.set(engine.write_done, 1)
            await ctx.tick()
        ctx.set(engine.write_done, 0)
        await ctx.tick()
        assert ctx.get(engine.idle)

    sim = Simulator(engine)
    sim.add_clock(1e-8)
    sim.add_testbench(copy)
    sim.run()
