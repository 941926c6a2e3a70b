"""Tests of vcore.sim.synthetic: determinism, Kubernetes shape, the workload mix, and SchedulingBasic's exact shape."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from vcore.sim import synthetic
from vcore.sim.synthetic import GPU_RESOURCE, scheduling_basic, synthetic_cluster, synthetic_nodes, synthetic_pods


def test_same_seed_same_objects():
    a = synthetic_cluster(300, 800, seed=7)
    b = synthetic_cluster(300, 800, seed=7)
    assert json.dumps(a.nodes) == json.dumps(b.nodes)
    assert json.dumps(a.pods) == json.dumps(b.pods)


def test_different_seed_different_objects():
    a = synthetic_cluster(300, 800, seed=1)
    b = synthetic_cluster(300, 800, seed=2)
    assert json.dumps(a.nodes) != json.dumps(b.nodes)
    assert json.dumps(a.pods) != json.dumps(b.pods)


def test_prefix_stable_when_growing():
    # Pools are drawn per node in order, so a bigger cluster extends a smaller one (handy when scaling a bench).
    assert synthetic_nodes(50, seed=3) == synthetic_nodes(100, seed=3)[:50]


def test_counts_and_names_unique():
    w = synthetic_cluster(500, 2000, seed=0)
    assert (w.n_nodes, w.n_pods) == (500, 2000)
    assert len({n["metadata"]["name"] for n in w.nodes}) == 500
    assert len({(p["metadata"]["namespace"], p["metadata"]["name"]) for p in w.pods}) == 2000
    assert w.init_pods == []


def test_kubernetes_shape():
    w = synthetic_cluster(50, 200, seed=0)
    for node in w.nodes:
        assert node["kind"] == "Node" and node["apiVersion"] == "v1"
        assert set(node["status"]["allocatable"]) >= {"cpu", "memory", "pods", "ephemeral-storage"}
        assert all(isinstance(v, str) for v in node["status"]["allocatable"].values())
        assert node["metadata"]["labels"]["kubernetes.io/hostname"] == node["metadata"]["name"]
    for pod in w.pods:
        assert pod["kind"] == "Pod" and pod["spec"]["containers"]
    json.dumps(w.nodes), json.dumps(w.pods)  # plain data only


def test_node_pools_taints_and_cordons():
    nodes = synthetic_nodes(4000, seed=0)
    pools = Counter(n["metadata"]["labels"][synthetic.POOL_LABEL] for n in nodes)
    assert set(pools) == {p.name for p in synthetic.NODE_POOLS}
    gpu_nodes = [n for n in nodes if GPU_RESOURCE in n["status"]["allocatable"]]
    assert gpu_nodes
    for n in gpu_nodes:
        assert n["status"]["allocatable"][GPU_RESOURCE] == "8"
        assert {"key": GPU_RESOURCE, "value": "present", "effect": "NoSchedule"} in n["spec"]["taints"]
    cordoned = [n for n in nodes if n["spec"].get("unschedulable")]
    assert 0 < len(cordoned) < 0.05 * len(nodes)
    for n in cordoned:
        assert any(t["key"] == "node.kubernetes.io/unschedulable" for t in n["spec"]["taints"])
    zones = Counter(n["metadata"]["labels"][synthetic.ZONE_LABEL] for n in nodes)
    assert set(zones) == set(synthetic.ZONES)


def test_pod_mix_has_constraints_and_misfits():
    pods = synthetic_pods(3000, seed=0)
    specs = [p["spec"] for p in pods]
    assert any("nodeSelector" in s for s in specs)
    assert any("required" in k for s in specs for k in s.get("affinity", {}).get("nodeAffinity", {}))
    assert any("preferred" in k for s in specs for k in s.get("affinity", {}).get("nodeAffinity", {}))
    assert any("tolerations" in s for s in specs)
    assert any("initContainers" in s for s in specs)
    assert any("resources" not in s["containers"][0] for s in specs)  # best effort
    kinds = Counter(p["metadata"]["name"].split("-")[0] for p in pods)
    assert kinds["misfit"] > 0 and kinds["train"] > 0


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: synthetic_cluster(-1, 10), ValueError),
        (lambda: synthetic_cluster(10, -5), ValueError),
        (lambda: synthetic_cluster(10, 10, seed=-1), ValueError),
        (lambda: synthetic_cluster(1.5, 10), TypeError),
        (lambda: synthetic_cluster(True, 10), TypeError),
        (lambda: scheduling_basic(n_nodes=-1), ValueError),
    ],
    ids=["neg-nodes", "neg-pods", "neg-seed", "float-nodes", "bool-nodes", "basic-neg"],
)
def test_bad_arguments(call, exc):
    with pytest.raises(exc, match="must be"):
        call()


def test_empty():
    w = synthetic_cluster(0, 0)
    assert w.nodes == [] and w.pods == []


def test_scheduling_basic_shape():
    w = scheduling_basic(n_nodes=10, n_init=3, n_pods=7)
    assert (len(w.nodes), len(w.init_pods), len(w.pods)) == (10, 3, 7)
    for node in w.nodes:
        assert node["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi", "pods": "110"}
        assert not node["spec"].get("taints") and not node["spec"].get("unschedulable")
    for pod in w.init_pods + w.pods:
        (container,) = pod["spec"]["containers"]
        assert container["resources"] == {"requests": {"cpu": "100m", "memory": "500Mi"}}
    assert {p["metadata"]["namespace"] for p in w.init_pods} == {"sched-setup"}
    assert {p["metadata"]["namespace"] for p in w.pods} == {"sched-test"}
    defaults = scheduling_basic()
    assert (defaults.n_nodes, len(defaults.init_pods), defaults.n_pods) == (5000, 1000, 10000)


def test_synthetic_cluster_schedules_with_reasons():
    """End to end through the public API: some pods fit, the rest carry kube-scheduler reasons."""
    import vcore

    w = synthetic_cluster(200, 1500, seed=0)
    cluster = vcore.Cluster()
    for node in w.nodes:
        cluster.add_node(node)
    placements = vcore.Scheduler(cluster, seed=0).schedule(w.pods)
    assert len(placements) == len(w.pods)
    placed = [p for p in placements if p.node is not None]
    pending = [p for p in placements if p.node is None]
    assert placed and pending
    reasons = Counter(r for p in pending for r in p.reasons)
    assert "node(s) had untolerated taint(s)" in reasons
    assert "node(s) didn't match Pod's node affinity/selector" in reasons
    assert any(r.startswith("Insufficient ") for r in reasons)
    # Misfits never fit, whatever else happened.
    assert all(p.node is None for p in placements if p.pod.split("/")[1].startswith("misfit-"))
