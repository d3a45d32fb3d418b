"""faiss's OpenMP threads sleep while they wait once fanns is imported (fanns/__init__.py), unless
the user's environment names a policy. Checked on the libgomp faiss loads, in fresh interpreters:
with OMP_DISPLAY_ENV=VERBOSE libgomp prints its spin count at load, 0 for a passive wait."""

import os
import re
import subprocess
import sys

import pytest


def _spincount(code: str, **env: str) -> int:
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "OMP_DISPLAY_ENV": "VERBOSE", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"GOMP_SPINCOUNT = '(\d+)'", run.stderr)
    assert found, run.stderr
    return int(found.group(1))


def test_faiss_loaded_after_fanns_waits_passively():
    assert _spincount("import fanns, faiss") == 0
    assert _spincount("import fanns.cli, faiss") == 0


def test_faiss_alone_spins():
    """The reference: without fanns first, libgomp spins (what the default above changes)."""
    assert _spincount("import faiss") > 0


@pytest.mark.parametrize("policy", ["ACTIVE", "active"])
def test_a_policy_the_user_set_is_kept(policy):
    assert _spincount("import fanns, faiss", OMP_WAIT_POLICY=policy) > 0
