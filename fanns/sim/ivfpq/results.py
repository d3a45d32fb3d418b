"""What both IVF-PQ system benches (`sim/tb_ivfpq.py` under cocotb, `fanns.sim.ivfpq.fast` compiled)
report: the result keys of a run checked against the expected keys, its cycle registers, and where
a stuck design stands. numpy only, so the cocotb bench imports it without the accelerator's Python."""

from __future__ import annotations

import numpy as np

RUN_REGISTERS = ("status", "cycles", "load_cycles", "first_cycles", "last_cycles")
"""The registers read after every run, in the report under their own names."""


def check_run(run: dict, raw: bytes) -> dict:
    """The report row of one run from its result buffer `raw` (nq x stride bytes): the keys are
    written to run["keys"] and compared with the file run["expected"]."""
    nq, k, stride = run["nq"], run["k"], run["stride"]
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(nq, stride)
    got = np.ascontiguousarray(rows[:, : 8 * k]).view("<u8").reshape(nq, k)
    got.tofile(run["keys"])
    expected = np.fromfile(run["expected"], dtype="<u8").reshape(nq, -1)[:, :k]
    bad_rows = np.nonzero((got != expected).any(1))[0]
    row = {
        "nq": nq,
        "nprobe": run["nprobe"],
        "k": k,
        "mismatched_queries": int(bad_rows.size),
        "mismatched_keys": int((got != expected).sum()),
        "checked_keys": int(got.size),
    }
    if bad_rows.size:
        q = int(bad_rows[0])
        row["first_bad"] = {
            "query": q,
            "got": [hex(int(v)) for v in got[q]],
            "expected": [hex(int(v)) for v in expected[q]],
        }
    return row


def stuck_text(why: str, streams: int, names: list[str], ports: dict[str, str]) -> str:
    """The watchdog's account: `streams` is the accelerator's `streams` register (two bits per
    stream of `names`, `fanns.arch.ivfpq.hw.WATCHED_STREAMS`), `ports` each memory port's requests
    in flight."""
    held = [name for i, name in enumerate(names) if streams >> (2 * i) & 1]
    waiting = [name for i, name in enumerate(names) if streams >> (2 * i + 1) & 1]
    listed = "; ".join(f"{name}: {state}" for name, state in ports.items())
    return (
        f"{why}; streams holding a word: {', '.join(held) or 'none'}; streams waiting for a word: "
        f"{', '.join(waiting) or 'none'}; memory ports: {listed}"
    )


BAD_PARAMS_LIMITS = {"stall": 10_000, "cycles": 10_000, "seconds": 600.0}
"""The watchdog of the refused run: it ends at once (no query is read)."""
