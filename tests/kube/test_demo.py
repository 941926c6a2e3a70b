"""vcore-scheduler --demo end to end, small: its own control plane, synthetic nodes, a mixed workload, a summary."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import control_plane_unavailable


def test_demo_prints_a_summary(tmp_path):
    why = control_plane_unavailable()
    if why:
        pytest.skip(why)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "vcore_kube",
            "--demo",
            "--nodes",
            "20",
            "--pods",
            "120",
            "--dir",
            str(tmp_path / "demo"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "vcore pods bound in" in out and "bound by kind:" in out
    assert "pods of another scheduler left alone:" in out
    assert "Insufficient cpu" in out  # the pods that fit nowhere are reported with their reason
