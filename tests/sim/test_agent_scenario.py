"""The agent scenario (vcore.sim.agent): agent pods placed between the jobs of a running gang cycle on one cluster,
every one placed once, no node over-committed, gangs all or nothing, the cycle placing what it places alone."""

from __future__ import annotations

import json

import pytest

from vcore import cli
from vcore.sim.agent import run_agent_scenario


def test_agents_are_placed_during_the_cycle_and_nothing_is_overcommitted():
    # A fast arrival rate: most agents arrive while the cycle runs and go between its jobs.
    r = run_agent_scenario(n_nodes=300, n_jobs=150, n_agents=200, rate=20_000.0, seed=3)
    assert r.agents_placed == 200
    assert r.in_cycle_batches >= 1 and r.micro_batches >= r.in_cycle_batches
    assert r.overcommitted_nodes == 0 and r.partial_gangs == 0
    assert 0 <= r.wait_p50_ms <= r.wait_p99_ms <= r.wait_max_ms
    assert r.jobs_running > 0 and r.pods_placed > 0


def test_cli_agent_scenario_json(capsys):
    assert (
        cli.main(
            [
                "simulate",
                "--scenario",
                "agent",
                "--nodes",
                "200",
                "--jobs",
                "50",
                "--agents",
                "50",
                "--rate",
                "5000",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["agents"] == out["agents_placed"] == 50 and out["overcommitted_nodes"] == 0


@pytest.mark.parametrize("rate", ["0", "-1", "fast", "inf"])
def test_cli_agent_scenario_rejects_a_bad_rate(rate, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["simulate", "--scenario", "agent", "--rate", rate])
    assert exc.value.code == 2 and "--rate" in capsys.readouterr().err
