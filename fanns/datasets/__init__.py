"""Datasets: readers/writers for the ANN benchmark formats, dataset specs, built-ins, ground truth.

The API other parts of fanns use::

    ds = load_dataset("builtin:sift-10k")      # or an HDF5 file, or a directory
    ds.base, ds.queries, ds.metric, ds.cache_dir
    ds.groundtruth(10)                          # [nq, 10] int64, exact, cached
"""

from fanns.datasets.builtins import BUILTINS, list_builtins, load_builtin
from fanns.datasets.cache import cache_root
from fanns.datasets.dataset import Dataset, exact_knn, normalize_rows
from fanns.datasets.formats import read_vectors, save_npy, write_vectors
from fanns.datasets.hdf5 import read_hdf5, write_hdf5
from fanns.datasets.loader import load_dataset

__all__ = [
    "BUILTINS",
    "Dataset",
    "cache_root",
    "exact_knn",
    "list_builtins",
    "load_builtin",
    "load_dataset",
    "normalize_rows",
    "read_hdf5",
    "read_vectors",
    "save_npy",
    "write_hdf5",
    "write_vectors",
]
