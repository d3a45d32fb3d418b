"""The long tier's list (`tests/long_tier.py`) names slow tests that exist, and exactly those
are marked `long` (so the Makefile's `-m "slow and not long"` keeps them out of CI)."""

import subprocess
import sys

from tests.conftest import TESTS
from tests.long_tier import LONG, is_long


def _collected(marks: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", "-m", marks, str(TESTS)],
        capture_output=True,
        text=True,
        cwd=TESTS.parent,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if "::" in line]


def test_every_entry_names_a_slow_test_and_only_those_are_long():
    slow_or_long = _collected("slow or long")
    assert len(set(LONG)) == len(LONG)
    for entry in LONG:
        assert any(n == entry or n.split("[")[0] == entry for n in slow_or_long), f"no slow test {entry}"
    assert set(_collected("long")) == {n for n in slow_or_long if is_long(n)}
