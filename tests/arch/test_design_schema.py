"""design.yaml: exact round trip, and clear errors for every kind of bad input."""

import copy
import dataclasses

import pytest
import yaml

from fanns.design.ivfpq import (
    BuildLutStage,
    ChannelUse,
    IndexRef,
    IvfDistStage,
    IvfPqDesign,
    OpqStage,
    PqDistStage,
    SelectStage,
    Stages,
)
from fanns.errors import FannsError
from fanns.index.goals import parse_goal
from fanns.numerics import IvfPqFormat


def make_design(opq: bool = True) -> IvfPqDesign:
    fmt = IvfPqFormat(d=128, m=16, scale=3.5, ivf_shift=4, lut_shift=2, vec_bits=16, lut_bits=16)
    pq = PqDistStage(pes=6, double_buffer=True, memory="hbm", channels=3, port_bits=256)
    memory = [ChannelUse("hbm", 0, "io")]
    memory += [
        ChannelUse("hbm", 1 + c, "pq_codes", tuple(p for p in range(6) if pq.channel_of(p) == c)) for c in range(3)
    ]
    memory += [ChannelUse("hbm", 4, "lut_centroids")]
    return IvfPqDesign(
        board="u55c",
        clock_mhz=140.0,
        util=0.6,
        index=IndexRef(
            factory="OPQ16,IVF1024,PQ16" if opq else "IVF1024,PQ16",
            n=10000,
            d=128,
            nlist=1024,
            m=16,
            opq=opq,
            path="../explore/indexes/x.faissindex",
        ),
        nprobe=8,
        k=10,
        format=fmt,
        stages=Stages(
            opq=OpqStage(16) if opq else None,
            ivf_dist=IvfDistStage(pes=5, lanes=16, storage="bram"),
            sel_cells=SelectStage("hpq", streams=5, s=8, s1=8, key_bits=fmt.ivf_key_bits),
            build_lut=BuildLutStage(pes=2, lanes=16, centroids="memory", channels=1),
            pq_dist=pq,
            sel_k=SelectStage("hpq", streams=6, s=10, s1=10, key_bits=fmt.pq_key_bits),
        ),
        memory=tuple(memory),
        fifo_depth=32,
        slr={"SLR0": ["infra.axil_csr x1"]},
        goal=parse_goal("R@10=0.8"),
        prediction={"qps": 1234.5},
    )


def test_round_trip_through_yaml(tmp_path):
    for opq in (True, False):
        d = make_design(opq)
        d.validate()
        path = tmp_path / f"design_{opq}.yaml"
        d.save(path)
        back = IvfPqDesign.load(path)
        assert back == d
        assert back.to_dict() == d.to_dict()
        assert path.read_text() == yaml.safe_dump(d.to_dict(), sort_keys=False, default_flow_style=None, width=110)


def test_lut_words_round_trip_and_one_keeps_the_old_schema(tmp_path):
    """A design of W LUT words a cycle records `lut_words`; W = 1 writes what designs always had."""
    d = make_design()
    assert "lut_words" not in d.to_dict()["stages"]["pq_dist"]
    wide = dataclasses.replace(
        d, stages=dataclasses.replace(d.stages, pq_dist=dataclasses.replace(d.stages.pq_dist, lut_words=2))
    )
    wide.validate()
    wide.save(tmp_path / "design.yaml")
    back = IvfPqDesign.load(tmp_path / "design.yaml")
    assert back == wide and back.to_dict()["stages"]["pq_dist"]["lut_words"] == 2


def test_channel_blocks_cover_every_pe_once():
    for pes in range(1, 40):
        for channels in range(1, pes + 1):
            st = PqDistStage(pes, True, "hbm", channels, 256)
            counts = st.pes_per_channel()
            assert sum(counts) == pes and max(counts) - min(counts) <= 1 and min(counts) >= 1


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(colour="red"), "colour: unknown key"),
        (lambda d: d.pop("nprobe"), "nprobe: missing key"),
        (lambda d: d["stages"]["ivf_dist"].update(storage="flash"), "stages.ivf_dist.storage"),
        (lambda d: d["stages"]["ivf_dist"].update(pes=0), "stages.ivf_dist.pes: must be at least 1"),
        (lambda d: d["stages"]["ivf_dist"].update(pes="5"), "stages.ivf_dist.pes: must be an integer"),
        (lambda d: d["stages"]["sel_cells"].update(streams=4), "stages.sel_cells: needs streams = ivf_dist.pes"),
        (lambda d: d["stages"]["sel_k"].update(s=12), "stages.sel_k: needs streams = pq_dist.pes and s = k"),
        (lambda d: d["stages"]["sel_k"].update(arch="magic"), "stages.sel_k.arch"),
        (lambda d: d["stages"]["sel_cells"].update(arch="ahpq"), "stages.sel_cells.arch: is 'ahpq'"),
        (lambda d: d["stages"]["sel_k"].update(s1=11), "level-1 length 11 exceeds"),
        (lambda d: d["stages"]["sel_k"].update(s1=9), "stages.sel_k.s1: is 9, but this hpq keeps 10"),
        (lambda d: d["stages"]["sel_k"].update(params={"target": 0.9}), "stages.sel_k.params: hpq has no parameter"),
        (
            lambda d: d["stages"]["sel_k"].update(arch="ahpq", params={"target": "most"}),
            "stages.sel_k.params: {'target': 'most'} are not valid for ahpq",
        ),
        (lambda d: d["stages"].update(opq=None), "stages.opq: must be present exactly when"),
        (lambda d: d["stages"].pop("build_lut"), "stages.build_lut: missing stage"),
        (lambda d: d["stages"]["build_lut"].update(channels=0), "stages.build_lut.channels"),
        (lambda d: d["stages"]["pq_dist"].update(channels=7), "7 channels for 6 PEs"),
        (lambda d: d["memory"].pop(), "0 channel(s) for lut_centroids"),
        (lambda d: d["memory"][1].update(pes=[0]), "feed every PQDist PE exactly once"),
        (lambda d: d["memory"][2].update(channel=1), "assigned twice"),
        (lambda d: d.update(nprobe=2000), "nprobe: 2000 exceeds nlist=1024"),
        (lambda d: d.update(util=1.5), "util: must be in (0, 1]"),
        (lambda d: d["format"].update(m=8), "format: d=128, m=8 disagree"),
        (lambda d: d.update(version=9), "expected an ivfpq design of version 1"),
        (lambda d: d["stages"]["pq_dist"].update(lut_words=3), "stages.pq_dist.lut_words: is 3"),
        (lambda d: d["stages"]["pq_dist"].update(lut_words=True), "stages.pq_dist.lut_words: must be an integer"),
        (lambda d: d["stages"]["pq_dist"].update(lut_words=4), "stages.build_lut.pes: 2 PEs do not build LUTs"),
    ],
)
def test_bad_designs_are_rejected_with_the_key(edit, message):
    data = copy.deepcopy(make_design().to_dict())
    edit(data)
    with pytest.raises(FannsError) as exc:
        IvfPqDesign.from_dict(data)
    assert message in str(exc.value)


def test_load_names_the_file(tmp_path):
    bad = tmp_path / "design.yaml"
    bad.write_text("board: [unclosed\n")
    with pytest.raises(FannsError, match="invalid YAML"):
        IvfPqDesign.load(bad)
    data = make_design().to_dict()
    data["k"] = -1
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(FannsError, match=f"{bad}: design: k: must be at least 1"):
        IvfPqDesign.load(bad)
