"""Streamed IVF centroids (issue 16), the piece that decides what each PE sees: `CentroidDealer`
in Amaranth's simulator.

The beats of a channel's image `ivf_centroids_<c>` (the packer's own `pack_ivf_stream`, two
queries' reads back to back) go in; every PE of the channel must receive exactly its own
centroids' words, in order, once per query (what `IvfDist.pack_words` makes of its chunk), with
the PEs taking words at different moments (random ready), through a ragged last row (nlist not
a multiple of the PEs), several PEs per beat, one PE per beat, and a word wider than a beat.
The whole accelerator with these channels is checked bit-exact and against the model in
tests/codegen/test_ivf_stream_faces.py (slow).
"""

import numpy as np
import pytest
from amaranth.sim import Simulator

from fanns.arch.ivfpq.ivf_stream import CentroidDealer
from fanns.design.ivfpq_stages import ivf_chunks
from fanns.images.ivfpq import IvfStreamLayout, pack_ivf_stream
from fanns.pe.ivf_dist import IvfDist

QUERIES = 2

# name: d, lanes, vec_bits (stored as int16), port_bits, nlist, PEs of the channel (all of the stage's)
CASES = {
    "3-pes-ragged": (32, 4, 12, 256, 11, 3),
    "4-pes-full-beat": (16, 4, 16, 256, 8, 4),
    "2-pes-of-5-words": (40, 8, 8, 512, 7, 2),
    "1-pe-word-per-beat": (32, 16, 16, 256, 5, 1),
    "1-pe-word-wider-than-beat": (64, 32, 16, 256, 3, 1),
}


def _deal(case: str, seed: int) -> None:
    d, lanes, vec_bits, port_bits, nlist, pes = CASES[case]
    rng = np.random.default_rng(seed)
    lo, hi = -(1 << (vec_bits - 1)), 1 << (vec_bits - 1)
    centroids = rng.integers(lo, hi, size=(nlist, d), dtype=np.int64)
    chunks = tuple(ivf_chunks(nlist, pes))
    layout = IvfStreamLayout(d, lanes, vec_bits, port_bits, chunks, tuple(range(pes)))
    raw = pack_ivf_stream(layout, centroids)
    beat_bytes = port_bits // 8
    beats = [int.from_bytes(raw[i : i + beat_bytes], "little") for i in range(0, len(raw), beat_bytes)] * QUERIES
    assert len(beats) == QUERIES * layout.beats
    want = []
    for base, n in chunks:
        pe = IvfDist(d=d, w=lanes, vec_bits=vec_bits, nlist=n, id_base=base)
        want.append([w for c in range(base, base + n) for w in pe.pack_words(centroids[c])] * QUERIES)
    got = [[] for _ in range(pes)]
    dut = CentroidDealer(layout, 16)
    outs = dut.outputs()
    ready_rng = np.random.default_rng(seed + 1)
    budget = 40 * sum(len(w) for w in want) + 10 * len(beats) + 100

    async def bench(ctx):
        i = 0
        for _ in range(budget):
            ctx.set(dut.beats.valid, i < len(beats))
            ctx.set(dut.beats.payload, beats[i] if i < len(beats) else 0)
            readies = [bool(ready_rng.random() < 0.7) for _ in outs]
            for out, r in zip(outs, readies, strict=True):
                ctx.set(out.ready, r)
            for q, (out, r) in enumerate(zip(outs, readies, strict=True)):
                if r and ctx.get(out.valid):
                    got[q].append(int(ctx.get(out.payload)))
            if i < len(beats) and ctx.get(dut.beats.ready):
                i += 1
            await ctx.tick()
            if i == len(beats) and all(len(g) == len(w) for g, w in zip(got, want, strict=True)):
                break
        assert i == len(beats), f"{len(beats) - i} beats never taken"

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    for q in range(pes):
        assert got[q] == want[q], f"PE {q}: {len(got[q])} words, {len(want[q])} expected"


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_pe_gets_its_own_centroid_words_every_query(case):
    _deal(case, seed=len(case))
