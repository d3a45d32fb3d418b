"""Device memory images of a trained IVF-PQ index — the one packer of the HLS and RTL accelerators.

Why one module: both generated accelerators read the same bytes, so the layout of
docs/ivfpq_architecture.md ("Memory layout") exists exactly once: here, as the packer, its
inverse (the unpacker the tests use to prove the round trip) and the beat schedule the
kernels' memory readers follow.

Every image is a little-endian binary file; `manifest.json` lists each one with its use, board
memory group and channel, byte size, layout parameters and sha256. Vector elements are the
quantised values of the reference model (`IvfPqReference`): int16 when ``vec_bits <= 16``,
else int32; the OPQ matrix is int16.

* ``pq_codes_<c>`` — PQ channel c (feeding the PQDist PEs ``channel_pes``): a table of nlist
  entries of four uint32 ``(start_beat, beats, share_items, count)`` padded to whole beats, then
  the lists in cell order. PE p (of all P) takes positions p, p+P, ... of a list; every share
  has ``share_items`` items (ceil(count/P) padded to whole code units, 0 for an empty list).
  A *code unit* is one beat of ``codes_per_unit`` codes (or, for codes wider than a beat,
  ``beats_per_unit`` beats of one code); ids are 32-bit, ``ids_per_beat`` to an id beat, and
  padding items carry the id ``PAD_ID``. A list's beats are ordered by `PqLayout.schedule`:
  unit u of every PE of the channel in turn (beat-interleaved), each preceded by the id beats of
  that PE that the unit is the first to need — so one sequential read of the list feeds every
  PE with codes and their ids while each PE buffers at most one unit and two id beats.
* ``ivf_centroids_<c>`` — streamed IVF centroids of the IVFDist PEs on channel c: for every
  centroid index i, every word k (``lanes`` elements) and every PE of the channel (in order)
  that owns an i-th centroid, word k of that centroid; read once per query.
* ``lut_centroids`` — BuildLUT's fetched copy: cell by cell, d elements padded to whole beats.
* ROMs (on-chip memory initialisation, no channel): ``codebook`` [256][d] (row j is codeword j
  of every sub-space, the order `build_lut` reads), ``centroids`` [nlist][d] (on-chip IVF or
  BuildLUT centroids), ``opq_matrix`` [d][d].

The host I/O buffers (queries in, result keys out) are allocated per batch by the host; their
layout (`IoLayout`) is part of the manifest: each query's d elements padded to whole beats, each
query's K uint64 keys padded to whole beats.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fanns.arch.design import IvfPqDesign
from fanns.arch.ivfpq import Packing, ivf_chunks
from fanns.boards import Board, load_board
from fanns.datasets.formats import atomic_path
from fanns.errors import FannsError
from fanns.explore.faiss_index import IvfPqIndexData
from fanns.numerics import ID_BITS

MANIFEST_VERSION = 1
PAD_ID = (1 << ID_BITS) - 1
"""Id of a padding item in memory (real ids are below it: datasets hold fewer than 2**32 - 1 vectors)."""
TABLE_WORDS = 4
"""uint32 words per list-table entry: start_beat, beats, share_items, count."""
KEY_BYTES = 8
ID_KIND, CODE_KIND = 0, 1


def elem_bytes(vec_bits: int) -> int:
    """Bytes of one stored vector element: int16 up to 16 bits, else int32."""
    return 2 if vec_bits <= 16 else 4


def elem_dtype(vec_bits: int) -> np.dtype:
    return np.dtype("<i2") if vec_bits <= 16 else np.dtype("<i4")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _check_port(port_bits: int, what: str) -> None:
    if port_bits % 64 or port_bits < 64:
        raise FannsError(f"{what}: port width {port_bits} bits is not a multiple of 64", hint="use 64, 128, 256 or 512-bit ports")


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
        return max(1, self.port_bytes // self.m)

    @property
    def beats_per_unit(self) -> int:
        return _ceil_div(self.m, self.port_bytes)

    @property
    def header_beats(self) -> int:
        return _ceil_div(self.nlist * TABLE_WORDS * 4, self.port_bytes)

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
        id_beats = _ceil_div(share_items, ipb)
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
            "m": self.m, "port_bits": self.port_bits, "pes": self.pes, "channel_pes": list(self.channel_pes),
            "nlist": self.nlist, "codes_per_unit": self.codes_per_unit, "beats_per_unit": self.beats_per_unit,
            "ids_per_beat": self.ids_per_beat, "header_beats": self.header_beats, "table_words": TABLE_WORDS,
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
        return _ceil_div(self.words * self.lanes * elem_bytes(self.vec_bits), self.port_bits // 8)

    def to_dict(self) -> dict:
        return {
            "d": self.d, "lanes": self.lanes, "elem_bytes": elem_bytes(self.vec_bits), "port_bits": self.port_bits,
            "channel_pes": list(self.channel_pes), "chunks": [list(c) for c in self.chunks], "words": self.words,
            "beats": self.beats,
        }


@dataclass(frozen=True)
class IoLayout:
    """Host buffers on the I/O channel: queries in, result keys out (one query per beat group)."""

    d: int
    k: int
    elem_bytes: int
    port_bits: int

    @property
    def query_beats(self) -> int:
        return _ceil_div(self.d * self.elem_bytes, self.port_bits // 8)

    @property
    def result_beats(self) -> int:
        return _ceil_div(self.k * KEY_BYTES, self.port_bits // 8)

    def pack_queries(self, q_fx: np.ndarray) -> bytes:
        """Fixed-point queries [nq, d] as the query buffer."""
        q_fx = np.asarray(q_fx)
        buf = np.zeros((q_fx.shape[0], self.query_beats * self.port_bits // 8), dtype=np.uint8)
        raw = np.ascontiguousarray(q_fx.astype(f"<i{self.elem_bytes}")).view(np.uint8).reshape(q_fx.shape[0], -1)
        buf[:, : raw.shape[1]] = raw
        return buf.tobytes()

    def unpack_results(self, raw: bytes, nq: int) -> np.ndarray:
        """The result buffer as uint64 keys [nq, k]."""
        stride = self.result_beats * self.port_bits // 8
        rows = np.frombuffer(raw, dtype=np.uint8, count=nq * stride).reshape(nq, stride)
        return np.ascontiguousarray(rows[:, : self.k * KEY_BYTES]).view("<u8").reshape(nq, self.k)

    def to_dict(self) -> dict:
        return {
            "d": self.d, "k": self.k, "elem_bytes": self.elem_bytes, "port_bits": self.port_bits,
            "query_beats": self.query_beats, "result_beats": self.result_beats, "key_bytes": KEY_BYTES,
        }


# -- images -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Image:
    """One memory image: `use` is a channel use of design.yaml or ``rom`` (on-chip initialisation)."""

    name: str
    use: str
    memory: str | None
    channel: int | None
    data: bytes = field(repr=False)
    layout: dict = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return len(self.data)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def file(self) -> str:
        return f"{self.name}.bin"

    def array(self) -> np.ndarray:
        """A ROM image as its array (dtype and shape from the layout)."""
        return np.frombuffer(self.data, dtype=np.dtype(self.layout["dtype"])).reshape(self.layout["shape"])

    def record(self) -> dict:
        return {
            "name": self.name, "file": self.file, "use": self.use, "memory": self.memory, "channel": self.channel,
            "bytes": self.nbytes, "sha256": self.sha256, "layout": self.layout,
        }


@dataclass(frozen=True)
class MemoryImages:
    """All images of one design plus the I/O layout; `write` / `read` a folder with manifest.json."""

    images: tuple[Image, ...]
    io: IoLayout
    io_channel: tuple[str, int]
    info: dict = field(default_factory=dict)

    def get(self, name: str) -> Image:
        for img in self.images:
            if img.name == name:
                return img
        raise KeyError(name)

    def by_use(self, use: str) -> list[Image]:
        return [img for img in self.images if img.use == use]

    def manifest(self) -> dict:
        return {
            "version": MANIFEST_VERSION,
            "io": {**self.io.to_dict(), "memory": self.io_channel[0], "channel": self.io_channel[1]},
            "info": self.info,
            "images": [img.record() for img in self.images],
        }

    def write(self, folder: Path) -> Path:
        """Write every image and manifest.json into `folder`; return the manifest path."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for img in self.images:
            with atomic_path(folder / img.file) as tmp:
                tmp.write_bytes(img.data)
        path = folder / "manifest.json"
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(self.manifest(), indent=1, sort_keys=True) + "\n")
        return path

    @classmethod
    def read(cls, folder: Path) -> MemoryImages:
        """Load a folder written by `write`, checking every file's size and sha256."""
        folder = Path(folder)
        try:
            man = json.loads((folder / "manifest.json").read_text())
        except (OSError, ValueError) as exc:
            raise FannsError(f"{folder}: cannot read manifest.json ({exc})", hint="regenerate the memory images") from None
        if man.get("version") != MANIFEST_VERSION:
            raise FannsError(f"{folder}/manifest.json: version {man.get('version')!r}, expected {MANIFEST_VERSION}")
        images = []
        for rec in man["images"]:
            path = folder / rec["file"]
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise FannsError(f"{path}: cannot read the memory image ({exc.strerror})", hint="regenerate the memory images") from None
            if len(data) != rec["bytes"] or hashlib.sha256(data).hexdigest() != rec["sha256"]:
                raise FannsError(f"{path}: size or sha256 differs from manifest.json", hint="the image is corrupt; regenerate it")
            images.append(Image(rec["name"], rec["use"], rec["memory"], rec["channel"], data, rec["layout"]))
        io = man["io"]
        io_layout = IoLayout(io["d"], io["k"], io["elem_bytes"], io["port_bits"])
        return cls(tuple(images), io_layout, (io["memory"], io["channel"]), man.get("info", {}))


# -- packing ----------------------------------------------------------------------------------------
def quantised_arrays(design: IvfPqDesign, data: IvfPqIndexData) -> dict[str, np.ndarray]:
    """The quantised index arrays of the reference model: centroids, codebook, OPQ matrix."""
    fmt = design.format
    out = {
        "centroids": fmt.quantize(data.centroids),
        "codebook": fmt.quantize(data.codebook),  # [m, 256, dsub]
    }
    if data.opq_matrix is not None:
        out["opq_matrix"] = fmt.quantize_opq_matrix(data.opq_matrix)
    return out


def _check_index(design: IvfPqDesign, data: IvfPqIndexData) -> None:
    idx = design.index
    got = {"d": data.d, "m": data.m, "nlist": data.nlist, "n": data.ntotal, "opq": data.opq_matrix is not None}
    want = {"d": idx.d, "m": idx.m, "nlist": idx.nlist, "n": idx.n, "opq": idx.opq}
    for key in want:
        if got[key] != want[key]:
            raise FannsError(
                f"the index does not match the design: {key}={got[key]} in the index, {want[key]} in design.yaml ({idx.factory})",
                hint="pass the exploration folder the design was made from",
            )
    if data.ntotal and int(data.ids.max()) >= PAD_ID:
        raise FannsError(f"vector id {int(data.ids.max())} collides with the padding id {PAD_ID}", hint="ids must be below 2**32 - 1")


def _group(board: Board, kind: str):
    for g in board.memory:
        if g.kind == kind:
            return g
    raise FannsError(f"board {board.name} has no memory group {kind!r}", hint=f"groups: {', '.join(g.kind for g in board.memory)}")


def pq_layouts(design: IvfPqDesign) -> list[tuple[object, PqLayout]]:
    """(ChannelUse, PqLayout) of every PQ-code channel, in design.yaml order."""
    pq = design.stages.pq_dist
    out = []
    for ch in design.memory:
        if ch.use == "pq_codes":
            out.append((ch, PqLayout(design.format.m, pq.port_bits, pq.pes, tuple(ch.pes), design.index.nlist)))
    return out


def ivf_stream_layouts(design: IvfPqDesign, port_bits: int) -> list[tuple[object, IvfStreamLayout]]:
    """(ChannelUse, IvfStreamLayout) of every streamed-centroid channel: PE i on channel i*C // P."""
    st = design.stages.ivf_dist
    chans = [ch for ch in design.memory if ch.use == "ivf_centroids"]
    chunks = ivf_chunks(design.index.nlist, st.pes)
    out = []
    for c, ch in enumerate(chans):
        pes = tuple(i for i in range(st.pes) if i * len(chans) // st.pes == c)
        out.append((ch, IvfStreamLayout(design.format.d, st.lanes, design.format.vec_bits, port_bits, tuple(chunks[i] for i in pes), pes)))
    return out


def pack_pq_channel(layout: PqLayout, data: IvfPqIndexData) -> bytes:
    """The image of one PQ-code channel: list table, then every list's scheduled beats."""
    pb, m = layout.port_bytes, layout.m
    ipu, bpu, ipb = layout.codes_per_unit, layout.beats_per_unit, layout.ids_per_beat
    pch = len(layout.channel_pes)
    table = np.zeros((layout.nlist, TABLE_WORDS), dtype="<u4")
    parts = []
    beat = layout.header_beats
    for cell in range(layout.nlist):
        ids, codes = data.list_ids(cell), data.list_codes(cell)
        count = ids.shape[0]
        share = layout.share_items(count)
        nbeats = layout.list_beats(count)
        table[cell] = (beat, nbeats, share, count)
        if count == 0:
            continue
        units = share // ipu
        id_beats = _ceil_div(share, ipb)
        code_rows = np.zeros((pch, units * bpu, pb), dtype=np.uint8)
        id_rows = np.full((pch, id_beats * ipb), PAD_ID, dtype="<u4")
        for q, p in enumerate(layout.channel_pes):
            mine_ids, mine_codes = ids[p :: layout.pes], codes[p :: layout.pes]
            n = mine_ids.shape[0]
            unit_bytes = np.zeros((units, bpu * pb), dtype=np.uint8)
            flat = np.zeros((units * ipu, m), dtype=np.uint8)
            flat[:n] = mine_codes
            unit_bytes[:, : ipu * m] = flat.reshape(units, ipu * m)
            code_rows[q] = unit_bytes.reshape(units * bpu, pb)
            id_rows[q, :n] = mine_ids
        id_bytes = id_rows.view(np.uint8).reshape(pch, id_beats, pb)
        sched = layout.schedule(share)
        out = np.empty((sched.shape[0], pb), dtype=np.uint8)
        is_id = sched[:, 1] == ID_KIND
        out[is_id] = id_bytes[sched[is_id, 0], sched[is_id, 2]]
        out[~is_id] = code_rows[sched[~is_id, 0], sched[~is_id, 2]]
        assert out.shape[0] == nbeats
        parts.append(out.tobytes())
        beat += nbeats
    header = np.zeros(layout.header_beats * pb, dtype=np.uint8)
    raw = table.view(np.uint8).ravel()
    header[: raw.size] = raw
    return header.tobytes() + b"".join(parts)


def unpack_pq_channel(layout: PqLayout, raw: bytes) -> dict[int, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Inverse of `pack_pq_channel`: {cell: {global pe: (ids, codes, pad)}} of every share
    (padding items included, `pad` marks them)."""
    pb, m = layout.port_bytes, layout.m
    ipu, bpu, ipb = layout.codes_per_unit, layout.beats_per_unit, layout.ids_per_beat
    pch = len(layout.channel_pes)
    buf = np.frombuffer(raw, dtype=np.uint8)
    table = buf[: layout.nlist * TABLE_WORDS * 4].view("<u4").reshape(layout.nlist, TABLE_WORDS)
    out = {}
    for cell in range(layout.nlist):
        start, nbeats, share, _count = (int(v) for v in table[cell])
        beats = buf[start * pb : (start + nbeats) * pb].reshape(nbeats, pb)
        sched = layout.schedule(share)
        if sched.shape[0] != nbeats:
            raise ValueError(f"cell {cell}: {nbeats} beats in the table, the schedule has {sched.shape[0]}")
        units = share // ipu
        code_rows = np.zeros((pch, units * bpu, pb), dtype=np.uint8)
        id_bytes = np.zeros((pch, _ceil_div(share, ipb), pb), dtype=np.uint8)
        is_id = sched[:, 1] == ID_KIND
        id_bytes[sched[is_id, 0], sched[is_id, 2]] = beats[is_id]
        code_rows[sched[~is_id, 0], sched[~is_id, 2]] = beats[~is_id]
        shares = {}
        for q, p in enumerate(layout.channel_pes):
            ids = np.ascontiguousarray(id_bytes[q]).view("<u4").ravel()[:share]
            codes = code_rows[q].reshape(units, bpu * pb)[:, : ipu * m].reshape(units * ipu, m)
            shares[p] = (ids.astype(np.int64), codes, ids == PAD_ID)
        out[cell] = shares
    return out


def pack_ivf_stream(layout: IvfStreamLayout, centroids_fx: np.ndarray) -> bytes:
    words = layout.d // layout.lanes
    rows = []
    for i in range(max(n for _, n in layout.chunks)):
        for k in range(words):
            for base, n in layout.chunks:
                if i < n:
                    rows.append(centroids_fx[base + i, k * layout.lanes : (k + 1) * layout.lanes])
    flat = np.concatenate(rows).astype(elem_dtype(layout.vec_bits)).view(np.uint8)
    out = np.zeros(layout.beats * layout.port_bits // 8, dtype=np.uint8)
    out[: flat.size] = flat
    return out.tobytes()


def pack_cells(centroids_fx: np.ndarray, vec_bits: int, port_bits: int) -> tuple[bytes, int]:
    """Centroids cell by cell, each padded to whole beats: (image, beats per cell)."""
    pb = port_bits // 8
    raw = np.ascontiguousarray(centroids_fx.astype(elem_dtype(vec_bits))).view(np.uint8).reshape(centroids_fx.shape[0], -1)
    cell_beats = _ceil_div(raw.shape[1], pb)
    out = np.zeros((raw.shape[0], cell_beats * pb), dtype=np.uint8)
    out[:, : raw.shape[1]] = raw
    return out.tobytes(), cell_beats


def _rom(name: str, arr: np.ndarray, dtype: np.dtype) -> Image:
    arr = np.ascontiguousarray(arr.astype(dtype))
    return Image(name, "rom", None, None, arr.tobytes(), {"dtype": dtype.str, "shape": list(arr.shape)})


def pack(design: IvfPqDesign, data: IvfPqIndexData, board: Board | None = None) -> MemoryImages:
    """Every memory image of `design` serving `data` (see the module docstring)."""
    _check_index(design, data)
    board = board or load_board(design.board)
    fmt, st = design.format, design.stages
    q = quantised_arrays(design, data)
    io_ch = next(ch for ch in design.memory if ch.use == "io")
    first = _group(board, io_ch.memory)
    images: list[Image] = []
    for ch, layout in pq_layouts(design):
        images.append(Image(f"pq_codes_{len(images)}", "pq_codes", ch.memory, ch.channel, pack_pq_channel(layout, data), layout.to_dict()))
    for c, (ch, layout) in enumerate(ivf_stream_layouts(design, first.port_bits)):
        images.append(Image(f"ivf_centroids_{c}", "ivf_centroids", ch.memory, ch.channel, pack_ivf_stream(layout, q["centroids"]), layout.to_dict()))
    dt = elem_dtype(fmt.vec_bits)
    for ch in design.memory:
        if ch.use == "lut_centroids":
            raw, cell_beats = pack_cells(q["centroids"], fmt.vec_bits, first.port_bits)
            lay = {"d": fmt.d, "elem_bytes": dt.itemsize, "port_bits": first.port_bits, "nlist": data.nlist, "cell_beats": cell_beats}
            images.append(Image("lut_centroids", "lut_centroids", ch.memory, ch.channel, raw, lay))
    codebook_rows = q["codebook"].transpose(1, 0, 2).reshape(256, fmt.d)
    images.append(_rom("codebook", codebook_rows, dt))
    if st.ivf_dist.storage != "stream" or st.build_lut.centroids != "memory":
        images.append(_rom("centroids", q["centroids"], dt))
    if "opq_matrix" in q:
        images.append(_rom("opq_matrix", q["opq_matrix"], np.dtype("<i2")))
    for img in images:
        if img.memory is not None:
            cap = _group(board, img.memory).capacity_bytes
            if img.nbytes > cap:
                raise FannsError(
                    f"memory image {img.name} needs {img.nbytes / 2**20:.1f} MiB, channel {img.memory}[{img.channel}] holds {cap / 2**20:.1f} MiB",
                    hint="use more PQ-code channels (stages.pq_dist.channels) or a board with larger channels",
                )
    info = {"index": design.index.factory, "nlist": data.nlist, "n": data.ntotal, "d": fmt.d, "m": fmt.m, "metric": data.metric}
    return MemoryImages(tuple(images), IoLayout(fmt.d, design.k, elem_bytes(fmt.vec_bits), first.port_bits), (io_ch.memory, io_ch.channel), info)


def unpack_lists(images: MemoryImages, pes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every list's (ids, codes) in list order, recombined from the PQ-code channel images
    (position i of a list is item i // P of PE i mod P; padding dropped)."""
    shares: dict[int, dict[int, tuple]] = {}
    nlist = None
    for img in images.by_use("pq_codes"):
        lay = img.layout
        layout = PqLayout(lay["m"], lay["port_bits"], lay["pes"], tuple(lay["channel_pes"]), lay["nlist"])
        nlist = layout.nlist
        for cell, per_pe in unpack_pq_channel(layout, img.data).items():
            shares.setdefault(cell, {}).update(per_pe)
    out = []
    for cell in range(nlist or 0):
        per_pe = shares[cell]
        if sorted(per_pe) != list(range(pes)):
            raise ValueError(f"cell {cell}: shares of PEs {sorted(per_pe)}, expected 0..{pes - 1}")
        real = [(ids[~pad], codes[~pad]) for ids, codes, pad in (per_pe[p] for p in range(pes))]
        count = sum(r[0].shape[0] for r in real)
        m = real[0][1].shape[1]
        ids = np.empty(count, dtype=np.int64)
        codes = np.empty((count, m), dtype=np.uint8)
        for p, (pid, pcode) in enumerate(real):
            ids[p::pes], codes[p::pes] = pid, pcode
        out.append((ids, codes))
    return out


def image_summary(images: MemoryImages) -> str:
    """One line per image (for the CLI and the project README)."""
    lines = []
    for img in images.images:
        where = "on-chip ROM" if img.memory is None else f"{img.memory}[{img.channel}]"
        lines.append(f"{img.file:24s} {where:14s} {img.nbytes:>12,d} bytes")
    return "\n".join(lines)
