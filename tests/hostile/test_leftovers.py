"""Hostile inputs a replay of several hundred cases still found (issue 46, section 6), each refused
cleanly or handled as documented: a trace file behind a dangling link, a vector file too large to
map under an address-space limit, an output folder given as a link to the output it replaces, a
bad graph kind beside an IVF-PQ grid, a base too small for any index, a board with a million
memory channels, float64 .npy vectors."""

from __future__ import annotations

import resource
import subprocess
import sys

import numpy as np
import pytest

from fanns.datasets import load_dataset, write_hdf5
from fanns.datasets.formats import read_vectors
from fanns.errors import FannsError
from fanns.outputs import staged_folder, write_folder
from tests.hostile.helpers import assert_clean_error, child_env
from tests.hostile.inputs import board_data, dataset_folder, files_below, refused, replaced, write_yaml

EXPLORE = ["--recall", "R@10=0.5", "--nlist", "8", "--m", "4", "--no-opq"]
ADDRESS_SPACE = 3 << 30
"""The child's address-space limit (bytes): far below the 16 GiB the header below claims."""


def test_a_trace_behind_a_dangling_link_is_refused(capsys, tmp_path):
    """An existing file was refused but a dangling link passed: the simulator would have written
    its waveforms wherever the link points."""
    (tmp_path / "project").mkdir()
    link = tmp_path / "waves.vcd"
    link.symlink_to(tmp_path / "elsewhere" / "victim.vcd")
    refused(capsys, ["sim", str(tmp_path / "project"), "--trace", str(link)], "--trace", "link")
    assert not (tmp_path / "elsewhere").exists()


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def test_a_file_too_large_to_map_is_a_clean_error(tmp_path):
    """A .fbin of 2^28 x 16 floats (a sparse file: 16 GiB that take no disk) under a 3 GiB
    address-space limit: the mapping fails with ENOMEM, reported as what it is, no traceback."""
    ds = tmp_path / "ds"
    ds.mkdir()
    with open(ds / "base.fbin", "wb") as f:
        f.write(np.array([1 << 28, 16], dtype="<u4").tobytes())
        f.truncate(8 + (1 << 28) * 16 * 4)
    np.save(ds / "query.npy", np.zeros((4, 16), dtype=np.float32))
    run = subprocess.run(
        [sys.executable, "-m", "fanns.cli", "datasets", "info", str(ds)],
        env=child_env(tmp_path / "cache"),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_address_space,
    )
    assert run.returncode != 0
    assert_clean_error(run.stderr, "base.fbin", "16.0 GiB", "ulimit -v")


def test_force_through_a_link_replaces_the_output_it_points_to(tmp_path):
    """`generate --force --out LINK` with LINK a link to a generated project: the project is
    replaced (its user files kept), the link stays a link to it."""
    what, marker = "generated project", "fanns_project.json"
    real = tmp_path / "real"
    write_folder({marker: b"{}\n", "README.md": b"old\n"}, real, False, marker, what)
    (real / "NOTES.txt").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(real)
    with staged_folder(link, True, marker, what) as tmp:
        (tmp / marker).write_bytes(b"{}\n")
        (tmp / "README.md").write_bytes(b"new\n")
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert (real / "README.md").read_bytes() == b"new\n" and (real / "NOTES.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]  # nothing staged is left over


def test_a_dangling_output_link_is_named_as_such(capsys, tmp_path):
    ds = dataset_folder(tmp_path / "ds")
    (tmp_path / "out").symlink_to(tmp_path / "gone")
    refused(capsys, ["explore", str(ds), *EXPLORE, "--out", str(tmp_path / "out"), "--force"], "link to nothing")


def test_a_bad_graph_kind_is_refused_before_any_index_is_trained(capsys, tmp_path):
    ds = dataset_folder(tmp_path / "ds")
    before = files_below(tmp_path)
    refused(capsys, ["explore", str(ds), *EXPLORE, "--graph", "hnsw,bogus", "--out", str(tmp_path / "out")], "bogus")
    assert files_below(tmp_path) == before


@pytest.mark.parametrize("n", [1, 30])
def test_a_base_too_small_for_an_index_says_how_many_it_needs(capsys, tmp_path, n):
    ds = dataset_folder(tmp_path / "ds", base=np.random.default_rng(0).standard_normal((n, 16)).astype(np.float32))
    msg = refused(capsys, ["explore", str(ds), *EXPLORE, "--out", str(tmp_path / "out")], f"{n} base vector", "256")
    assert "1..0" not in msg


@pytest.mark.parametrize(("key", "value", "fragment"), [("count", 1_000_000, "64"), ("port_bits", 72, "AXI")])
def test_board_memory_is_bounded_by_what_hardware_has(capsys, tmp_path, key, value, fragment):
    path = write_yaml(tmp_path / "b.yaml", replaced(board_data(), f"memory.0.{key}", value))
    refused(capsys, ["boards", str(path)], key, fragment)


def test_float64_npy_vectors_read_as_the_hdf5_reader_reads_them(tmp_path):
    """`fanns run --queries q.npy` refused float64 while an HDF5 set of float64 was accepted:
    both now read float32."""
    rng = np.random.default_rng(1)
    base, queries = rng.standard_normal((300, 8)), rng.standard_normal((5, 8))
    np.save(tmp_path / "q.npy", queries)
    got = read_vectors(tmp_path / "q.npy")
    assert got.dtype == np.float32 and np.array_equal(got, queries.astype(np.float32))
    folder = dataset_folder(tmp_path / "ds", base=base, queries=queries)
    write_hdf5(tmp_path / "set.hdf5", base, queries, "l2")
    from_npy, from_hdf5 = load_dataset(str(folder)), load_dataset(str(tmp_path / "set.hdf5"))
    assert np.array_equal(np.asarray(from_npy.base), np.asarray(from_hdf5.base))
    assert np.asarray(from_npy.queries).dtype == np.asarray(from_hdf5.queries).dtype == np.float32
    np.save(tmp_path / "huge.npy", np.full((2, 8), 1e300))
    with pytest.raises(FannsError, match="non-finite"):
        read_vectors(tmp_path / "huge.npy")
