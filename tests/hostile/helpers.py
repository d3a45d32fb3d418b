"""A tiny dataset folder and the CLI in a child process, for the data-loss and interrupt tests.

Why a folder of our own and not a built-in: 2,000 16-d vectors explore in a second or two, and
the dataset's cache (exact neighbours) lives beside it, inside the test's temporary folder.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

from fanns.datasets import write_vectors

ROOT = Path(__file__).resolve().parents[2]
N, NQ, D = 2000, 40, 16
EXPLORE = ["--recall", "R@10=0.5", "--nlist", "8", "--m", "4", "--no-opq"]
"""A one-index grid: the fastest exploration that reaches a goal."""


def make_dataset(folder: Path, n: int = N) -> Path:
    """Clustered float vectors as base.fvecs/query.fvecs in `folder`."""
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((12, D)) * 4
    x = centres[rng.integers(0, 12, n + NQ)] + rng.standard_normal((n + NQ, D))
    folder.mkdir(parents=True, exist_ok=True)
    write_vectors(folder / "base.fvecs", x[:n].astype(np.float32))
    write_vectors(folder / "query.fvecs", x[n:].astype(np.float32))
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` (relative path -> bytes), links not followed."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def child_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), FANNS_CACHE=str(cache), FANNS_NO_PROGRESS="1")
    env["OMP_NUM_THREADS"] = "1"
    return env


def _interactive_sigint() -> None:
    """In the child before exec: SIGINT at its default, as a terminal's Ctrl-C finds it. An
    ignored SIGINT is inherited across exec (a background CI job's shell ignores it), and Python
    then never installs its KeyboardInterrupt handler, so the child would not see the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_cli(args: list[str], cache: Path) -> subprocess.Popen:
    """`fanns ARGS` in a child process (its own session, so a signal reaches only it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "fanns.cli", *args],
        env=child_env(cache),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_interactive_sigint,
    )


def assert_clean_error(err: str, *words: str) -> None:
    """Stderr ends in one `fanns: error:` message (and its hint), has no traceback, names `words`
    (status lines of the work done before may precede it)."""
    assert "Traceback" not in err, err
    start = err.find("fanns: error:")
    assert start >= 0 and (start == 0 or err[start - 1] == "\n"), err
    message = err[start:]
    assert len(message.strip().splitlines()) <= 2, err
    for w in words:
        assert w in message, (w, err)
