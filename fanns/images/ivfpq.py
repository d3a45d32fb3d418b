"""Device memory images of a trained IVF-PQ index — the one packer of the HLS and RTL accelerators.

Why one module: both generated accelerators read the same bytes, so the layout of
docs/ivfpq_architecture.md ("Memory layout") exists exactly once: here, as the packer, its
inverse (the unpacker the tests use to prove the round trip) and the beat schedule the
kernels' memory readers follow.

Every image is a little-endian binary file; `manifest.json` lists each one with its use, board
memory group and channel, byte size, layout parameters and sha256. Vector elements are the
quantised values of the reference model (`IvfPqReference`): int16 when ``vec_bits <= 16``,
else int32; the OPQ matrix is int16. Vectors are in the hardware layout (`hardware_arrays`):
with ``format.dsub_hw`` set, each of the m sub-vectors is padded with zeros to dsub_hw elements,
so "d" below is d_hw = m * dsub_hw (queries, centroids, codebook rows, OPQ rows and columns).

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
* Tiered designs (``stages.pq_dist.tiers``): the hot lists go to ``pq_hot_<c>`` (fast tier,
  channel c of the fast group, the same PEs as ``pq_codes_<c>``) and the others stay in
  ``pq_codes_<c>``; both images have the layout above and a full list table, where a list the
  image does not hold has 0 beats. The ROM image ``list_tiers`` (uint8 [nlist], 1 = fast tier)
  is the list->tier mapping table the accelerator loads on chip.
* Host-memory designs (``stages.pq_dist.host_tier``, docs/host_tier.md): the ``pq_codes_<c>``
  images keep the layout above but live in host memory (memory ``host``, channel 0: Vitis
  ``HOST[0]``); PQ channel c instead holds ``pq_cache_<c>`` (use ``pq_cache``), a zeroed cache region
  of ``cache_beats`` beats that only the prefetch command writes. A cached list occupies
  `cache_list_beats` beats of every channel's region (the most any channel's table gives it); the
  pinned lists (``host_tier.pinned``) take the region's last beats, the ring the first ``ring_beats``.
* ``ivf_centroids_<c>`` — streamed IVF centroids of the IVFDist PEs on channel c: for every
  centroid index i, every word k (``lanes`` elements) and every PE of the channel (in order)
  that owns an i-th centroid, word k of that centroid; read once per query.
* ``lut_centroids`` — BuildLUT's fetched copy: cell by cell, d elements padded to whole beats.
* ``opq_matrix`` (use ``opq_matrix``, a streamed OPQ matrix): the ROM layout below padded to
  whole beats, on a channel of its own; read once per query.
* ROM images (use ``rom``), in the I/O channel: the index parts the accelerator keeps on chip,
  copied into the PEs' memories by the index-load phase at run time (the index is a run-time
  input: one bitstream serves any index of the same shape): ``codebook`` [256][d] (row j is
  codeword j of every sub-space, the order `build_lut` reads), ``centroids`` [nlist][d] (on-chip
  IVF or BuildLUT centroids), ``opq_matrix`` [d][d], ``list_tiers`` [nlist] (tiered designs);
  row-major, no padding.

The host I/O buffers (queries in, result keys out) are allocated per batch by the host; their
layout (`IoLayout`) is part of the manifest: each query's d elements padded to whole beats, each
query's K uint64 keys padded to whole beats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from fanns.boards import HOST_MEMORY, Board
from fanns.design.ivfpq import IvfPqDesign
from fanns.design.ivfpq_stages import ivf_chunks
from fanns.errors import FannsError
from fanns.images.base import Image, ImageSet, read_images, read_manifest
from fanns.images.ivfpq_channel import iter_pq_channel, pq_channel_bytes, pq_channel_table
from fanns.images.ivfpq_layout import (
    CODE_KIND,
    ID_KIND,
    KEY_BYTES,
    PAD_ID,
    TABLE_WORDS,
    IoLayout,
    IvfStreamLayout,
    PqLayout,
    ceil_div,
    cell_beats,
    elem_bytes,
    elem_dtype,
)
from fanns.index.ivfpq import IvfPqIndexData
from fanns.model.ivfpq.prefetch import pinned_offsets
from fanns.numerics import IvfPqFormat, pad_subspaces
from fanns.outputs import Streamed
from fanns.pe.opq import MATRIX_BITS

__all__ = [  # the layouts are re-exported: one import serves packer and readers
    "CODE_KIND",
    "ID_KIND",
    "KEY_BYTES",
    "PAD_ID",
    "TABLE_WORDS",
    "IoLayout",
    "IvfStreamLayout",
    "PqLayout",
    "elem_bytes",
    "elem_dtype",
    "Image",
    "MemoryImages",
    "pack",
    "iter_pq_channel",
    "pq_channel_bytes",
    "pq_channel_table",
    "unpack_pq_channel",
    "pack_ivf_stream",
    "pack_cells",
    "stored_centroids",
    "unpack_lists",
    "pq_layouts",
    "hot_lists",
    "ivf_stream_layouts",
    "quantised_arrays",
    "hardware_arrays",
    "image_summary",
    "cache_list_beats",
]
MANIFEST_VERSION = 1


# -- images -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryImages(ImageSet):
    """All images of one design plus the I/O layout; `write` / `read` a folder with manifest.json."""

    io: IoLayout
    io_channel: tuple[str, int]
    info: dict = field(default_factory=dict)

    def by_use(self, use: str) -> list[Image]:
        return [img for img in self.images if img.use == use]

    def manifest(self) -> dict:
        return {
            "version": MANIFEST_VERSION,
            "io": {**self.io.to_dict(), "memory": self.io_channel[0], "channel": self.io_channel[1]},
            "info": self.info,
            "images": [img.record() for img in self.images],
        }

    @classmethod
    def read(cls, folder: Path) -> MemoryImages:
        """Load a folder written by `write`, checking every file's size and sha256."""
        folder = Path(folder)
        man = read_manifest(folder)
        if man.get("version") != MANIFEST_VERSION:
            raise FannsError(f"{folder}/manifest.json: version {man.get('version')!r}, expected {MANIFEST_VERSION}")
        images = read_images(folder, man)
        io = man["io"]
        io_layout = IoLayout.from_dict(io)
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


def hardware_arrays(fmt: IvfPqFormat, q: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`quantised_arrays` in the hardware layout: every sub-vector padded to `fmt.dsub_hw` with
    zeros (centroids, codebook, OPQ rows and columns; `fanns.numerics.pad_subspaces`)."""
    out = dict(q)
    out["centroids"] = fmt.pad(q["centroids"])
    out["codebook"] = pad_subspaces(q["codebook"], 1, fmt.dsub_padded)
    if "opq_matrix" in q:
        out["opq_matrix"] = fmt.pad_matrix(q["opq_matrix"])
    return out


def _check_index(design: IvfPqDesign, data: IvfPqIndexData) -> None:
    idx = design.index
    got = {"d": data.d, "m": data.m, "nlist": data.nlist, "n": data.ntotal, "opq": data.opq_matrix is not None}
    want = {"d": idx.d, "m": idx.m, "nlist": idx.nlist, "n": idx.n, "opq": idx.opq}
    for key in want:
        if got[key] != want[key]:
            raise FannsError(
                f"the index does not match the design: {key}={got[key]} "
                f"in the index, {want[key]} in design.yaml ({idx.factory})",
                hint="pass the exploration folder the design was made from",
            )
    if data.ntotal and int(data.ids.max()) >= PAD_ID:
        raise FannsError(
            f"vector id {int(data.ids.max())} collides with the padding id {PAD_ID}", hint="ids must be below 2**32 - 1"
        )


def _group(board: Board, kind: str):
    for g in board.memory:
        if g.kind == kind:
            return g
    raise FannsError(
        f"board {board.name} has no memory group {kind!r}", hint=f"groups: {', '.join(g.kind for g in board.memory)}"
    )


def pq_layouts(design: IvfPqDesign, use: str = "pq_codes") -> list[tuple[object, PqLayout]]:
    """(ChannelUse, PqLayout) of every PQ-code channel (`use` pq_hot: the fast tier's), in
    design.yaml order."""
    pq = design.stages.pq_dist
    out = []
    for ch in design.memory:
        if ch.use == use:
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
        out.append(
            (
                ch,
                IvfStreamLayout(
                    design.format.d_hw, st.lanes, design.format.vec_bits, port_bits, tuple(chunks[i] for i in pes), pes
                ),
            )
        )
    return out


def opq_stream_layout(design: IvfPqDesign, port_bits: int) -> tuple[object, IvfStreamLayout] | None:
    """(ChannelUse, IvfStreamLayout) of a streamed OPQ matrix, or None: the matrix is read like
    the streamed centroids of one PE whose d "centroids" are its rows (int16 elements, `lanes` of
    a word), so the same reader and word picker serve it (`fanns.arch.ivfpq.ivf_stream`)."""
    opq = design.stages.opq
    if opq is None or opq.storage != "stream":
        return None
    ch = next(ch for ch in design.memory if ch.use == "opq_matrix")
    d = design.format.d_hw
    return ch, IvfStreamLayout(d, opq.lanes, MATRIX_BITS, port_bits, ((0, d),), (0,))


def hot_lists(design: IvfPqDesign) -> np.ndarray:
    """[nlist] bool: the lists of a tiered design's fast tier (none without tiers)."""
    hot = np.zeros(design.index.nlist, dtype=bool)
    tiers = design.stages.pq_dist.tiers
    if tiers is not None:
        hot[list(tiers.hot)] = True
    return hot


def unpack_pq_channel(layout: PqLayout, raw: bytes) -> dict[int, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Inverse of `iter_pq_channel` (its pieces joined): {cell: {global pe: (ids, codes, pad)}} of every share
    (padding items included, `pad` marks them) of the lists the image holds (a tier's image
    leaves out the others: 0 beats for a non-empty share)."""
    pb, m = layout.port_bytes, layout.m
    ipu, bpu, ipb = layout.codes_per_unit, layout.beats_per_unit, layout.ids_per_beat
    pch = len(layout.channel_pes)
    buf = np.frombuffer(raw, dtype=np.uint8)
    table = buf[: layout.nlist * TABLE_WORDS * 4].view("<u4").reshape(layout.nlist, TABLE_WORDS)
    out = {}
    for cell in range(layout.nlist):
        start, nbeats, share, _count = (int(v) for v in table[cell])
        if nbeats == 0 and share > 0:
            continue
        beats = buf[start * pb : (start + nbeats) * pb].reshape(nbeats, pb)
        sched = layout.schedule(share)
        if sched.shape[0] != nbeats:
            raise ValueError(f"cell {cell}: {nbeats} beats in the table, the schedule has {sched.shape[0]}")
        units = share // ipu
        code_rows = np.zeros((pch, units * bpu, pb), dtype=np.uint8)
        id_bytes = np.zeros((pch, ceil_div(share, ipb), pb), dtype=np.uint8)
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
    raw = (
        np.ascontiguousarray(centroids_fx.astype(elem_dtype(vec_bits)))
        .view(np.uint8)
        .reshape(centroids_fx.shape[0], -1)
    )
    beats = cell_beats(centroids_fx.shape[1], vec_bits, port_bits)
    out = np.zeros((raw.shape[0], beats * port_bits // 8), dtype=np.uint8)
    out[:, : raw.shape[1]] = raw
    return out.tobytes(), beats


def stored_centroids(images: MemoryImages) -> np.ndarray:
    """[nlist, d_hw] the cell centroids as the device holds them (fixed point, padded sub-vectors):
    from the `centroids` ROM, or, where there is none (IVF centroids streamed and BuildLUT's
    fetched), from BuildLUT's `lut_centroids` image, cell by cell without the beat padding."""
    names = {img.name for img in images.images}
    if "centroids" in names:
        return images.get("centroids").array().astype(np.int64)
    img = images.get("lut_centroids")
    lay = img.layout
    rows = np.frombuffer(img.data, dtype=np.uint8).reshape(lay["nlist"], -1)[:, : lay["d"] * lay["elem_bytes"]]
    return np.ascontiguousarray(rows).view(f"<i{lay['elem_bytes']}").astype(np.int64)


def _rom(name: str, arr: np.ndarray, dtype: np.dtype, io) -> Image:
    arr = np.ascontiguousarray(arr.astype(dtype))
    return Image(name, "rom", io.memory, io.channel, arr.tobytes(), {"dtype": dtype.str, "shape": list(arr.shape)})


def pack(design: IvfPqDesign, data: IvfPqIndexData, board: Board | None = None) -> MemoryImages:
    """Every memory image of `design` serving `data` (see the module docstring)."""
    _check_index(design, data)
    board = board or design.target_board()
    fmt, st = design.format, design.stages
    q = hardware_arrays(fmt, quantised_arrays(design, data))
    io_ch = next(ch for ch in design.memory if ch.use == "io")
    first = _group(board, io_ch.memory)
    images: list[Image] = []
    hot = hot_lists(design)
    tiered = st.pq_dist.tiers is not None
    host_tier = st.pq_dist.host_tier
    for use, name, mask in (("pq_codes", "pq_codes", ~hot if tiered else None), ("pq_hot", "pq_hot", hot)):
        for c, (ch, layout) in enumerate(pq_layouts(design, use)):
            lay = layout.to_dict() | (
                {"tier": "fast" if use == "pq_hot" else "slow", "lists": int(mask.sum())} if tiered else {}
            )
            codes = Streamed(pq_channel_bytes(layout, data, mask), partial(iter_pq_channel, layout, data, mask))
            where = (HOST_MEMORY, 0) if host_tier is not None else (ch.memory, ch.channel)
            images.append(Image(f"{name}_{c}", use, *where, codes, lay))
    if host_tier is not None:
        beats = host_tier.cache_beats(st.pq_dist.channels, st.pq_dist.port_bits)
        nbytes = beats * st.pq_dist.port_bits // 8
        list_beats = np.max([pq_channel_table(lay, data)[:, 1] for _, lay in pq_layouts(design)], axis=0)
        pinned = pinned_offsets(list_beats, host_tier.pinned, beats, "stages.pq_dist.host_tier.pinned (in beats)")
        for c, (ch, _layout) in enumerate(pq_layouts(design)):
            lay = {"port_bits": st.pq_dist.port_bits, "cache_beats": beats}
            images.append(
                Image(f"pq_cache_{c}", "pq_cache", ch.memory, ch.channel, Streamed(nbytes, _zeros(nbytes)), lay)
            )
    for c, (ch, layout) in enumerate(ivf_stream_layouts(design, first.port_bits)):
        images.append(
            Image(
                f"ivf_centroids_{c}",
                "ivf_centroids",
                ch.memory,
                ch.channel,
                pack_ivf_stream(layout, q["centroids"]),
                layout.to_dict(),
            )
        )
    dt = elem_dtype(fmt.vec_bits)
    for ch in design.memory:
        if ch.use == "lut_centroids":
            raw, cell_beats = pack_cells(q["centroids"], fmt.vec_bits, first.port_bits)
            lay = {
                "d": fmt.d_hw,
                "elem_bytes": dt.itemsize,
                "port_bits": first.port_bits,
                "nlist": data.nlist,
                "cell_beats": cell_beats,
            }
            images.append(Image("lut_centroids", "lut_centroids", ch.memory, ch.channel, raw, lay))
    codebook_rows = q["codebook"].transpose(1, 0, 2).reshape(256, fmt.d_hw)
    images.append(_rom("codebook", codebook_rows, dt, io_ch))
    if st.ivf_dist.storage != "stream" or st.build_lut.centroids != "memory":
        images.append(_rom("centroids", q["centroids"], dt, io_ch))
    streamed_opq = opq_stream_layout(design, first.port_bits)
    if streamed_opq is not None:
        ch, layout = streamed_opq
        raw = pack_ivf_stream(layout, q["opq_matrix"])
        lay = layout.to_dict() | {"dtype": "<i2", "shape": [fmt.d_hw, fmt.d_hw]}
        images.append(Image("opq_matrix", "opq_matrix", ch.memory, ch.channel, raw, lay))
    elif "opq_matrix" in q:
        images.append(_rom("opq_matrix", q["opq_matrix"], np.dtype("<i2"), io_ch))
    if tiered:
        images.append(_rom("list_tiers", hot, np.dtype("u1"), io_ch))
    for img in images:
        if img.memory == HOST_MEMORY:
            continue  # host memory: the lists of an index larger than the board (no capacity to check here)
        cap = _group(board, img.memory).capacity_bytes
        if img.nbytes > cap:
            raise FannsError(
                f"memory image {img.name} needs {img.nbytes / 2**20:.1f} MiB, "
                f"channel {img.memory}[{img.channel}] holds {cap / 2**20:.1f} MiB",
                hint="use more PQ-code channels (stages.pq_dist.channels) or a board with larger channels",
            )
    info = {
        "index": design.index.factory,
        "nlist": data.nlist,
        "n": data.ntotal,
        "d": fmt.d,
        "m": fmt.m,
        "metric": data.metric,
    }
    if tiered:
        info["tiers"] = {
            "fast": st.pq_dist.tiers.memory,
            "slow": st.pq_dist.memory,
            "hot_lists": [int(i) for i in np.nonzero(hot)[0]],
        }
    if host_tier is not None:
        info["host_tier"] = {
            "cache_bytes": host_tier.cache_bytes,
            "cache_beats": host_tier.cache_beats(st.pq_dist.channels, st.pq_dist.port_bits),
            "port_bits": st.pq_dist.port_bits,
            **({"pinned": list(host_tier.pinned), "ring_beats": min(pinned.values(), default=beats)} if pinned else {}),
        }
    return MemoryImages(
        tuple(images),
        IoLayout.of(fmt, design.k, first.port_bits),
        (io_ch.memory, io_ch.channel),
        info,
    )


def _zeros(nbytes: int, piece: int = 1 << 24):
    """A producer of `nbytes` zero bytes in pieces of at most `piece` (a cache region is never held whole)."""

    def pieces():
        for at in range(0, nbytes, piece):
            yield bytes(min(piece, nbytes - at))

    return pieces


def cache_list_beats(images: MemoryImages) -> np.ndarray:
    """[nlist] int64: the beats a list occupies in a host-memory design's cache ring — the most
    any PQ channel's list table gives it (one offset serves every channel; docs/host_tier.md)."""
    out = None
    for img in images.by_use("pq_codes"):
        lay = img.layout
        nlist = lay["nlist"]
        head = img.content if isinstance(img.content, bytes) else next(iter(img.content.pieces()))
        table = np.frombuffer(head[: nlist * TABLE_WORDS * 4], dtype="<u4").reshape(nlist, TABLE_WORDS)
        beats = table[:, 1].astype(np.int64)
        out = beats if out is None else np.maximum(out, beats)
    if out is None:
        raise FannsError("no PQ-code images: not an IVF-PQ image set")
    return out


def unpack_lists(images: MemoryImages, pes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every list's (ids, codes) in list order, recombined from the PQ-code channel images
    (position i of a list is item i // P of PE i mod P; padding dropped)."""
    shares: dict[int, dict[int, tuple]] = {}
    nlist = None
    for img in images.by_use("pq_codes") + images.by_use("pq_hot"):
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
        where = f"{img.memory}[{img.channel}]" + (" (copied on chip at index load)" if img.use == "rom" else "")
        lines.append(f"{img.file:24s} {where:40s} {img.nbytes:>12,d} bytes")
    return "\n".join(lines)
