"""The channel feeder alone in Amaranth's simulator, on the beats of a packed PQ-code channel.

Codes narrower than a beat (several to a unit), m < 4 (a unit holds no more codes than a beat
holds ids, issue 16) and codes wider than a beat (a unit of `beats_per_unit` beats, issue 16):
for every cell of a list sequence (an empty one among them) each PE's item stream must carry
exactly the share the unpacker reads from the image (codes, ids, padding), with `last_cell` on
a share's final item, and the channel must move one beat per cycle (the model's channel bound).
"""

from types import SimpleNamespace

import numpy as np
import pytest
from amaranth.sim import Simulator

from fanns.images.ivfpq import PqLayout, iter_pq_channel, unpack_pq_channel
from fanns.pe.channel_feeder import ChannelFeeder, beats_per_unit, codes_per_unit

# m, port bits, PEs of the channel
CASES = [(16, 256, 3), (48, 256, 2), (64, 256, 2), (96, 128, 1), (3, 128, 2), (1, 256, 3), (5, 128, 2)]
SIZES = (7, 0, 13, 1, 40)


def _index(m: int, sizes: tuple[int, ...], seed: int) -> SimpleNamespace:
    """An index's lists as the packer reads them: ids and m-byte codes per cell."""
    rng = np.random.default_rng(seed)
    ids = [rng.choice(1 << 20, n, replace=False).astype(np.int64) for n in sizes]
    codes = [rng.integers(0, 256, (n, m), dtype=np.uint8) for n in sizes]
    return SimpleNamespace(list_ids=lambda c: ids[c], list_codes=lambda c: codes[c], list_sizes=np.array(sizes))


def test_unit_rules():
    assert [codes_per_unit(m, 256) for m in (1, 3, 4, 8, 16, 32, 48, 64)] == [8, 8, 8, 4, 2, 1, 1, 1]
    assert [beats_per_unit(m, 256) for m in (1, 16, 32, 33, 48, 64, 96, 128)] == [1, 1, 1, 2, 2, 2, 3, 4]
    assert codes_per_unit(5, 128) == 3 and beats_per_unit(96, 128) == 6


@pytest.mark.parametrize("m,port,pes", CASES, ids=[f"m{m}-p{p}-x{q}" for m, p, q in CASES])
def test_items_equal_the_image_and_the_channel_moves_a_beat_per_cycle(m, port, pes):
    layout = PqLayout(m, port, pes, tuple(range(pes)), len(SIZES))
    raw = b"".join(iter_pq_channel(layout, _index(m, SIZES, m + port)))
    expected = unpack_pq_channel(layout, raw)
    pb = port // 8
    table = np.frombuffer(raw[: layout.nlist * 16], dtype="<u4").reshape(layout.nlist, 4)
    beats = []
    for start, n, _share, _count in table:
        beats += [int.from_bytes(raw[(start + i) * pb : (start + i + 1) * pb], "little") for i in range(n)]
    feeder = ChannelFeeder(m=m, port_bits=port, pes=pes)
    dut = feeder.component()
    got = [[] for _ in range(pes)]
    cycles = {"first": None, "last": None}
    total = sum(max(1, len(ids)) for shares in expected.values() for ids, _, _ in shares.values())

    async def bench(ctx):
        for q in range(pes):
            ctx.set(getattr(dut, f"items{q}").ready, 1)
        cell, beat, t = 0, 0, 0
        while sum(len(g) for g in got) < total:
            if cell < len(SIZES):
                ctx.set(dut.desc.valid, 1)
                ctx.set(dut.desc.payload.share, int(table[cell, 2]))
                ctx.set(dut.desc.payload.last, cell == len(SIZES) - 1)
            else:
                ctx.set(dut.desc.valid, 0)
            ctx.set(dut.beats.valid, beat < len(beats))
            if beat < len(beats):
                ctx.set(dut.beats.payload.data, beats[beat])
            await ctx.delay(1e-9)
            if ctx.get(dut.desc.valid) and ctx.get(dut.desc.ready):
                cell += 1
            if beat < len(beats) and ctx.get(dut.beats.ready):
                cycles["first"] = t if cycles["first"] is None else cycles["first"]
                cycles["last"] = t
                beat += 1
            for q in range(pes):
                out = getattr(dut, f"items{q}")
                if ctx.get(out.valid):
                    p = ctx.get(out.payload)
                    code = b"" if p.pad else bytes(int(c) for c in p.codes)  # a padding item's code is unused
                    got[q].append((int(p.id), code, int(p.pad), int(p.last_cell)))
            await ctx.tick()
            t += 1
            assert t < 20 * (len(beats) + 50), "the feeder stalled"

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    for q in range(pes):
        want = []
        for cell in range(len(SIZES)):
            ids, codes, pad = expected[cell][q]
            if len(ids) == 0:
                want.append(((1 << 32) - 1, b"", 1, 1))
                continue
            for i in range(len(ids)):
                code = b"" if pad[i] else codes[i].tobytes()
                want.append((int(ids[i]) & 0xFFFFFFFF, code, int(pad[i]), int(i == len(ids) - 1)))
        assert got[q] == want, q
    # one beat per cycle once the list stream runs (the id/code FIFOs absorb the PE's pace)
    assert cycles["last"] - cycles["first"] + 1 <= len(beats) + 2 * len(SIZES)
