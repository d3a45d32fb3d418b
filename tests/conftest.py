"""Shared pytest fixtures: a per-session build folder for simulators and compiled programs."""
import os

import pytest

os.environ.setdefault("FANNS_NO_PROGRESS", "1")


@pytest.fixture(scope="session")
def build_root(tmp_path_factory):
    return tmp_path_factory.mktemp("build")
