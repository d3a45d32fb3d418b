"""One PQ-code channel's memory image, produced a list at a time.

Why a stream: at 10M vectors and more, a channel's image is hundreds of MiB to GiB; building it
whole (and joining its pieces) holds it in RAM two or three times. Here the list table comes
from the list sizes alone, then every list's scheduled beats follow one list at a time, so the
packer (`fanns.images.ivfpq.pack`) makes each channel a `Streamed` image that is written and
hashed holding only the largest list. The layout is `fanns.images.ivfpq`'s (its docstring:
"pq_codes_<c>").
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from fanns.images.ivfpq_layout import ID_KIND, PAD_ID, TABLE_WORDS, PqLayout, ceil_div
from fanns.index.ivfpq import IvfPqIndexData


def pq_channel_table(layout: PqLayout, data: IvfPqIndexData, lists: np.ndarray | None = None) -> np.ndarray:
    """[nlist, TABLE_WORDS] uint32 list table of one PQ-code channel: (start_beat, beats,
    share_items, count) per list; a list `lists` leaves out keeps 0 beats. Needs only the list
    sizes, so the header is known before any list is packed."""
    table = np.zeros((layout.nlist, TABLE_WORDS), dtype="<u4")
    beat = layout.header_beats
    for cell, count in enumerate(data.list_sizes.tolist()):
        share = layout.share_items(count)
        nbeats = 0 if lists is not None and not lists[cell] else layout.list_beats(count)
        table[cell] = (beat, nbeats, share, count)
        beat += nbeats
    return table


def pq_channel_bytes(layout: PqLayout, data: IvfPqIndexData, lists: np.ndarray | None = None) -> int:
    """Size in bytes of one PQ-code channel's image (`iter_pq_channel`), from the list sizes alone."""
    table = pq_channel_table(layout, data, lists)
    return (layout.header_beats + int(table[:, 1].sum())) * layout.port_bytes


def _pack_list(layout: PqLayout, ids: np.ndarray, codes: np.ndarray, share: int, nbeats: int) -> bytes:
    """One list's scheduled beats (`PqLayout.schedule`) on one channel."""
    pb, m = layout.port_bytes, layout.m
    ipu, bpu, ipb = layout.codes_per_unit, layout.beats_per_unit, layout.ids_per_beat
    pch = len(layout.channel_pes)
    units = share // ipu
    id_beats = ceil_div(share, ipb)
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
    if out.shape[0] != nbeats:
        raise ValueError(f"{out.shape[0]} beats packed, the list table says {nbeats}")
    return out.tobytes()


def iter_pq_channel(layout: PqLayout, data: IvfPqIndexData, lists: np.ndarray | None = None) -> Iterator[bytes]:
    """The image of one PQ-code channel as consecutive pieces: the header (list table), then
    every list's scheduled beats, one list at a time — so a writer holds one list, never the
    channel's image. With `lists` ([nlist] bool) only those lists' beats
    (a tier's image): the others keep their table entry with 0 beats (share_items and count
    as always)."""
    table = pq_channel_table(layout, data, lists)
    header = np.zeros(layout.header_beats * layout.port_bytes, dtype=np.uint8)
    raw = table.view(np.uint8).ravel()
    header[: raw.size] = raw
    yield header.tobytes()
    for cell in range(layout.nlist):
        _start, nbeats, share, count = (int(v) for v in table[cell])
        if nbeats and count:
            yield _pack_list(layout, data.list_ids(cell), data.list_codes(cell), share, nbeats)
