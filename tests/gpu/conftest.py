"""Shared fixture of the GPU tests: the native module."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def gpu_native():
    """``vcore._native._core.gpu`` (skips when the extension has not been built)."""
    try:
        from vcore._native import _core
    except ImportError as exc:  # pragma: no cover - depends on the build
        pytest.skip(f"vcore._native._core is not built ({exc}); run python setup.py build_ext --inplace")
    return _core.gpu
