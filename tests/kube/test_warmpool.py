"""Warm pools without an API server (vcore_kube.warmpool): the WarmPool object, placeholder pods, refill
placement on what real pods and other placeholders leave, hits onto the pool's placeholder nodes, room made for
any real pod, surplus and vanished nodes."""

from __future__ import annotations

import pytest

import vcore
from vcore_kube.config import WarmPoolsConfig
from vcore_kube.warmpool import PLACEHOLDER_LABEL, POOL_LABEL, PoolSpec, WarmPools, is_placeholder, pool_of

NS = "agents"


def node(name: str, cpu: str = "4") -> dict:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def warm_pool(size: int, cpu: str = "1", name: str = "sandbox", scheduler: str = "vcore-agent", **template) -> dict:
    return {
        "apiVersion": "vcore.io/v1alpha1",
        "kind": "WarmPool",
        "metadata": {"name": name, "namespace": NS, "uid": "u-1"},
        "spec": {
            "size": size,
            "schedulerName": scheduler,
            "template": {
                "spec": {
                    "containers": [{"name": "agent", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
                    **template,
                }
            },
        },
    }


def session(name: str, cpu: str = "1", pool: str = "sandbox") -> dict:
    return {
        "metadata": {"name": name, "namespace": NS, "labels": {POOL_LABEL: pool}},
        "spec": {
            "schedulerName": "vcore-agent",
            "containers": [{"name": "a", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
        },
    }


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def setup():
    cluster = vcore.Cluster()
    for i in range(3):
        cluster.add_node(node(f"n{i}"))
    clock = Clock()
    pools = WarmPools(WarmPoolsConfig(), "vcore", {"vcore-agent"}, cluster, None, clock=clock)
    scheduler = vcore.Scheduler(cluster)
    return cluster, pools, scheduler, clock


def fill(pools: WarmPools, scheduler) -> list:
    """Create what the pools want, let the 'watch' show the pods, place them, and show them bound."""
    created = pools.to_create()
    for pod in created:
        pods_pool = pool_of(pod)
        pools.created(pods_pool)
        pod["metadata"]["uid"] = pod["metadata"]["name"]
        pools.placeholder_seen(pod)
    placed = pools.place(scheduler)
    for p, placement in placed:
        pools.placeholder_seen({**p.pod, "spec": {**p.pod["spec"], "nodeName": placement.node}})
    return placed


def test_warmpool_object_and_placeholder_pod():
    spec = PoolSpec.parse(warm_pool(3, cpu="500m", nodeSelector={"pool": "agents"}))
    assert spec.key == f"{NS}/sandbox" and spec.requests == {"cpu": 500, "memory": 2**30}
    with pytest.raises(ValueError, match="spec.size"):
        PoolSpec.parse(warm_pool(-1))
    with pytest.raises(ValueError, match="containers"):
        PoolSpec.parse({"metadata": {"name": "x", "namespace": NS}, "spec": {"size": 1, "template": {"spec": {}}}})
    with pytest.raises(ValueError, match="cpu"):
        PoolSpec.parse(warm_pool(1, cpu="lots"))


def test_refill_places_placeholders_on_what_real_pods_and_other_placeholders_leave(setup):
    cluster, pools, scheduler, clock = setup
    cluster.bind(
        {
            "metadata": {"name": "real", "namespace": "x"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]},
        },
        "n0",
    )
    assert pools.pool_changed(f"{NS}/sandbox", warm_pool(8, cpu="1")) is None
    placed = fill(pools, scheduler)
    assert len(placed) == 8  # n1 and n2 hold 4 each; n0 is full of real work
    assert {n for _, p in placed for n in [p.node]} == {"n1", "n2"}
    for _, p in placed:
        assert cluster.node_of(p.pod) is None  # placeholders stay out of the cluster state
        pod = pools.placeholders[p.pod].pod
        assert is_placeholder(pod) and pod["spec"]["priorityClassName"] == "vcore-warm-placeholder"
        assert pod["spec"]["preemptionPolicy"] == "Never"
    assert pools.counts(f"{NS}/sandbox") == (8, 8)
    assert fill(pools, scheduler) == []  # full: nothing more to create
    assert len(pools.refill_latencies) == 8


def test_a_hit_takes_a_placeholder_on_its_node(setup):
    cluster, pools, scheduler, clock = setup
    pools.pool_changed(f"{NS}/sandbox", warm_pool(2))
    fill(pools, scheduler)
    nodes = {p.node for p in pools.placeholders.values()}
    hit = pools.hit(session("s1"))
    assert hit is not None and hit.placement.node in nodes
    assert len(hit.evict) == 1 and is_placeholder(hit.evict[0])
    assert cluster.node_of(f"{NS}/s1") == hit.placement.node  # bound in the state, as schedule() binds
    assert pools.hits == 1 and pools.counts(f"{NS}/sandbox")[1] == 1
    assert len(pools.to_create()) == 1  # the pool refills


def test_a_miss_when_no_placeholder_node_fits(setup):
    cluster, pools, scheduler, clock = setup
    pools.pool_changed(f"{NS}/sandbox", warm_pool(1))
    fill(pools, scheduler)
    assert pools.hit(session("big", cpu="5")) is None and pools.misses == 1
    assert pools.hit(session("other", pool="nope")) is None  # not a pool of ours: neither hit nor miss
    assert pools.misses == 1


def test_any_real_pod_gets_room_placeholders_never_block(setup):
    cluster, pools, scheduler, clock = setup
    pools.pool_changed(f"{NS}/sandbox", warm_pool(12, cpu="1"))
    assert len(fill(pools, scheduler)) == 12  # every cpu of the cluster reserved
    real = vcore.Scheduler(cluster)
    (p,) = real.schedule(
        [
            {
                "metadata": {"name": "batch", "namespace": "x"},
                "spec": {"priority": -10, "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]},
            }
        ]
    )
    assert p.node is not None  # vcore does not see placeholders
    evicted = pools.room(p.node)
    assert len(evicted) == 3 and all(e["spec"].get("nodeName") or True for e in evicted)
    assert len(pools.on_node.get(p.node, ())) == 1  # 3 real cpu + 1 placeholder = 4
    assert pools.room(p.node) == []


def test_surplus_and_vanished_nodes(setup):
    cluster, pools, scheduler, clock = setup
    pools.pool_changed(f"{NS}/sandbox", warm_pool(4))
    fill(pools, scheduler)
    pools.pool_changed(f"{NS}/sandbox", warm_pool(1))
    assert len(pools.surplus()) == 3
    (left,) = pools.placeholders.values()
    gone = pools.node_gone(left.node)
    assert [g["metadata"]["name"] for g in gone] == [left.key.split("/")[1]]
    pools.pool_changed(f"{NS}/sandbox", None)
    assert pools.to_create() == []


def test_another_schedulers_pool_is_ignored(setup):
    cluster, pools, scheduler, clock = setup
    pools.pool_changed(f"{NS}/theirs", warm_pool(3, name="theirs", scheduler="someone-else"))
    assert pools.to_create() == []
    assert pools.pool_changed(f"{NS}/bad", warm_pool(-3, name="bad")).startswith("WarmPool agents/bad: spec.size")
    assert PLACEHOLDER_LABEL == "vcore.io/placeholder"
