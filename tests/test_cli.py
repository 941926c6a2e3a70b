"""Tests of the ``vcore`` command line: ``python -m vcore simulate``, its JSON output, and argument errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from vcore import cli
from vcore.sim.gpu import cli as trace_cli

JSON_KEYS = {
    "nodes",
    "pods",
    "scheduled",
    "unscheduled",
    "pods_per_second",
    "ingest_seconds",
    "schedule_seconds",
    "reasons",
}
TIMING_KEYS = {"pods_per_second", "ingest_seconds", "schedule_seconds"}


def run_vcore(*args: str) -> subprocess.CompletedProcess[str]:
    # The child inherits PYTHONPATH, so this works for an installed package and for a source tree alike.
    return subprocess.run(
        [sys.executable, "-m", "vcore", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONHASHSEED": "random"},
    )


def test_simulate_json_subprocess():
    proc = run_vcore("simulate", "--nodes", "200", "--pods", "500", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == JSON_KEYS
    assert (out["nodes"], out["pods"]) == (200, 500)
    assert out["scheduled"] + out["unscheduled"] == 500
    assert 0 < out["scheduled"] < 500  # the synthetic mix always has pods that cannot fit
    assert out["pods_per_second"] > 0 and out["schedule_seconds"] > 0 and out["ingest_seconds"] > 0
    assert out["reasons"] and all(isinstance(v, int) and 0 < v <= out["unscheduled"] for v in out["reasons"].values())
    assert max(out["reasons"].values()) <= out["unscheduled"]


def test_simulate_deterministic_by_seed():
    # Separate processes with randomized string hashing: nothing may depend on hash order.
    a, b = (
        json.loads(run_vcore("simulate", "--nodes", "200", "--pods", "500", "--seed", "3", "--json").stdout)
        for _ in range(2)
    )
    for key in TIMING_KEYS:
        a.pop(key), b.pop(key)
    assert a == b


def test_simulate_human_report(capsys):
    assert cli.main(["simulate", "--nodes", "100", "--pods", "300"]) == 0
    out = capsys.readouterr().out
    assert "pods/s" in out and "scheduled" in out and "100 nodes" in out
    assert "Insufficient" in out or "node(s)" in out


def test_simulate_in_process_matches_json_keys(capsys):
    assert cli.main(["simulate", "--nodes", "50", "--pods", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == JSON_KEYS and out["scheduled"] == 0 and out["reasons"] == {}


@pytest.mark.parametrize(
    "args, needle",
    [
        (["simulate", "--nodes", "0"], "argument --nodes: expected a positive integer, got 0"),
        (["simulate", "--nodes", "ten"], "argument --nodes: expected a positive integer, got 'ten'"),
        (["simulate", "--pods", "-1"], "argument --pods: expected a non-negative integer, got -1"),
        (["simulate", "--seed", "1.5"], "argument --seed: expected a non-negative integer, got '1.5'"),
        (["simulate", "--profile", "/nonexistent/profile.yaml"], "argument --profile: no such file"),
        (["simulate", "--bogus"], "unrecognized arguments: --bogus"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
    ids=[
        "zero-nodes",
        "text-nodes",
        "negative-pods",
        "float-seed",
        "missing-profile",
        "unknown-flag",
        "unknown-command",
    ],
)
def test_bad_arguments(args, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(args)
    assert exc.value.code == 2
    assert needle in capsys.readouterr().err


def test_bad_arguments_subprocess():
    proc = run_vcore("simulate", "--nodes", "-5")
    assert proc.returncode == 2
    assert "vcore simulate: error: argument --nodes: expected a positive integer, got -5" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_command_prints_usage(capsys):
    assert cli.main([]) == 2
    assert "simulate" in capsys.readouterr().err


def test_bad_profile_contents_is_a_clear_error(tmp_path, capsys):
    profile = tmp_path / "profile.yaml"
    profile.write_text("plugins:\n  score:\n    enabled:\n      - name: NoSuchPlugin\n")
    assert cli.main(["simulate", "--nodes", "10", "--pods", "10", "--profile", str(profile)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vcore simulate: error: ") and "Traceback" not in err


def _record_trace_runs(monkeypatch, calls):
    """Stand in for the trace replay behind ``vcore simulate --trace-dir`` (its own tests are tests/sim/gpu)."""

    def run_trace(args):
        calls.append(args.trace_dir)
        return 7

    monkeypatch.setattr(trace_cli, "run_trace", run_trace)


def test_trace_dir_dispatches_to_the_trace_replay(monkeypatch, tmp_path):
    calls: list[str] = []
    _record_trace_runs(monkeypatch, calls)
    assert cli.main(["simulate", "--trace-dir", str(tmp_path)]) == 7
    assert calls == [str(tmp_path)]


def test_without_trace_dir_the_trace_replay_is_not_called(monkeypatch, capsys):
    calls: list[str] = []
    _record_trace_runs(monkeypatch, calls)
    assert cli.main(["simulate", "--nodes", "20", "--pods", "20", "--json"]) == 0
    assert calls == [] and json.loads(capsys.readouterr().out)["pods"] == 20
