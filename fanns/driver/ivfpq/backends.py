"""The backends of an IVF-PQ project by name (`fanns.choices.DRIVER_BACKENDS`): each runs the same
register plan on a board, a simulator or the reference model."""

from __future__ import annotations

import inspect

from fanns.choices import DRIVER_BACKENDS
from fanns.driver.ivfpq.backend import Backend
from fanns.driver.ivfpq.csim import CsimBackend
from fanns.driver.ivfpq.model import ModelBackend
from fanns.driver.ivfpq.pynq_backend import PynqBackend
from fanns.driver.ivfpq.rtlsim import RtlSimBackend
from fanns.errors import FannsError


def _checked(cls: type[Backend], name: str, options: dict) -> dict:
    """`options` if `cls` takes them all, else a FannsError naming the ones it does not take."""
    params = inspect.signature(cls.__init__).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return options
    takes = sorted(set(params) - {"self"})
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise FannsError(
            f"the {name} backend takes no option {', '.join(unknown)}",
            hint=f"its options: {', '.join(takes) or 'none'}",
        )
    return options


def make_backend(name: str, kind: str, **options) -> Backend:
    """The backend `name` for a project of `kind` ("hls" or "rtl")."""
    if name == "model":
        return ModelBackend(**_checked(ModelBackend, name, options))
    if name == "c-sim":
        if kind != "hls":
            raise FannsError(
                "the c-sim backend runs the HLS kernel; this is an RTL project",
                hint="use backend rtl-sim or model, or generate the project with `fanns generate-hls`",
            )

        return CsimBackend(**_checked(CsimBackend, name, options))
    if name == "rtl-sim":
        if kind != "rtl":
            raise FannsError(
                "the rtl-sim backend runs the generated RTL; this is an HLS project",
                hint="use backend c-sim or model, or generate the project with `fanns generate-rtl`",
            )

        return RtlSimBackend(**_checked(RtlSimBackend, name, options))
    if name == "pynq":
        return PynqBackend(**_checked(PynqBackend, name, options))
    raise FannsError(f"unknown backend {name!r}", hint=f"choose one of {', '.join(DRIVER_BACKENDS)}")
