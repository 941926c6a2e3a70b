"""The topology scenario (vcore.sim.topology_stream) on a small tree: every policy runs, gangs are placed whole,
the metrics add up, the topology-aware policies span fewer domains than the unaware baseline, and runs repeat."""

from __future__ import annotations

import pytest

from vcore.sim.topology_stream import POLICIES, build_tree_cluster, gang_stream, run_stream


def small():
    return build_tree_cluster(spines=2, leaves=4, nodes=4, gpus=8)


def test_stream_generator_is_seeded_and_bounded():
    a, b = gang_stream(40, seed=3), gang_stream(40, seed=3)
    assert a == b and a != gang_stream(40, seed=4)
    assert all(8 <= g.pods <= 1024 and g.gpus_per_pod in (1, 2, 4, 8) and g.gpus <= 4096 for g in a)


@pytest.mark.parametrize("policy", ["native", "cpsat-0.05", "unaware"])
def test_policies_place_whole_gangs_and_leave_the_cluster_clean(policy):
    stream = gang_stream(12, seed=5, max_pods=64, max_gpus=96, min_duration=2, max_duration=6)
    cluster = small()
    result = run_stream(cluster, stream, policy)
    assert len(result.outcomes) == 12 and len(result.stranded) == 12
    for o in result.outcomes:
        assert not o.placed or (1 <= o.leaves <= 8 and 1 <= o.spines <= 2 and o.nodes >= 1)
    assert cluster.n_pods == 0  # every gang left at the end
    s = result.summary()
    assert s["placed"] == sum(o.placed for o in result.outcomes) and s["stranded_gpus_max"] >= 0


def test_topology_aware_spans_less_than_unaware_and_runs_repeat():
    stream = gang_stream(12, seed=5, max_pods=64, max_gpus=96, min_duration=2, max_duration=6)
    native = run_stream(small(), stream, "native").summary()
    again = run_stream(small(), stream, "native").summary()
    unaware = run_stream(small(), stream, "unaware").summary()
    assert {k: v for k, v in native.items() if k != "seconds_per_gang"} == {
        k: v for k, v in again.items() if k != "seconds_per_gang"
    }
    assert native["leaves_per_gang"] < unaware["leaves_per_gang"]


def test_unknown_policy():
    with pytest.raises(ValueError, match="unknown policy 'greedy'"):
        run_stream(small(), gang_stream(1), "greedy")
    assert "unaware" in POLICIES


def test_simulate_scenario_topology_cli(tmp_path, capsys):
    import json

    from vcore.cli import main

    png = tmp_path / "topology.png"
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "topology",
                "--gangs",
                "3",
                "--seed",
                "1",
                "--policy",
                "native",
                "--policy",
                "unaware",
                "--plot",
                str(png),
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["gangs"] == 3 and set(out["policies"]) == {"native", "unaware"}
    for s in out["policies"].values():
        assert s["gangs"] == 3 and 0 <= s["placed"] <= 3
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
    assert main(["simulate", "--scenario", "topology", "--gangs", "1", "--policy", "best"]) == 2
    assert "unknown policy 'best'" in capsys.readouterr().err
