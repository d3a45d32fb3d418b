"""`fanns explore --cluster`: the indexes are trained on an existing Dask cluster (a scheduler and
a worker started as separate processes, reached by address only) and the exploration is the one
trained here: the same index files, the same curves, formats and chosen nprobe."""

import json
import pickle

import pytest

from fanns.cli import main
from fanns.datasets import load_dataset
from fanns.errors import FannsError
from fanns.explore.ivfpq_training import DatasetRef
from tests.dask_cluster import dask_cluster, task_kinds  # noqa: F401 - a fixture

SPEC = "builtin:sift-10k"
ARGS = ["--recall", "R@10=0.5", "--recall", "R@1=0.3", "--nlist", "16,32", "--m", "4,8", "--queries", "100"]
SAME = ("index", "curve", "selection_curve", "holdout_curve", "format", "list_sizes", "probes")


def measured_here(goals: dict) -> dict:
    """A record's goals without the CPU QPS (timed, so never equal twice)."""
    return {g: {k: v for k, v in r.items() if not k.startswith("cpu")} for g, r in goals.items()}


def explore(out, *extra: str) -> dict:
    assert main(["explore", SPEC, *ARGS, "--out", str(out), *extra]) == 0
    return json.loads((out / "explore.json").read_text())


@pytest.mark.slow  # a Dask cluster and two explorations: about a minute
def test_indexes_trained_on_the_cluster_equal_those_trained_here(dask_cluster, tmp_path, capsys):  # noqa: F811
    here = explore(tmp_path / "here")
    there = explore(tmp_path / "there", "--cluster", dask_cluster)
    assert "run_job" in task_kinds(dask_cluster)  # the worker process trained them
    assert "cluster_training" in there["timing"]["seconds"]
    # nlist by nlist; the PQ8 and OPQ indexes take the coarse quantizer of the PQ4 index in the second round
    per_nlist = ["IVF{0},PQ4", "OPQ4,IVF{0},PQ4", "IVF{0},PQ8", "OPQ8,IVF{0},PQ8"]
    assert [r["index"] for r in there["indexes"]] == [f.format(n) for n in (16, 32) for f in per_nlist]
    for a, b in zip(here["indexes"], there["indexes"], strict=True):
        assert {k: a[k] for k in SAME} == {k: b[k] for k in SAME}
        assert measured_here(a["goals"]) == measured_here(b["goals"])
        assert (tmp_path / "here" / a["path"]).read_bytes() == (tmp_path / "there" / b["path"]).read_bytes()
    assert here["best"] == there["best"]
    capsys.readouterr()
    refused = tmp_path / "refused"
    assert main(["explore", SPEC, *ARGS, "--out", str(refused), "--cluster", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "--cluster tcp://127.0.0.1:1: no Dask scheduler answered" in err and "Traceback" not in err
    assert not refused.exists()


def test_a_worker_refuses_other_data_and_the_error_arrives_whole():
    ds = load_dataset(SPEC)
    ref = DatasetRef.of(SPEC, ds)
    assert ref.spec == SPEC and ref.open().content_hash() == ds.content_hash()
    with pytest.raises(FannsError, match="differs from the one explored") as info:
        DatasetRef(SPEC, "0" * 32).open()
    arrived = pickle.loads(pickle.dumps(info.value))  # as a Dask or Ray worker sends it back
    assert (arrived.message, arrived.hint) == (info.value.message, info.value.hint)
    assert "shared file system" in arrived.hint


def test_a_file_spec_is_made_absolute_for_workers_elsewhere(tmp_path, monkeypatch):
    ds = load_dataset(SPEC)
    monkeypatch.chdir(tmp_path)
    assert DatasetRef.of("data/set.hdf5", ds).spec == str(tmp_path / "data" / "set.hdf5")
