"""The committed calibration table agrees with a fresh yosys synthesis of a PE it was not fitted on."""

import json

import pytest
from amaranth import Const, Module, Signal
from amaranth.hdl import Fragment

from fanns import calibration
from fanns.calibration import fit_points
from fanns.engines.datapath import Pipe, add_tree, adder_tree_bits, bram18_tiles, bram_mux_bits
from fanns.errors import FannsError
from fanns.pe import calibration_table
from fanns.pe.calibration_table import load_table
from fanns.pe.l2dist import L2Dist
from fanns.pe.opq import Opq
from fanns.resources import KINDS
from fanns.tools.yosys import synthesize


def test_every_calibrated_pe_has_its_source_and_points():
    table = load_table("xcup")
    assert table.pes, "no calibrated PE"
    for name, fit in table.pes.items():
        assert "synth_xilinx" in fit.source, name
        assert len(fit.points) >= 3, name


def test_fresh_synthesis_matches_calibrated_model():
    pe = L2Dist(d=32, w=8, vec_bits=10, signed=True)
    measured, cells = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.dsp == pytest.approx(predicted.dsp, abs=1)
    assert measured.lut == pytest.approx(predicted.lut, rel=0.25)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.25)
    assert measured.bram18 == predicted.bram18


class _CountingPipe(Pipe):
    """A Pipe that adds up the widths of the registers it makes from expressions (adder outputs;
    a tree level's odd input passes through as a plain signal, with no adder)."""

    bits = 0

    def reg(self, value, shape=None, name=None):
        sig = super().reg(value, shape, name)
        if not isinstance(value, Signal):
            self.bits += len(sig)
        return sig


@pytest.mark.parametrize("n,leaf", [(1, 8), (2, 16), (5, 17), (16, 24), (24, 9), (64, 16)])
def test_adder_tree_bits_counts_the_tree_adders(n, leaf):
    m = Module()
    pipe = _CountingPipe(m, Const(1))
    add_tree(pipe, [Signal(leaf, name=f"x{i}") for i in range(n)])
    Fragment.get(m, None)
    assert adder_tree_bits(n, leaf) == pipe.bits


def test_bram_mux_bits_only_for_memories_stacked_in_depth():
    assert bram_mux_bits(256, 1024) == 0  # 15 x 1024x18, side by side
    assert bram18_tiles(64, 2304) == 10 and bram_mux_bits(64, 2304) == 4 * 64  # 5 x 512x72 deep
    assert bram_mux_bits(32, 8192) == 0  # 16 x 8192x2 ties with deep shapes: the flat one wins


def _synthetic_points(cls, params, coef):
    """Points whose resources follow a known linear model of the PE's features."""
    points = []
    for p in params:
        feats = cls(**p).features()
        res = {k: sum(c * feats.get(f, 0.0) for f, c in coef.get(k, {}).items()) for k in KINDS}
        points.append({"params": p, "resources": res, "cells": {}})
    return points


def test_fit_recovers_a_linear_model_and_keeps_luts_on_logic_features():
    coef = {
        "lut": {"1": 40.0, "tree_bits": 1.0, "rotate_bits": 1.0, "acc_bits": 3.0},
        "ff": {"1": 60.0, "d*vec_bits": 1.0, "w*vec_bits": 5.0},
        "dsp": {"w": 1.0},
    }
    points = _synthetic_points(Opq, Opq.calibration_points, coef)
    fit = fit_points(Opq, points)
    assert max(fit.max_rel_error.values()) < 1e-6
    assert set(fit.coefficients["lut"]) <= {"1", *Opq.logic_features}
    assert not set(fit.coefficients["ff"]) & set(Opq.logic_features)


def test_prediction_refuses_a_table_fitted_without_the_pe_features():
    points = _synthetic_points(Opq, Opq.calibration_points, {"dsp": {"w": 1.0}})
    fit = fit_points(Opq, points)
    fit.features = [f for f in fit.features if f != "tree_bits"]
    with pytest.raises(FannsError, match="tree_bits"):
        fit.predict(Opq())


def test_refit_keeps_the_measurement_source(tmp_path, monkeypatch):
    (tmp_path / "xcup").mkdir()
    src = load_table("xcup").pes["hpq"]
    stale = dict(vars(src), coefficients={}, source=src.source.split(calibration.REFIT_NOTE)[0])
    (tmp_path / "xcup" / "hpq.json").write_text(json.dumps(stale))
    monkeypatch.setattr(calibration_table, "TABLE_DIR", tmp_path)
    load_table.cache_clear()
    try:
        table = calibration.refit(["hpq"])
        fit = table.pes["hpq"]
        assert fit.source.startswith(stale["source"]) and "refitted" in fit.source
        assert fit.points == src.points
        # the same fit up to the last bits of the least-squares solve (BLAS order may differ)
        assert {k: c.keys() for k, c in fit.coefficients.items()} == {k: c.keys() for k, c in src.coefficients.items()}
        for kind, coef in src.coefficients.items():
            assert fit.coefficients[kind] == pytest.approx(coef, rel=1e-9)
    finally:
        load_table.cache_clear()


_RAM_AND_MULTIPLIER = """
module top(input clk, input we, input [9:0] addr, input [35:0] din, output reg [35:0] dout,
           input [15:0] a, input [15:0] b, output reg [31:0] p);
  reg [35:0] mem [0:1023];
  always @(posedge clk) begin
    if (we) mem[addr] <= din;
    dout <= mem[addr];
    p <= a * b;
  end
endmodule
"""


@pytest.mark.parametrize("family", ["xcup", "xc7"])
def test_block_ram_and_dsp_are_counted_on_every_family(family):
    # synth_xilinx names these primitives RAMB36E2/DSP48E2 on UltraScale+ and RAMB36E1/DSP48E1 on
    # 7-series; a count that knew only one family would calibrate the other's memories as free.
    measured, cells = synthesize(_RAM_AND_MULTIPLIER, "top", family)
    assert measured.bram18 == 2, cells
    assert measured.dsp == 1, cells


def test_a_family_without_ultraram_skips_the_points_that_need_it():
    ivf = calibration.get_pe("ivf_dist")
    assert any(p.get("storage") == "uram" for p in calibration.family_points(ivf, "xcup"))
    on_xc7 = calibration.family_points(ivf, "xc7")
    assert on_xc7 and all(p.get("storage") != "uram" for p in on_xc7)
    assert len(on_xc7) >= 3  # still enough to fit


@pytest.mark.slow  # a yosys run that fails late: 50 s
def test_a_point_yosys_cannot_map_is_a_clear_error():
    with pytest.raises(FannsError, match=r"yosys cannot synthesise PE ivf_dist .*'uram'.* family xc7: ERROR"):
        calibration._measure(("ivf_dist", {"d": 64, "w": 16, "vec_bits": 8, "nlist": 1024, "storage": "uram"}, "xc7"))


def test_calibrate_synthesises_only_the_points_the_table_lacks(tmp_path, monkeypatch):
    # a PE that gains calibration points (opq's wide lanes) synthesises those alone: the stored
    # points of the same yosys are kept, and the one synthesised again gives the same counts
    (tmp_path / "xcup").mkdir()
    src = load_table("xcup").pes["broadcast"]
    dropped = src.points[-1]
    lacking = dict(vars(src), points=src.points[:-1], source=src.source.split(calibration.REFIT_NOTE)[0])
    (tmp_path / "xcup" / "broadcast.json").write_text(json.dumps(lacking))
    monkeypatch.setattr(calibration_table, "TABLE_DIR", tmp_path)
    load_table.cache_clear()
    try:
        fit = calibration.calibrate(["broadcast"], "xcup", workers=1).pes["broadcast"]
        assert f"({len(src.points) - 1} points kept from an earlier run)" in fit.source
        assert fit.points[:-1] == src.points[:-1]
        assert fit.points[-1]["params"] == dropped["params"]
        assert fit.points[-1]["resources"] == dropped["resources"]
    finally:
        load_table.cache_clear()


def test_timing_points_are_the_smallest_and_at_least_three():
    # `fanns calibrate --timing --points N`: the N calibration points with the fewest LUTs, no
    # fewer than the timing fit's three terms
    hpq = calibration.get_pe("hpq")
    every = calibration.family_points(hpq, "xc7")
    chosen = calibration.timing_points(hpq, "xc7", 3)
    luts = sorted(hpq(**p).resources("xc7").lut for p in every)
    assert len(chosen) == 3 and sorted(hpq(**p).resources("xc7").lut for p in chosen) == luts[:3]
    assert calibration.timing_points(hpq, "xc7", None) == every
    with pytest.raises(FannsError, match="--points 2"):
        calibration.calibrate_timing(["hpq"], "xc7", points=2)
