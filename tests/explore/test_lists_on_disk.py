"""Inverted lists on disk (`fanns.index.ivfpq_lists`): an index filled shard by shard into faiss's
on-disk lists holds what the index filled in RAM holds, for every way the explorer trains one;
its folder can move; an exploration with `--lists-on-disk` records the same results, reuses its
indexes, and `fanns generate` reads its lists only while they are the ones it wrote."""

import argparse
import json
import shutil

import faiss
import numpy as np
import pytest

from fanns.cli import main
from fanns.datasets import load_dataset
from fanns.datasets.synthetic import clustered
from fanns.errors import FannsError
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.explore.ivfpq_reuse import config_from_args
from fanns.explore.ivfpq_training import DatasetRef, RemoteTraining
from fanns.flow.ivfpq_inputs import load_index
from fanns.index.goals import RecallGoal
from fanns.index.ivfpq import extract, train_index
from fanns.index.ivfpq_lists import ListsOnDisk, lists_on_disk, read_index
from fanns.index.ivfpq_shared import coarse_of, train_rotation, train_shared_index

N, D, NLIST, M = 5000, 32, 24, 8
SHARD = 1300
"""Rows a shard: four shards of 5,000 rows, the last one short."""


@pytest.fixture(scope="module")
def data():
    base, queries = clustered(N, 40, D, seed=5)
    plain = train_index(base, "l2", NLIST, M, False, base, 0)
    return base, queries, plain


def _same_index(a, b, queries) -> None:
    """Equal arrays (centroids, codebook, rotation, lists) and equal search results."""
    x, y = extract(a, "l2"), extract(b, "l2")
    for name in ("centroids", "codebook", "offsets", "ids", "codes"):
        assert np.array_equal(getattr(x, name), getattr(y, name)), name
    assert (x.opq_matrix is None) == (y.opq_matrix is None)
    if x.opq_matrix is not None:
        assert np.array_equal(x.opq_matrix, y.opq_matrix)
    for index in (a, b):
        faiss.extract_index_ivf(index).nprobe = 4
    assert np.array_equal(a.search(queries, 10)[1], b.search(queries, 10)[1])


def _train(kind: str, base, plain, lists):
    if kind == "plain":
        return train_index(base, "l2", NLIST, M, False, base, 0, lists=lists)
    coarse = coarse_of(plain)
    if kind == "shared coarse":
        return train_shared_index(base, "l2", NLIST, 16, None, base, 0, coarse, lists=lists)
    rotation = train_rotation(base, M)
    return train_shared_index(base, "l2", NLIST, M, rotation, base, 0, coarse if kind == "opq" else None, lists=lists)


@pytest.mark.parametrize("kind", ["plain", "shared coarse", "opq", "opq own coarse"])
def test_lists_filled_on_disk_equal_lists_filled_in_ram(kind, data, tmp_path, capfd):
    base, queries, plain = data
    lists = ListsOnDisk(tmp_path / "lists.ivfdata", SHARD)
    on_disk = _train(kind, base, plain, lists)
    assert lists_on_disk(on_disk) and on_disk.ntotal == N
    in_ram = _train(kind, base, plain, None)
    assert not lists_on_disk(in_ram)
    _same_index(in_ram, on_disk, queries[:50])
    assert [p.name for p in tmp_path.iterdir()] == ["lists.ivfdata"]  # the shards are gone
    assert capfd.readouterr().out == ""  # faiss's lines went to the standard error


def test_every_row_is_added_once_and_reported(data, tmp_path):
    base, _, plain = data
    rows = []
    ListsOnDisk(tmp_path / "a.ivfdata", SHARD).fill(_empty(plain), base, "l2", None, lambda _, n: rows.append(n))
    assert rows == [SHARD, SHARD, SHARD, N - 3 * SHARD]


def _empty(plain):
    """A trained, empty copy of `plain`."""
    index = faiss.clone_index(plain)
    index.reset()
    return index


def test_a_moved_folder_reads_its_lists_from_where_it_now_is(data, tmp_path, capfd):
    base, queries, plain = data
    folder = tmp_path / "a"
    index = _empty(plain)
    ListsOnDisk(folder / "IVF.ivfdata", SHARD).fill(index, base, "l2", None, None)
    faiss.write_index(index, str(folder / "IVF.faissindex"))
    moved = shutil.move(folder, tmp_path / "b")
    again = read_index(moved / "IVF.faissindex")
    assert lists_on_disk(again)
    _same_index(plain, again, queries[:50])
    assert capfd.readouterr().out == ""


def test_shards_of_no_rows_are_refused(tmp_path):
    with pytest.raises(FannsError, match="shards of 0"):
        ListsOnDisk(tmp_path / "x.ivfdata", 0)
    with pytest.raises(FannsError, match="named"):
        ListsOnDisk(tmp_path / "x.bin", 10)


GOALS = [RecallGoal(10, 0.5)]


def _explore(out, **kw):
    ds = load_dataset("builtin:sift-10k")
    cfg = ExploreConfig(goals=GOALS, nlists=[32], opq=(False, True), qps_min_seconds=0.01, **kw)
    explorer = IvfPqExplorer(ds, cfg, out)
    return explorer, explorer.run()


@pytest.fixture(scope="module")
def explorations(tmp_path_factory):
    ram = tmp_path_factory.mktemp("ram")
    disk = tmp_path_factory.mktemp("disk")
    return (ram, _explore(ram)[1]), (disk, _explore(disk, lists_on_disk=True, shard_rows=3000)[1])


def _results(record: dict) -> dict:
    """A record without its CPU timings and its lists file."""
    record = {k: v for k, v in record.items() if k != "lists"}
    for goal in record["goals"].values():
        for key in [k for k in goal if k.startswith("cpu")]:
            del goal[key]
    return record


def test_an_exploration_with_lists_on_disk_records_the_same_results(explorations):
    (ram, in_ram), (disk, on_disk) = explorations
    assert [_results(r) for r in in_ram["indexes"]] == [_results(r) for r in on_disk["indexes"]]
    for record in on_disk["indexes"]:
        assert (disk / record["lists"]).is_file() and "lists" not in json.dumps(in_ram["indexes"][0])
        a = load_index(ram, next(r for r in in_ram["indexes"] if r["index"] == record["index"]), "l2")
        b = load_index(disk, record, "l2")
        assert np.array_equal(a.codes, b.codes) and np.array_equal(a.ids, b.ids)
    assert not [p for p in (disk / "indexes").iterdir() if "shards" in p.name]


def test_an_exploration_with_lists_on_disk_reuses_them_and_not_lists_in_ram(explorations, tmp_path):
    (ram, _), (disk, _) = explorations
    copy = shutil.copytree(disk, tmp_path / "disk")
    explorer, _ = _explore(copy, lists_on_disk=True, shard_rows=3000)
    assert len(explorer.reused) == 2
    ram_copy = shutil.copytree(ram, tmp_path / "ram")
    explorer, _ = _explore(ram_copy, lists_on_disk=True, shard_rows=3000)
    assert explorer.reused == []  # its lists are in RAM: trained again onto disk


def test_generate_refuses_lists_changed_since_the_exploration(explorations, tmp_path):
    (_, _), (disk, result) = explorations
    copy = shutil.copytree(disk, tmp_path / "disk")
    record = result["indexes"][0]
    with open(copy / record["lists"], "r+b") as f:
        f.seek(0)
        first = f.read(1)
        f.seek(0)
        f.write(bytes([first[0] ^ 1]))
    with pytest.raises(FannsError, match="changed since"):
        load_index(copy, record, "l2")
    (copy / record["lists"]).unlink()
    with pytest.raises(FannsError, match="not found"):
        load_index(copy, record, "l2")


def test_cli_refuses_shard_rows_without_lists_on_disk_and_lists_on_disk_on_a_cluster(capsys, tmp_path):
    args = ["explore", "builtin:sift-10k", "--recall", "R@10=0.5", "--nlist", "32", "--out", str(tmp_path / "o")]
    assert main([*args, "--shard-rows", "1000"]) == 2
    assert "--lists-on-disk" in capsys.readouterr().err
    assert main([*args, "--lists-on-disk", "--shard-rows", "0"]) == 2
    assert "--shard-rows" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    generate = ["generate", "builtin:sift-10k", "--recall", "R@10=0.5", "--board", "u55c", "--out", str(tmp_path / "p")]
    assert main([*generate, "--shard-rows", "1000"]) == 2
    assert "--lists-on-disk" in capsys.readouterr().err


def test_the_commands_that_explore_on_the_way_pass_lists_on_disk_on():
    args = argparse.Namespace(nlist="32", m=None, opq_mode="both", queries=None, seed=0)
    cfg = config_from_args(argparse.Namespace(**vars(args), lists_on_disk=True, shard_rows=5000), GOALS)
    assert cfg.lists_on_disk and cfg.shard_rows == 5000
    cfg = config_from_args(argparse.Namespace(**vars(args), lists_on_disk=False, shard_rows=None), GOALS)
    assert not cfg.lists_on_disk


def test_lists_on_disk_are_not_filled_on_a_cluster(tmp_path):
    ds = load_dataset("builtin:sift-10k")
    remote = RemoteTraining("tcp://127.0.0.1:8786", DatasetRef.of("builtin:sift-10k", ds))
    cfg = ExploreConfig(goals=GOALS, nlists=[32], lists_on_disk=True)
    with pytest.raises(FannsError, match="not on a cluster"):
        IvfPqExplorer(ds, cfg, tmp_path / "o", remote=remote)


@pytest.mark.parametrize("lists", ["../outside.ivfdata", "/etc/passwd", 3])
def test_generate_refuses_a_lists_entry_outside_the_exploration(explorations, lists):
    (_, _), (disk, result) = explorations
    record = {**result["indexes"][0], "lists": lists}
    with pytest.raises(FannsError, match="lists"):
        load_index(disk, record, "l2")
