"""Shared fixtures of the GPU tests: the native module, the openb data folder, small synthetic traces."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
OPENB_DIR = REPO_ROOT.parent / "shared" / "data" / "openb"


@pytest.fixture(scope="session")
def gpu_native():
    """``vcore._native._core.gpu`` (skips when the extension has not been built)."""
    try:
        from vcore._native import _core
    except ImportError as exc:  # pragma: no cover - depends on the build
        pytest.skip(f"vcore._native._core is not built ({exc}); run python setup.py build_ext --inplace")
    return _core.gpu


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
