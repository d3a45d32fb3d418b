"""The committed calibration table agrees with a fresh yosys synthesis of a PE it was not fitted on."""
import pytest

from fanns.pe.calibration import load_table
from fanns.pe.l2dist import L2Dist
from fanns.pe.synth import synthesize


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
