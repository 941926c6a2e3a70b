"""Shared fixtures of the trace-replay tests: the openb data folder and small synthetic traces (the native module
fixture is the GPU tests')."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.gpu.conftest import gpu_native  # noqa: F401  (a fixture: skips when the compiled core is absent)

REPO_ROOT = Path(__file__).resolve().parents[3]
OPENB_DIR = REPO_ROOT.parent / "shared" / "data" / "openb"


@pytest.fixture(scope="session")
def openb_dir() -> str:
    """The openb trace folder (../shared/data/openb relative to the repo root); skips when absent."""
    if not OPENB_DIR.is_dir():
        pytest.skip(f"openb trace not available: {OPENB_DIR} is absent (a user's clone has no ../shared/data)")
    return str(OPENB_DIR)


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return os.fspath(p)
