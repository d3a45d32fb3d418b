"""The one registry of selection kinds (`fanns.design.ivfpq_selectors.SELECTORS`): every kind the DSE
offers has all its faces (the design schema accepts it, the model and the RTL build its PE, the HLS
generator takes the PE's own header and call), and a new kind is its PE module plus one entry."""

import re
from dataclasses import dataclass
from typing import ClassVar

import pytest

from fanns.codegen.ivfpq.hls_context import selection_call
from fanns.design.ivfpq_selectors import SELECTORS, Selector, selectors_for
from fanns.design.ivfpq_stages import select_stage, selector_pe
from fanns.errors import FannsError
from fanns.paths import shared_dir
from fanns.pe import base
from fanns.pe.hpq import Hpq

Z, S, KEY_BITS = 6, 4, 40
"""Small enough for every kind (HSMPQG needs s < z)."""
OFFERED = [(stage, arch, params) for stage in ("sel_cells", "sel_k") for arch, params in selectors_for(stage)]
"""(stage, kind, parameters) of every selection the DSE tries."""


def test_every_kind_is_named_as_its_pe():
    assert SELECTORS and all(name == sel.pe.name for name, sel in SELECTORS.items())
    assert {arch for _, arch, _ in OFFERED} == set(SELECTORS)


@pytest.mark.parametrize("stage, arch, params", OFFERED, ids=[f"{s}-{a}" for s, a, _ in OFFERED])
def test_every_offered_kind_has_all_its_faces(stage, arch, params):
    st = select_stage(arch, Z, S, KEY_BITS, params)
    st.validate(f"stages.{stage}")
    pe = selector_pe(st)
    assert type(pe) is SELECTORS[arch].pe and st.s1 == getattr(pe, "s1", S)
    rtl = pe.instance()
    assert set(rtl.signature.members) >= {*(f"i{j}" for j in range(Z)), "o"}
    header, call = selection_call(st)
    assert header == pe.hls_header and call == pe.hls_function()
    function = re.fullmatch(r"fanns::(\w+)<[\d, ]+>", call)
    assert function, call
    assert re.search(rf"\bvoid {function[1]}\(", (shared_dir("hls") / header).read_text()), f"{header} lacks {call}"


def test_the_hls_call_is_the_pes_parameters():
    """The calls the generated kernels of tests/codegen/test_hls_project.py's `hsmpqg-ahpq` make."""
    assert selection_call(select_stage("hsmpqg", 12, 3, 64)) == ("hsmpqg.h", "fanns::hsmpqg<12, 3, 64>")
    assert selection_call(select_stage("ahpq", 9, 16, 51, {"target": 0.3})) == ("hpq.h", "fanns::hpq<9, 16, 3, 51>")
    assert selection_call(select_stage("hpq", 9, 16, 51)) == ("hpq.h", "fanns::hpq<9, 16, 16, 51>")


def test_a_new_kind_is_its_pe_and_one_entry(monkeypatch):
    @dataclass(frozen=True)
    class ShortHpq(Hpq):
        """An HPQ with level-1 queues of half length, registered only here."""

        name: ClassVar[str] = "short_hpq_test"
        hls_call: ClassVar[str] = "fanns::hpq<{z}, {s}, {s1}, {key_bits}>"

        @property
        def s1(self) -> int:
            return max(1, self.s // 2)

    try:
        monkeypatch.setitem(SELECTORS, ShortHpq.name, Selector(ShortHpq, stages=("sel_k",)))
        assert (ShortHpq.name, {}) in selectors_for("sel_k") and ShortHpq.name not in dict(selectors_for("sel_cells"))
        st = select_stage(ShortHpq.name, 3, 8, 32)
        st.validate("stages.sel_k")
        with pytest.raises(FannsError, match="stages.sel_cells.arch"):
            st.validate("stages.sel_cells")
        assert st.s1 == 4 and selection_call(st) == ("hpq.h", "fanns::hpq<3, 8, 4, 32>")
    finally:
        base._REGISTRY.pop(ShortHpq.name, None)


def test_a_pe_without_an_hls_call_is_refused():
    with pytest.raises(FannsError, match="no HLS call"):
        base.registered()["systolic_pq"](s=4, key_bits=32).hls_function()
