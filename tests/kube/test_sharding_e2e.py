"""Sharding against the real API server: the sharding controller process (as its own least-privilege user)
publishing NodeShards and following node changes, and two or three vcore-scheduler instances under hard and soft
sharding (with exactly the deploy/ ClusterRole's permissions) while nodes are reassigned between them mid-run:
no node over-committed, every pod bound once, and the NodeShards' statuses settled on their desired nodes."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys

import pytest
import yaml

from vcore_kube import nodeshard
from vcore_kube.testenv.control_plane import free_port
from vcore_kube.testenv.objects import create_nodes, create_pods, ensure_namespace, node, pod

from .harness import check_invariants, pods, wait_bound, wait_for

_tests = itertools.count()


def shards_of(admin) -> dict[str, nodeshard.Shard]:
    return {name: nodeshard.Shard.of(obj) for name, obj in nodeshard.list_shards(admin).items()}


def settled(admin, names) -> bool:
    """Every named NodeShard uses exactly its desired nodes (nothing to add or remove)."""
    shards = shards_of(admin)
    return all(
        n in shards and shards[n].in_use == shards[n].desired and not shards[n].to_add and not shards[n].to_remove
        for n in names
    )


@pytest.mark.parametrize(
    "instances, mode",
    [(2, "hard"), (3, "hard"), (2, "soft"), (3, "soft")],
    ids=["2-hard", "3-hard", "2-soft", "3-soft"],
)
def test_instances_never_double_allocate_while_nodes_move(admin, scheduler, instances, mode):
    t = next(_tests)
    pool = f"shard{t}-{mode}"
    per = 3  # nodes per instance, 4 cpu each
    names = [f"{pool}-n{i}" for i in range(per * instances)]
    create_nodes(admin, [node(n, cpu="4", labels={"pool": pool}) for n in names])
    shard_names = [f"{pool}-s{k}" for k in range(instances)]
    assignment = {s: names[k * per : (k + 1) * per] for k, s in enumerate(shard_names)}
    nodeshard.apply_assignment(admin, assignment)
    scheds = [f"{pool}-sched{k}" for k in range(instances)]
    spaces = [f"{pool}-ns{k}" for k in range(instances)]
    for ns in spaces:
        ensure_namespace(admin, ns)
    instance = [
        scheduler(scheds[k], sharding={"mode": mode, "shard": shard_names[k]}, cyclePeriod="20ms")
        for k in range(instances)
    ]
    wait_for(lambda: settled(admin, shard_names), 30, "every instance using its nodes", instance[0])

    def wave(w: int, n: int) -> None:
        create_pods(
            admin,
            [
                pinned(pod(f"w{w}-{i}", spaces[k], scheduler=scheds[k], cpu="500m"), pool)
                for k in range(instances)
                for i in range(n)
            ],
        )

    # Wave 1, then rotate one node of each shard to the next shard while wave 2 is being placed, then back.
    wave(1, 6)
    rotated = {s: list(nodes) for s, nodes in assignment.items()}
    for k, s in enumerate(shard_names):
        moving = assignment[s][0]
        rotated[s].remove(moving)
        rotated[shard_names[(k + 1) % instances]].append(moving)
    nodeshard.apply_assignment(admin, rotated)
    wave(2, 6)  # placed while the nodes change hands
    wait_for(lambda: settled(admin, shard_names), 30, "the first hand-overs", instance[0])
    nodeshard.apply_assignment(admin, assignment)
    wave(3, 4)
    for k in range(instances):
        wait_bound(
            admin,
            spaces[k],
            [f"w{w}-{i}" for w, n in ((1, 6), (2, 6), (3, 4)) for i in range(n)],
            timeout=60,
            run=instance[k],
        )
    wait_for(lambda: settled(admin, shard_names), 30, "the hand-overs to finish", instance[0])
    for k in range(instances):
        check_invariants(admin, spaces[k], scheds[k], expect_all_bound=True)  # once each, nothing over-committed
        if mode == "hard":  # every pod is on a node its instance was given at some point of the run
            allowed = set(assignment[shard_names[k]]) | set(rotated[shard_names[k]])
            assert {p["spec"]["nodeName"] for p in pods(admin, spaces[k])} <= allowed
        gained = instance[k].metric('vcore_scheduler_shard_handovers_total{direction="gained"}')
        released = instance[k].metric('vcore_scheduler_shard_handovers_total{direction="released"}')
        assert gained == per + 2 and released == 2  # its nodes; the one rotated in; its own back. Gave 2 away.


def pinned(p: dict, pool: str) -> dict:
    p["spec"]["nodeSelector"] = {"pool": pool}
    return p


def test_soft_instance_overflows_onto_unassigned_nodes_only(admin, scheduler):
    pool = "softflow"
    create_nodes(
        admin,
        [node(f"{pool}-a{i}", cpu="2", labels={"pool": pool}) for i in range(2)]
        + [node(f"{pool}-b{i}", cpu="2", labels={"pool": pool}) for i in range(2)]
        + [node(f"{pool}-free", cpu="8", labels={"pool": pool})],
    )
    nodeshard.apply_assignment(
        admin, {f"{pool}-sa": [f"{pool}-a0", f"{pool}-a1"], f"{pool}-sb": [f"{pool}-b0", f"{pool}-b1"]}
    )
    ensure_namespace(admin, pool)
    a = scheduler(f"{pool}-a", sharding={"mode": "soft", "shard": f"{pool}-sa"})
    scheduler(f"{pool}-b", sharding={"mode": "hard", "shard": f"{pool}-sb"})
    wait_for(lambda: settled(admin, [f"{pool}-sa", f"{pool}-sb"]), 30, "both using their nodes", a)
    create_pods(admin, [pinned(pod(f"p{i}", pool, scheduler=f"{pool}-a", cpu="1"), pool) for i in range(7)])
    placed = wait_bound(admin, pool, [f"p{i}" for i in range(7)], run=a)
    on = [placed[f"p{i}"] for i in range(7)]
    assert sum(n.startswith(f"{pool}-a") for n in on) == 4  # its own shard first, full
    assert sum(n == f"{pool}-free" for n in on) == 3  # then the node nobody's shard holds, never b's
    check_invariants(admin, pool, f"{pool}-a", expect_all_bound=True)


def test_sharder_publishes_and_follows_node_changes(control_plane, admin, tmp_path):
    pool = "sharder"
    create_nodes(admin, [node(f"{pool}-n{i}", cpu="16", labels={"pool": pool}) for i in range(6)])
    config = {
        "schedulerConfigs": [
            {"name": f"{pool}-big", "strategy": "capacity", "weight": 2, "nodeSelector": {"pool": pool}},
            {"name": f"{pool}-small", "strategy": "capacity", "weight": 1, "nodeSelector": {"pool": pool}},
        ],
        "shardSyncPeriod": "1s",
        "leaderElect": True,
        "metricsAddress": f"127.0.0.1:{free_port()}",
    }
    path = tmp_path / "sharding.yaml"
    path.write_text(yaml.safe_dump(config))
    log = open(tmp_path / "sharder.log", "ab")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vcore_kube",
            "--role",
            "sharder",
            "--kubeconfig",
            control_plane.sharder_kubeconfig,
            "--sharding-config",
            str(path),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:

        def desired():
            shards = shards_of(admin)
            return {k: shards[k].desired for k in (f"{pool}-big", f"{pool}-small") if k in shards}

        got = wait_for(
            lambda: (d := desired()) and len(d) == 2 and sum(map(len, d.values())) == 6 and d,
            30,
            "the first assignment",
        )
        assert len(got[f"{pool}-big"]) == 4 and len(got[f"{pool}-small"]) == 2  # capacity 2:1
        create_nodes(admin, [node(f"{pool}-n{i}", cpu="16", labels={"pool": pool}) for i in range(6, 9)])
        got = wait_for(lambda: (d := desired()) and sum(map(len, d.values())) == 9 and d, 30, "the new nodes")
        assert len(got[f"{pool}-big"]) == 6 and len(got[f"{pool}-small"]) == 3
        assert not got[f"{pool}-big"] & got[f"{pool}-small"]
        admin.delete(f"/api/v1/nodes/{pool}-n0")
        wait_for(lambda: f"{pool}-n0" not in set().union(*desired().values()), 30, "the node's removal")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, (tmp_path / "sharder.log").read_text()[-3000:]


def test_sharder_identity_has_exactly_its_cluster_role(control_plane, namespace):
    from vcore_kube.kubeclient import ApiException, load_api

    api = load_api(control_plane.sharder_kubeconfig)
    try:
        assert api.get("/api/v1/nodes") is not None and api.get("/api/v1/pods", limit=1) is not None
        nodeshard.apply_assignment(api, {f"{namespace}-rbac": []})  # NodeShards: create and update
        with pytest.raises(ApiException) as err:  # never a binding, nor an instance's status
            api.create(
                f"/api/v1/namespaces/{namespace}/pods/p/binding",
                {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": "p"},
                    "target": {"kind": "Node", "name": "n"},
                },
            )
        assert err.value.status == 403
        obj = api.get(nodeshard.path(f"{namespace}-rbac"))
        with pytest.raises(ApiException) as err:
            nodeshard.put_status(api, obj, nodeshard.status_body([], []))
        assert err.value.status == 403
    finally:
        api.close()
