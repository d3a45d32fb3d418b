"""The IVF-PQ stages as a machine: what a design's stages instantiate, decided once for every face
(the performance model, the RTL, the HLS kernel, the packer and the stream-level reference).

Why in `design`: these are rules of the design, not estimates: which PE a selection stage is
(`selector_pe`, from the one registry `fanns.design.ivfpq_selectors.SELECTORS`), which centroids each
IVFDist PE holds (`ivf_chunks`), how PQ codes and ids sit in memory beats (`Packing`), and how deep
the FIFOs between stages are. The model (`fanns.model.ivfpq.stages`) prices exactly these; the
generators build exactly these.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fanns.design.ivfpq import SelectStage
from fanns.design.ivfpq_selectors import SELECTORS
from fanns.numerics import ID_BITS
from fanns.pe.base import PE
from fanns.pe.channel_feeder import beats_per_unit, codes_per_unit
from fanns.pe.pq_decode import KSUB


# -- the PEs of the stages ------------------------------------------------------------------------
def selector_pe(st: SelectStage) -> PE:
    """The PE of a selection stage: the model prices it, the RTL instantiates it, the HLS kernel
    calls its `hls_function()`."""
    return SELECTORS[st.arch].make(st.streams, st.s, st.key_bits, **st.params)


def select_stage(arch: str, z: int, s: int, key_bits: int, params: dict | None = None) -> SelectStage:
    """The selection stage of kind `arch` keeping the s smallest of z key streams."""
    params = dict(params or {})
    pe = SELECTORS[arch].make(z, s, key_bits, **params)
    s1 = int(getattr(pe, "s1", s))  # architectures with level-1 queues define s1; otherwise s
    return SelectStage(arch=arch, streams=z, s=s, s1=s1, key_bits=key_bits, params=params)


def ivf_chunks(nlist: int, pes: int) -> list[tuple[int, int]]:
    """(id_base, centroids) of each IVFDist PE: contiguous, balanced (the first nlist mod P PEs
    take one centroid more)."""
    base, extra = divmod(nlist, pes)
    out, start = [], 0
    for i in range(pes):
        n = base + (1 if i < extra else 0)
        out.append((start, n))
        start += n
    return out


# -- memory layout --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Packing:
    """How PQDist PE shares of an IVF list sit in memory beats (docs/ivfpq_architecture.md).

    A list of n codes is split over P PEs (PE p takes positions p, p+P, ...); every PE's share is
    ceil(n/P) padded up to whole code units (`fanns.pe.channel_feeder.codes_per_unit`: as many
    codes as fill a beat, at most its 32-bit ids; a code wider than a beat takes ceil(8m /
    port_bits) beats of its own), so all shares of a list have the same number of beats and a
    channel interleaves them unit by unit. Ids come in whole beats of 32-bit ids, each just before
    the unit that first needs it. An empty list costs no beat and one padding item per PE.
    """

    m: int
    port_bits: int

    def _share(self, n, pes):
        n = np.asarray(n, dtype=np.int64)
        share = -(-n // pes)
        per_unit = codes_per_unit(self.m, self.port_bits)
        units = -(-share // per_unit)
        padded = units * per_unit
        code_beats = units * beats_per_unit(self.m, self.port_bits)
        id_beats = -(-(padded * ID_BITS) // self.port_bits)
        return padded, code_beats + id_beats

    def items(self, n, pes: int) -> np.ndarray:
        """Items (codes + padding) one PE scans of a list of n codes (at least one)."""
        return np.maximum(self._share(n, pes)[0], 1)

    def beats(self, n, pes: int) -> np.ndarray:
        """Memory beats (codes + ids) of one PE's share of a list of n codes."""
        return self._share(n, pes)[1]


def stored_elem_bytes(vec_bits: int) -> int:
    """Bytes of a vector element in device memory: int16 up to 16 bits, else int32 (the packer's
    rule, `fanns.images.ivfpq.elem_bytes`)."""
    return 2 if vec_bits <= 16 else 4


# -- FIFO depths between stages --------------------------------------------------------------------
IVF_BEAT_FIFO_DEPTH = 4
"""Beats buffered per IVFDist PE of a shared streamed-centroid channel (`fanns.arch.ivfpq.ivf_stream`):
the PEs of a channel start a few cycles apart (the query travels down the chain), which these absorb."""


def lut_fifo_depth(lut_words: int) -> int:
    """Depth of each BuildLUT PE's LUT FIFO: two whole LUTs (of a PE that builds a share of the
    rows, two shares). PQDist takes the LUTs in probe order, so with a shallow FIFO BuildLUT PE j+1
    stalls once its FIFO is full until LUT j has been consumed, and the P_lut PEs no longer work
    in parallel. Two LUTs let every PE finish its LUT while the previous one drains, which is the
    ceil(nprobe/P_lut) * II the model assumes."""
    return 2 * (KSUB // lut_words)


def query_fifo_depth(fifo_depth: int, d: int, lanes: int, opq: bool) -> int:
    """Depth of IVFDist's and BuildLUT's query FIFOs (`fanns.arch.ivfpq.front`): with OPQ, two
    whole rotated queries in the stage's lanes, as the HLS face's FIFOs hold.

    Why: OPQ emits a query's words over its whole interval, and IVFDist and BuildLUT take theirs
    only when they start that query. FIFOs of `fifo_depth` words held OPQ back until both had
    started the query before, so OPQ and IVFDist ran one after the other instead of side by side:
    a DSE-chosen KV260 design (768-d, matrix streamed, 8 OPQ lanes, one IVFDist lane) measured
    +59 % cycles per query against the model. Without OPQ the I/O reader delivers a query in a few
    cycles, and `fifo_depth` words suffice."""
    return max(fifo_depth, 2 * -(-d // lanes)) if opq else fifo_depth


def lut_fetch_fifo_depth(words: int) -> int:
    """Words of fetched BuildLUT centroids buffered before the dispatcher: two cells' worth, so
    the dispatcher takes one a cycle as from an on-chip store (`fanns.arch.ivfpq.lut_fetch`)."""
    return max(2, 2 * words)
