"""The cocotb side of the IVF-PQ system bench (`sim/tb_ivfpq.py`): the report helpers it shares
with the compiled bench (`fanns.sim.ivfpq.results`), and the run with nprobe = 0 that checks its refusal."""

from __future__ import annotations

from fanns.sim.ivfpq.results import BAD_PARAMS_LIMITS, RUN_REGISTERS, check_run, stuck_text

__all__ = ["BAD_PARAMS_LIMITS", "RUN_REGISTERS", "check_run", "refused_run", "stuck_text"]


async def refused_run(csr, run_once) -> int:
    """Start a run with nprobe = 0 through `run_once(limits)` (the bench's own) and return the
    status register, whose bad-parameters bit (1) must be set: the accelerator refuses the run."""
    await csr.write("nq", 1)
    await csr.write("nprobe", 0)
    await run_once(BAD_PARAMS_LIMITS)
    status = await csr.read("status")
    assert status & 0b10, "nprobe = 0 was not refused"
    return status
