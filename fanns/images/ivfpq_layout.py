"""Layouts of the device memory images (`fanns.images.ivfpq`): where every code, id, list
table entry, centroid word and host buffer sits, beat by beat.

Why a module of its own: the generators' memory readers (HLS `hls/ivfpq_kernel.h`, RTL
`fanns.pe.channel_feeder`) and the packer must agree on exactly these rules; they are small,
pure functions of the design's parameters, kept apart from the packing of a particular index.
The full description is in memimage's module docstring and docs/ivfpq_architecture.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fanns.design.ivfpq_stages import Packing
from fanns.errors import FannsError
from fanns.numerics import ID_BITS, IvfPqFormat, pad_subspaces, unpad_subspaces
from fanns.pe.channel_feeder import beats_per_unit, codes_per_unit

PAD_ID = (1 << ID_BITS) - 1
"""Id of a padding item in memory (real ids are below it: datasets hold fewer than 2**32 - 1 vectors)."""
TABLE_WORDS = 4
"""uint32 words per list-table entry: start_beat, beats, share_items, count."""
KEY_BYTES = 8
CELL_BYTES = 4
"""Bytes of a cell id in a step-wise cell list (docs/stepwise.md)."""
NO_CELL = 0xFFFFFFFF
"""A slot of a cell list that names no cell (hls/ivfpq_kernel.h NO_CELL)."""
ID_KIND, CODE_KIND = 0, 1


def elem_bytes(vec_bits: int) -> int:
    """Bytes of one stored vector element: int16 up to 16 bits, else int32."""
    return 2 if vec_bits <= 16 else 4


def elem_dtype(vec_bits: int) -> np.dtype:
    return np.dtype("<i2") if vec_bits <= 16 else np.dtype("<i4")


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def cell_beats(d: int, vec_bits: int, port_bits: int) -> int:
    """Beats of one cell's centroid in BuildLUT's `lut_centroids` image (`pack_cells`): d stored
    elements, padded to whole beats."""
    return ceil_div(d * elem_bytes(vec_bits) * 8, port_bits)


def _check_port(port_bits: int, what: str) -> None:
    if port_bits % 64 or port_bits < 64:
        raise FannsError(
            f"{what}: port width {port_bits} bits is not a multiple of 64", hint="use 64, 128, 256 or 512-bit ports"
        )


# -- layouts ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PqLayout:
    """Layout of one PQ-code channel (see the module docstring)."""

    m: int
    port_bits: int
    pes: int
    channel_pes: tuple[int, ...]
    nlist: int

    def __post_init__(self) -> None:
        _check_port(self.port_bits, "pq_codes")

    @property
    def port_bytes(self) -> int:
        return self.port_bits // 8

    @property
    def ids_per_beat(self) -> int:
        return self.port_bits // ID_BITS

    @property
    def codes_per_unit(self) -> int:
        return codes_per_unit(self.m, self.port_bits)

    @property
    def beats_per_unit(self) -> int:
        return beats_per_unit(self.m, self.port_bits)

    @property
    def header_beats(self) -> int:
        return ceil_div(self.nlist * TABLE_WORDS * 4, self.port_bytes)

    def share_items(self, count: int) -> int:
        """Items of every PE's share of a list of `count` codes (0 for an empty list)."""
        return 0 if count == 0 else int(Packing(self.m, self.port_bits).items(count, self.pes))

    def list_beats(self, count: int) -> int:
        """Beats of a list of `count` codes in this channel (all its PEs' shares)."""
        return len(self.channel_pes) * int(Packing(self.m, self.port_bits).beats(count, self.pes))

    def schedule(self, share_items: int) -> np.ndarray:
        """The beats of one list in memory order: rows (local PE, kind, index), kind `ID_KIND`
        (index = id beat of that PE's share) or `CODE_KIND` (index = code beat of the share).

        Unit u of local PE q is preceded by the id beats j of PE q whose first item lies in unit
        u (``j * ids_per_beat // codes_per_unit == u``); units go u-major, PE-minor."""
        ipu, bpu, ipb, pch = self.codes_per_unit, self.beats_per_unit, self.ids_per_beat, len(self.channel_pes)
        units = share_items // ipu
        id_beats = ceil_div(share_items, ipb)
        # sort keys: (unit, local pe, kind, index)
        cu, cq = np.meshgrid(np.arange(units), np.arange(pch), indexing="ij")
        cu, cq = cu.ravel(), cq.ravel()
        code = np.stack([cu, cq, np.full_like(cu, CODE_KIND), cu], axis=1)
        ij, iq = np.meshgrid(np.arange(id_beats), np.arange(pch), indexing="ij")
        ij, iq = ij.ravel(), iq.ravel()
        ids = np.stack([ij * ipb // ipu, iq, np.full_like(ij, ID_KIND), ij], axis=1)
        events = np.concatenate([code, ids]).reshape(-1, 4)
        events = events[np.lexsort((events[:, 3], events[:, 2], events[:, 1], events[:, 0]))]
        rows = []
        for unit, q, kind, index in events:
            if kind == ID_KIND:
                rows.append((q, ID_KIND, index))
            else:
                rows.extend((q, CODE_KIND, unit * bpu + b) for b in range(bpu))
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    def to_dict(self) -> dict:
        return {
            "m": self.m,
            "port_bits": self.port_bits,
            "pes": self.pes,
            "channel_pes": list(self.channel_pes),
            "nlist": self.nlist,
            "codes_per_unit": self.codes_per_unit,
            "beats_per_unit": self.beats_per_unit,
            "ids_per_beat": self.ids_per_beat,
            "header_beats": self.header_beats,
            "table_words": TABLE_WORDS,
            "pad_id": PAD_ID,
        }


@dataclass(frozen=True)
class IvfStreamLayout:
    """Streamed IVF centroids of the IVFDist PEs `channel_pes` on one channel."""

    d: int
    lanes: int
    vec_bits: int
    port_bits: int
    chunks: tuple[tuple[int, int], ...]  # (id_base, centroids) per PE of the channel
    channel_pes: tuple[int, ...]

    @property
    def words(self) -> int:
        """Centroid words read per query."""
        return sum(n for _, n in self.chunks) * (self.d // self.lanes)

    @property
    def beats(self) -> int:
        return ceil_div(self.words * self.lanes * elem_bytes(self.vec_bits), self.port_bits // 8)

    def to_dict(self) -> dict:
        return {
            "d": self.d,
            "lanes": self.lanes,
            "elem_bytes": elem_bytes(self.vec_bits),
            "port_bits": self.port_bits,
            "channel_pes": list(self.channel_pes),
            "chunks": [list(c) for c in self.chunks],
            "words": self.words,
            "beats": self.beats,
        }


@dataclass(frozen=True)
class IoLayout:
    """Host buffers on the I/O channel: queries in, result keys out (one query per beat group).

    A query is stored in the hardware layout: m sub-vectors of `dsub_hw` elements (0: d/m, no
    padding; `fanns.numerics.pad_subspaces`), its d_hw elements padded to whole beats."""

    d: int
    k: int
    elem_bytes: int
    port_bits: int
    m: int = 1
    dsub_hw: int = 0

    @classmethod
    def from_dict(cls, io: dict) -> IoLayout:
        return cls(io["d"], io["k"], io["elem_bytes"], io["port_bits"], io.get("m", 1), io.get("dsub_hw", 0))

    @classmethod
    def of(cls, fmt: IvfPqFormat, k: int, port_bits: int) -> IoLayout:
        """The host buffers of an accelerator with format `fmt` and K = k on `port_bits`-bit beats."""
        return cls(fmt.d, k, elem_bytes(fmt.vec_bits), port_bits, fmt.m if fmt.dsub_hw else 1, fmt.dsub_hw)

    @property
    def d_hw(self) -> int:
        """Elements per query in the buffer (the padded sub-vectors)."""
        return self.m * self.dsub_hw if self.dsub_hw else self.d

    @property
    def query_beats(self) -> int:
        return ceil_div(self.d_hw * self.elem_bytes, self.port_bits // 8)

    @property
    def result_beats(self) -> int:
        return ceil_div(self.k * KEY_BYTES, self.port_bits // 8)

    def cell_beats(self, nprobe: int) -> int:
        """Beats of one query's cell list (step-wise mode): `nprobe` uint32 cell ids."""
        return ceil_div(nprobe * CELL_BYTES, self.port_bits // 8)

    def pack_cells(self, cells: np.ndarray, nprobe: int) -> bytes:
        """Cell lists [nq, c <= nprobe] (-1: no cell) as the cell buffer: each row padded with
        NO_CELL (0xFFFFFFFF, which -1 becomes) to `nprobe` ids, then to whole beats."""
        cells = np.asarray(cells, dtype=np.int64)
        nq = cells.shape[0]
        ids = np.full((nq, self.cell_beats(nprobe) * self.port_bits // 8 // CELL_BYTES), NO_CELL, dtype="<u4")
        ids[:, : cells.shape[1]] = np.where(cells < 0, NO_CELL, cells)
        return ids.tobytes()

    def unpack_cells(self, raw: bytes | np.ndarray, nq: int, nprobe: int) -> np.ndarray:
        """Inverse of `pack_cells`: int64 [nq, nprobe], -1 where a slot names no cell."""
        stride = self.cell_beats(nprobe) * self.port_bits // 8
        rows = np.frombuffer(raw, dtype=np.uint8, count=nq * stride).reshape(nq, stride)
        ids = np.ascontiguousarray(rows[:, : nprobe * CELL_BYTES]).view("<u4").astype(np.int64)
        return np.where(ids == NO_CELL, -1, ids)

    def pack_results(self, keys: np.ndarray) -> bytes:
        """Keys uint64 [nq, k] in the result layout (the seed buffer of the step-wise mode)."""
        keys = np.asarray(keys, dtype="<u8")
        buf = np.zeros((keys.shape[0], self.result_beats * self.port_bits // 8), dtype=np.uint8)
        buf[:, : self.k * KEY_BYTES] = keys.view(np.uint8).reshape(keys.shape[0], -1)
        return buf.tobytes()

    def pack_queries(self, q_fx: np.ndarray) -> bytes:
        """Fixed-point queries [nq, d] as the query buffer (sub-vectors padded with zeros)."""
        q_fx = np.asarray(q_fx)
        if self.dsub_hw:
            q_fx = pad_subspaces(q_fx, self.m, self.dsub_hw)
        buf = np.zeros((q_fx.shape[0], self.query_beats * self.port_bits // 8), dtype=np.uint8)
        raw = np.ascontiguousarray(q_fx.astype(f"<i{self.elem_bytes}")).view(np.uint8).reshape(q_fx.shape[0], -1)
        buf[:, : raw.shape[1]] = raw
        return buf.tobytes()

    def unpack_queries(self, raw: bytes | np.ndarray, nq: int) -> np.ndarray:
        """Inverse of `pack_queries`: the first `nq` queries of a buffer as int64 [nq, d]."""
        stride = self.query_beats * self.port_bits // 8
        rows = np.frombuffer(raw, dtype=np.uint8, count=nq * stride).reshape(nq, stride)
        q = np.ascontiguousarray(rows[:, : self.d_hw * self.elem_bytes]).view(f"<i{self.elem_bytes}").astype(np.int64)
        return unpad_subspaces(q, self.m, self.d // self.m) if self.dsub_hw else q

    def unpack_results(self, raw: bytes, nq: int) -> np.ndarray:
        """The result buffer as uint64 keys [nq, k]."""
        stride = self.result_beats * self.port_bits // 8
        rows = np.frombuffer(raw, dtype=np.uint8, count=nq * stride).reshape(nq, stride)
        return np.ascontiguousarray(rows[:, : self.k * KEY_BYTES]).view("<u8").reshape(nq, self.k)

    def to_dict(self) -> dict:
        return {
            "d": self.d,
            "k": self.k,
            "elem_bytes": self.elem_bytes,
            "port_bits": self.port_bits,
            "query_beats": self.query_beats,
            "result_beats": self.result_beats,
            "key_bytes": KEY_BYTES,
        } | ({"m": self.m, "dsub_hw": self.dsub_hw} if self.dsub_hw else {})
