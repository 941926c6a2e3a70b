"""NUMA alignment (Topology Manager policies via volcano.sh/numa-topology-policy): GPUs and pinned CPUs on one NUMA
node under single-numa-node, the fewest possible under restricted, as few as fit under best-effort, one NVLink
domain inside; the node's NUMA model from vcore.io/numa-topology (or a Volcano Numatopology); bad input named."""
from __future__ import annotations

import json

import pytest

import vcore
from vcore.gpu.numa import numa_annotation_from_numatopology

# GPUs 0-3 on NUMA 0 (NVLink domains 0: {0, 1}, 1: {2, 3}), GPUs 4-7 on NUMA 1 (NVLink 2).
GPU_TOPOLOGY = {"gpus": [{"index": i, "numa": 0 if i < 4 else 1, "nvlink": 0 if i < 2 else 1 if i < 4 else 2}
                         for i in range(8)]}
NUMA = {"numa": [{"id": 0, "cpu": "16"}, {"id": 1, "cpu": "16"}]}


def node(name: str = "n0", gpus: int = 8, numa: dict | None = NUMA, gpu_topology: dict | None = GPU_TOPOLOGY) -> dict:
    annotations = {}
    if numa is not None:
        annotations["vcore.io/numa-topology"] = json.dumps(numa)
    if gpu_topology is not None and gpus:
        annotations["vcore.io/gpu-topology"] = json.dumps(gpu_topology)
    alloc = {"cpu": "32", "memory": "512Gi", "pods": "110"}
    labels = {}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
        labels = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.memory": "81920"}
    return {"metadata": {"name": name, "labels": labels, "annotations": annotations},
            "status": {"allocatable": alloc}}


def pod(name: str, gpus: int = 0, cpu: str = "4", policy: str | None = "single-numa-node") -> dict:
    req = {"cpu": cpu, "memory": "1Gi"}
    if gpus:
        req["nvidia.com/gpu"] = str(gpus)
    ann = {"volcano.sh/numa-topology-policy": policy} if policy else {}
    return {"metadata": {"name": name, "namespace": "ml", "annotations": ann},
            "spec": {"containers": [{"name": "c", "resources": {"requests": req, "limits": dict(req)}}]}}


def setup(*nodes) -> tuple[vcore.Cluster, vcore.Scheduler]:
    c = vcore.Cluster()
    for n in nodes or (node(),):
        c.add_node(n)
    return c, vcore.Scheduler(c)


def place(s: vcore.Scheduler, p: dict):
    return s.schedule([p])[0]


def test_single_numa_node_puts_gpus_and_cpus_on_one_numa_node_and_one_nvlink_domain():
    c, s = setup()
    p = place(s, pod("a", gpus=2, cpu="8"))
    assert p.node == "n0" and p.gpus.indices == (0, 1)  # NUMA 0, NVLink domain 0
    p = place(s, pod("b", gpus=2, cpu="8"))
    assert p.gpus.indices == (2, 3)  # NUMA 0 still has 8 CPUs and two GPUs (one NVLink domain)
    # NUMA 0's 16 pinned CPUs are gone: the next pod's CPUs and GPUs go to NUMA 1 together.
    p = place(s, pod("c", gpus=1, cpu="2"))
    assert p.gpus.indices == (4,)


def test_single_numa_node_filters_what_no_numa_node_holds():
    c, s = setup()
    p = place(s, pod("five", gpus=5, cpu="2"))
    assert p.node is None
    assert p.reasons == {"node(s) could not align the pod on NUMA nodes as its topology policy asks": 1}
    cpu_only = place(s, pod("wide", cpu="20"))  # 20 CPUs fit the node (32), not a NUMA node (16)
    assert cpu_only.node is None and "topology policy" in cpu_only.message
    assert place(s, pod("narrow", cpu="12")).node == "n0"  # pinned on NUMA 0
    assert place(s, pod("narrow2", cpu="12")).node == "n0"  # NUMA 1
    assert place(s, pod("narrow3", cpu="6")).node is None  # 4 + 4 pinned CPUs left, not 6 on one NUMA node
    assert place(s, pod("shared-pool", cpu="1500m")).node == "n0"  # not whole CPUs: not pinned
    c.unbind("ml/narrow")
    assert place(s, pod("narrow4", cpu="6")).node == "n0"  # unbinding returned NUMA 0's CPUs


def test_restricted_uses_the_fewest_numa_nodes_the_node_could_offer():
    c, s = setup()
    assert place(s, pod("five", gpus=5, cpu="2", policy="restricted")).node == "n0"  # needs 2 NUMA nodes anyway
    c2, s2 = setup()
    c2.bind(pod("a", gpus=3, cpu="1", policy=None), "n0", gpus="0,1,2")  # NUMA 0
    c2.bind(pod("b", gpus=3, cpu="1", policy=None), "n0", gpus="4,5,6")  # NUMA 1
    # One free GPU per NUMA node: 2 GPUs could be on one NUMA node of this node, so restricted refuses to split.
    assert place(s2, pod("r", gpus=2, cpu="1", policy="restricted")).node is None
    best = place(s2, pod("be", gpus=2, cpu="1", policy="best-effort"))  # best-effort places it across NUMA nodes
    assert best.node == "n0" and best.gpus.indices == (3, 7)


def test_best_effort_prefers_one_numa_node_and_none_keeps_the_device_preference():
    c, s = setup()
    c.bind(pod("a", gpus=3, cpu="1", policy=None), "n0", gpus="0,1,2")
    p = place(s, pod("b", gpus=2, cpu="1", policy="best-effort"))
    assert p.gpus.indices == (4, 5)  # one NUMA node (1) rather than GPUs 3 and 4
    p = place(s, pod("c", gpus=1, cpu="1", policy="none"))
    assert p.gpus.indices == (3,)


def test_nodes_without_numa_information_are_one_numa_node():
    c, s = setup(node(numa=None, gpu_topology=None))
    assert place(s, pod("a", gpus=8, cpu="30")).node == "n0"


def test_node_updates_keep_pinned_cpus():
    c, s = setup()
    place(s, pod("a", cpu="16"))  # all of NUMA 0
    c.update_node(node())
    assert place(s, pod("b", cpu="16")).node == "n0"  # NUMA 1
    assert place(s, pod("c", cpu="1")).node is None


def test_volcano_numatopology_conversion():
    numatopo = {"metadata": {"name": "n0"}, "spec": {
        "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"},
        "numares": {"cpu": {"allocatable": "1-3,6-7", "capacity": 8}},
        "cpuDetail": {str(i): {"numa": 0 if i < 4 else 1, "socket": 0, "core": i} for i in range(8)}}}
    assert json.loads(numa_annotation_from_numatopology(numatopo)) == {
        "numa": [{"id": 0, "cpu": "3"}, {"id": 1, "cpu": "2"}]}


@pytest.mark.parametrize("annotation, message", [
    ("{", "node bad: metadata.annotations[vcore.io/numa-topology]: not valid JSON"),
    ('{"numa": [{"id": -1, "cpu": "4"}]}', "numa[0].id: expected an integer >= 0"),
    ('{"numa": [{"id": 0, "cpu": "lots"}]}', "numa[0].cpu: expected a cpu quantity"),
    ('{"numa": [{"id": 0, "cpu": "4"}, {"id": 0, "cpu": "4"}]}', "NUMA node 0 listed twice"),
    ('{"nodes": []}', "expected {\"numa\""),
], ids=["json", "negative-id", "bad-cpu", "duplicate", "shape"])
def test_bad_node_annotation(annotation, message):
    c = vcore.Cluster()
    n = node("bad")
    n["metadata"]["annotations"]["vcore.io/numa-topology"] = annotation
    with pytest.raises(ValueError) as info:
        c.add_node(n)
    assert message in str(info.value) and c.n_nodes == 0


def test_bad_pod_policy():
    c, s = setup()
    with pytest.raises(ValueError, match=r"pod .*numa-topology-policy\]: expected one of none, best-effort"):
        s.schedule([pod("x", policy="strict")])
