"""The `model` backend: the device emulated by the design's bit-accurate reference model.

Why it executes the driver's register writes instead of answering `search()` directly: so the
model backend checks the driver's plan like the other backends do. At index load it rebuilds the
index from the device memory the address registers point to (the ROM and PQ-code images, parsed
with the packer's own layouts), and every run reads its queries from the query buffer and writes
the result keys of `fanns.reference.ivfpq_streams.DesignReference` into the result buffer, in the
layouts of `IoLayout`. For an RTL project it also checks the run-time parameters as the core
does (a refused run sets `status.bad_params`). A step-wise run (the HLS kernel's mode 1,
docs/stepwise.md) reads the cell lists and seed keys from their buffers and writes
`DesignReference.search_keys_cells_fx`'s keys.
"""

from __future__ import annotations

import numpy as np

from fanns.driver.ivfpq.backend import RegisterDevice
from fanns.images.ivfpq import Image, MemoryImages, stored_centroids, unpack_lists
from fanns.index.ivfpq import IvfPqIndexData
from fanns.reference.ivfpq_streams import DesignReference


def _real(fx: np.ndarray, scale: float) -> np.ndarray:
    """Float values whose quantisation at `scale` gives back the integers `fx` exactly."""
    return np.asarray(fx, dtype=np.float64) / scale


def index_from_images(images: MemoryImages, design, metric: str) -> IvfPqIndexData:
    """The index a device holding `images` serves, as float arrays that quantise back to the
    images' fixed-point values (checked), with the lists recombined from the PQ-code images."""
    fmt = design.format
    d, m = fmt.d_hw, fmt.m  # images hold the hardware layout (padded sub-vectors)
    names = {img.name for img in images.images}
    cent_fx = fmt.unpad(stored_centroids(images))
    book = images.get("codebook").array().astype(np.int64).reshape(256, m, d // m)[:, :, : fmt.dsub]
    book_fx = np.ascontiguousarray(book.transpose(1, 0, 2))
    opq_fx = None
    if "opq_matrix" in names:
        opq_fx = fmt.unpad(np.swapaxes(fmt.unpad(images.get("opq_matrix").array()), 0, 1)).T
    lists = unpack_lists(images, design.stages.pq_dist.pes)
    sizes = np.array([ids.shape[0] for ids, _ in lists], dtype=np.int64)
    data = IvfPqIndexData(
        centroids=_real(cent_fx, fmt.scale),
        codebook=_real(book_fx, fmt.scale),
        opq_matrix=None if opq_fx is None else _real(opq_fx, float(1 << fmt.opq_frac_bits)),
        offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        ids=np.concatenate([ids for ids, _ in lists]).astype(np.int64),
        codes=np.concatenate([codes for _, codes in lists]).reshape(-1, m).astype(np.uint8),
        metric=metric,
    )
    if not (
        np.array_equal(fmt.quantize(data.centroids), cent_fx) and np.array_equal(fmt.quantize(data.codebook), book_fx)
    ):
        raise RuntimeError("model: the index read from device memory does not quantise back to its images")
    return data


class ModelBackend(RegisterDevice):
    """See the module docstring."""

    name = "model"

    def attach(self, project, iface) -> None:
        super().attach(project, iface)
        self.reference: DesignReference | None = None

    def _load_index(self) -> None:
        images = []
        for img in self.project.images.images:  # layouts from the manifest, bytes from device memory
            raw = self.at(img.name)[: img.nbytes].tobytes()
            images.append(Image(img.name, img.use, img.memory, img.channel, raw, img.layout))
        mem = MemoryImages(tuple(images), self.project.io, (self.project.io_bank.memory, self.project.io_bank.channel))
        self.reference = DesignReference(
            self.project.design, index_from_images(mem, self.project.design, self.project.metric)
        )

    def _set(self, name: str, value: int) -> None:
        for off, word in self.iface.encode(name, value):
            self.words[off] = word

    def execute(self) -> None:
        iface, design, io = self.iface, self.project.design, self.project.io
        nq = self.decode("nq")
        if iface.kind == "rtl":
            nprobe, k = self.decode("nprobe"), self.decode("k")
            if not (1 <= nprobe <= design.nprobe and 1 <= k <= design.k):
                self._set("status", (self.reference is not None) | 0b10)
                return
            if self.reference is None:
                self._load_index()
            self._set("status", 1)
        else:
            nprobe, k = design.nprobe, design.k
            if self.decode("load"):
                self._load_index()
        if nq == 0:
            return
        if self.reference is None:
            raise RuntimeError("model: a search run before the index was loaded (the on-chip memories are empty)")
        beat = io.port_bits // 8
        q_stride, r_stride = io.query_beats * beat, io.result_beats * beat
        q_fx = io.unpack_queries(self.at("queries")[: nq * q_stride].tobytes(), nq)
        if iface.stepwise and self.decode("mode"):  # the kernel: any non-zero mode is step-wise
            cells = io.unpack_cells(self.at("cells"), nq, nprobe)
            seeds = io.unpack_results(self.at("seeds").tobytes(), nq)
            keys = self.reference.search_keys_cells_fx(q_fx, cells, seeds, k).astype("<u8")
        else:
            keys = self.reference.search_keys_fx(q_fx, nprobe, k).astype("<u8")
        out = self.at("results")[: nq * r_stride].reshape(nq, r_stride)
        out[:, : 8 * k] = keys.view(np.uint8).reshape(nq, 8 * k)
