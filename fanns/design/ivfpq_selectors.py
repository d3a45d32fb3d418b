"""Selection micro-architectures by name: what `design.yaml` accepts in a selection stage and the
DSE offers (FANNS 6.4.1.2: HPQ, HSMPQG; ChamVS 4.4.2.2: AHPQ).

They sit with the design schema because the schema validates against them; the performance model,
the RTL and the HLS generator build their PEs from here (`fanns.design.ivfpq_stages.selector_pe`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fanns.pe.ahpq import Ahpq
from fanns.pe.base import PE
from fanns.pe.hpq import Hpq
from fanns.pe.hsmpqg import Hsmpqg


@dataclass(frozen=True)
class Selector:
    """A selection micro-architecture: its PE class `pe` (named as the kind: `pe.name`), whose
    instances `make(z, s, key_bits, **params)` provide `s1`, `interval(n)`, `stream_restart(j)`,
    `stream_due(j)`, `min_interval()`, `latency()` and `resources()`, the RTL component and, for the
    HLS kernel, `hls_header` and `hls_function()`; `params` are the settings the DSE offers (e.g.
    AHPQ exactness targets); `stages` where it may serve (an approximate queue only in SelK, where
    a missed neighbour costs recall but not the set of cells scanned)."""

    pe: type[PE]
    params: tuple[dict, ...] = ({},)
    stages: tuple[str, ...] = ("sel_cells", "sel_k")

    def make(self, z: int, s: int, key_bits: int, **params) -> PE:
        """The PE selecting the s smallest keys of z streams of `key_bits`-bit keys."""
        return self.pe(z=z, s=s, key_bits=key_bits, **params)


AHPQ_TARGET = 0.99
"""AHPQ level-1 queues are cut so the result is exact for this fraction of queries (ChamVS 4.4.2.2)."""
SELECTORS: dict[str, Selector] = {
    sel.pe.name: sel
    for sel in (
        Selector(Hpq),
        Selector(Hsmpqg),
        Selector(Ahpq, params=({"target": AHPQ_TARGET},), stages=("sel_k",)),
    )
}
"""Selection micro-architectures by name (`SelectStage.arch`), the one registry of selection
kinds: the design schema validates against it, the DSE offers its options, the model and the RTL
build its PEs (`fanns.design.ivfpq_stages.selector_pe`) and the HLS generator asks those PEs for
their header and call. Adding a kind is its PE module (with `hls_header` and `hls_call`) and one
entry here."""


def selectors_for(stage: str) -> list[tuple[str, dict]]:
    """(architecture, parameters) the DSE tries for a selection stage."""
    return [(name, dict(p)) for name, sel in SELECTORS.items() if stage in sel.stages for p in sel.params]
