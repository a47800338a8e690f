"""Shared fixtures of the Python suites (run by ctest through run_pytest.py)."""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # city.py

from city import write_city  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"


@pytest.fixture
def city(tmp_path):
    """A small generated city (OBJ): 3 x 3 buildings on a terrain over 4 x 4 tiles of grid:24."""
    return write_city(str(tmp_path / "city.obj"))


def tree(root) -> dict:
    """Every file under `root` (relative path -> bytes)."""
    root = pathlib.Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def untold_cli() -> str:
    cli = os.environ.get("UNTOLD_CLI", "")
    if not cli or not os.path.exists(cli):
        pytest.skip("UNTOLD_CLI does not name the untold binary")
    return cli
