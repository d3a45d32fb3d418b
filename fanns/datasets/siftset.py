"""`builtin:sift-photos`: real SIFT descriptors, made on this machine from PyPI only.

SIFT1M and SIFT100M (the FANNS paper's sets) are 128-d uint8 SIFT descriptors of photographs; they
are not on PyPI. This set is the same kind of vector from the photographs and micrographs that
scikit-image ships in its wheel (`skimage/data`, `PHOTOS`), extracted with OpenCV's SIFT
(opencv-python-headless): 4 x 4 cells of 8-bin gradient-orientation histograms, normalised,
clipped at 0.2 and scaled to 0..255, so every element is an integer that fits a uint8, as in
SIFT1M. The contrast threshold is 0 (OpenCV's default is 0.04): every scale-space extremum that
passes the edge test gives a descriptor, so 19 photographs give over 100,000. The retina scan
(1411 x 1411) gives 40 % of them: like real collections, the set is unbalanced.

Queries: `SIFT_QUERIES` descriptors held out by a seeded draw; base rows repeating an earlier row
or a query are dropped.

Identical from run to run and from machine to machine: pinned opencv-python-headless and
scikit-image versions (the photos and the extractor), the photos in a fixed order, decoded from
their bytes, and OpenCV's optimised code off while it extracts (`cv2.setUseOptimized(False)`).
Why the last: OpenCV picks its SIFT and filter kernels by the CPU (AVX2, AVX-512 or SSE4 paths
dispatched at run time, and Intel IPP's own dispatch), and their float rounding moves keypoints:
on a CPU without AVX2 the default path gave other descriptors (another sha256) than the AVX2
machine the set was first recorded on. With the optimisations off every x86-64 CPU runs the wheel's
baseline (SSE3) code. That code is not repeatable on several threads (two runs on 2 threads gave
102,423 and 102,409 descriptors), so it runs on one: the same sha256 run after run, and with
OpenCV's AVX, SSE4 and AVX2 paths also disabled by OPENCV_CPU_DISABLE (checked here).

Licences: scikit-image ships the photos under its BSD-3-Clause licence; each photo's source and terms
are in the docstring of its `skimage.data` function (most are public domain or CC0; the motorcycle
pair is from the Middlebury 2014 stereo set). Keep those terms with any copy of the descriptors.
Cost to build once here: about 5 s of one core (docs/datasets.md, "sift-photos").
"""

from __future__ import annotations

from importlib import metadata
from importlib.resources import files

import numpy as np

from fanns.datasets.textset import held_out
from fanns.errors import FannsError

SIFT_DIM = 128
SIFT_QUERIES = 1000
SIFT_SEED = 11
CONTRAST_THRESHOLD = 0.0
VERSIONS = {"opencv-python-headless": "5.0.0.93", "scikit-image": "0.26.0"}
"""Pinned: another OpenCV could change the descriptors, another scikit-image the photos."""
PHOTOS = (
    "astronaut.png",
    "brick.png",
    "camera.png",
    "cell.png",
    "chelsea.png",
    "clock_motion.png",
    "coffee.png",
    "coins.png",
    "grass.png",
    "gravel.png",
    "hubble_deep_field.jpg",
    "ihc.png",
    "moon.png",
    "motorcycle_left.png",
    "motorcycle_right.png",
    "page.png",
    "retina.jpg",
    "rocket.jpg",
    "text.png",
)
"""The photographs and micrographs of `skimage/data` (its drawings, test patterns and the
multi-page TIFFs are left out)."""


def _check_versions() -> None:
    for package, pinned in VERSIONS.items():
        try:
            found = metadata.version(package)
        except metadata.PackageNotFoundError:
            found = None
        if found != pinned:
            raise FannsError(
                f"builtin:sift-photos is defined with {package}=={pinned}, "
                + ("it is not installed" if found is None else f"found {found}"),
                hint="install the optional extra: pip install 'fanns[sift]' (it pins the versions)",
            )


def descriptors(photos: tuple[str, ...] = PHOTOS) -> np.ndarray:
    """The SIFT descriptors (uint8, one row each) of `photos` from scikit-image's data folder, in
    the photos' order and OpenCV's keypoint order within a photo."""
    _check_versions()
    import cv2  # optional dependency: the sift extra

    folder = files("skimage") / "data"  # scikit-image's data files, read without importing it
    sift = cv2.SIFT_create(contrastThreshold=CONTRAST_THRESHOLD)
    rows = []
    optimised, threads = cv2.useOptimized(), cv2.getNumThreads()
    cv2.setUseOptimized(False)  # the same code on every CPU, on one thread (module docstring)
    cv2.setNumThreads(1)
    try:
        for name in photos:
            image = cv2.imdecode(np.frombuffer((folder / name).read_bytes(), np.uint8), cv2.IMREAD_GRAYSCALE)
            if image is None:
                hint = "reinstall: pip install 'fanns[sift]'"
                raise FannsError(f"scikit-image's {name} does not decode", hint=hint)
            _, found = sift.detectAndCompute(image, None)
            if found is not None:
                rows.append(found)
    finally:
        cv2.setUseOptimized(optimised)
        cv2.setNumThreads(threads)
    x = np.concatenate(rows)
    if not np.array_equal(x, np.clip(np.round(x), 0, 255)):
        raise FannsError(
            "OpenCV's SIFT gave descriptors that are not bytes", hint="reinstall: pip install 'fanns[sift]'"
        )
    return x.astype(np.uint8)


def make_sift_set(x: np.ndarray, nq: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Base and queries from descriptors `x`: `nq` distinct rows drawn with `seed` are the queries;
    the base keeps the other rows' order, without repeats and without rows equal to a query."""
    if x.shape[0] <= 2 * nq:
        raise FannsError(f"{x.shape[0]} descriptors are too few for {nq} queries", hint="use more photos")
    seen: set[bytes] = set()
    queries = []
    for i in held_out(x.shape[0], x.shape[0], seed):
        key = x[i].tobytes()
        if key not in seen:
            seen.add(key)
            queries.append(i)
            if len(queries) == nq:
                break
    in_base = np.ones(x.shape[0], dtype=bool)
    in_base[queries] = False
    base = []
    for i in np.flatnonzero(in_base):
        key = x[i].tobytes()
        if key not in seen:
            seen.add(key)
            base.append(i)
    return x[np.asarray(base)], x[np.asarray(queries)]


def build() -> tuple[np.ndarray, np.ndarray]:
    """The full `builtin:sift-photos` arrays."""
    return make_sift_set(descriptors(), SIFT_QUERIES, SIFT_SEED)
