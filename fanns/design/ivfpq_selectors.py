"""Selection micro-architectures by name: what `design.yaml` accepts in a selection stage and the
DSE offers (FANNS 6.4.1.2: HPQ, HSMPQG; ChamVS 4.4.2.2: AHPQ).

They sit with the design schema because the schema validates against them; the performance model
(`fanns.model.ivfpq.stages`) builds their PEs from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fanns.pe.ahpq import Ahpq
from fanns.pe.base import PE
from fanns.pe.hpq import Hpq
from fanns.pe.hsmpqg import Hsmpqg


@dataclass(frozen=True)
class Selector:
    """A selection micro-architecture: `make(z, s, key_bits, **params)` returns its PE, which
    provides `s1`, `interval(n)`, `stream_restart(j)`, `stream_due(j)`, `min_interval()`,
    `latency()` and `resources()`; `params` are the settings the DSE offers (e.g. AHPQ
    exactness targets); `stages` where it may serve (an approximate queue only in SelK, where a
    missed neighbour costs recall but not the set of cells scanned)."""

    make: Callable[..., PE]
    params: tuple[dict, ...] = ({},)
    stages: tuple[str, ...] = ("sel_cells", "sel_k")


def _hpq(z: int, s: int, key_bits: int) -> PE:
    return Hpq(z=z, s=s, key_bits=key_bits)


def _ahpq(z: int, s: int, key_bits: int, target: float) -> PE:
    return Ahpq(z=z, s=s, key_bits=key_bits, target=target)


def _hsmpqg(z: int, s: int, key_bits: int) -> PE:
    return Hsmpqg(z=z, s=s, key_bits=key_bits)


AHPQ_TARGET = 0.99
"""AHPQ level-1 queues are cut so the result is exact for this fraction of queries (ChamVS 4.4.2.2)."""
SELECTORS: dict[str, Selector] = {
    "hpq": Selector(_hpq),
    "hsmpqg": Selector(_hsmpqg),
    "ahpq": Selector(_ahpq, params=({"target": AHPQ_TARGET},), stages=("sel_k",)),
}
"""Selection micro-architectures by name. Adding one (AHPQ, HSMPQG) is one entry here; its
options then appear in the DSE and `design.yaml` accepts it."""


def selectors_for(stage: str) -> list[tuple[str, dict]]:
    """(architecture, parameters) the DSE tries for a selection stage."""
    return [(name, dict(p)) for name, sel in SELECTORS.items() if stage in sel.stages for p in sel.params]
