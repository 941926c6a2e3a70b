"""vcore.Cluster through the public API: nodes, pods, views and bad input.

Covers: add/update/remove of nodes given as API-shaped dicts and as kubernetes client V1Node models; the typed
errors (NodeExistsError, NodeNotFoundError, NodeInUseError, PodAlreadyBoundError, PodNotFoundError) and that every
failed call leaves allocatable/requested/nonzero/live_mask/n_pods/node_names unchanged; eviction on remove_node
(unbound keys returned, requested back to zero, the freed index reused, live_mask False meanwhile); malformed
nodes (ValueError/TypeError naming the node and the field); extended resources as new rows; the non-zero requested
matrix (missing cpu counts 100m, missing memory 200Mi, explicit 0 stays 0); views read-only, sharing memory while
the generation is unchanged and staying readable (stale) after the cluster grows.
"""

from __future__ import annotations

import numpy as np
import pytest
from kubernetes import client as k8s

import vcore
from conftest import GIB, container, make_node, make_pod, req_pod, taint
from vcore import (
    NodeExistsError,
    NodeInUseError,
    NodeNotFoundError,
    PodAlreadyBoundError,
    PodNotFoundError,
    VCoreError,
)

MI = 2**20


def v1_node(
    name: str,
    cpu: str = "4",
    memory: str = "8Gi",
    *,
    labels: dict | None = None,
    taints: list[tuple[str, str, str]] | None = None,
    unschedulable: bool | None = None,
    extra: dict | None = None,
) -> k8s.V1Node:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110", **(extra or {})}
    return k8s.V1Node(
        api_version="v1",
        kind="Node",
        metadata=k8s.V1ObjectMeta(name=name, labels=labels),
        spec=k8s.V1NodeSpec(
            taints=[k8s.V1Taint(key=k, value=v or None, effect=e) for k, v, e in taints or []],
            unschedulable=unschedulable,
        ),
        status=k8s.V1NodeStatus(allocatable=allocatable, capacity=dict(allocatable)),
    )


def v1_pod(name: str, cpu: str | None = None, memory: str | None = None, namespace: str = "default") -> k8s.V1Pod:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return k8s.V1Pod(
        api_version="v1",
        kind="Pod",
        metadata=k8s.V1ObjectMeta(name=name, namespace=namespace),
        spec=k8s.V1PodSpec(
            containers=[
                k8s.V1Container(name="c", image="busybox", resources=k8s.V1ResourceRequirements(requests=requests))
            ]
        ),
    )


def snapshot(cluster: vcore.Cluster) -> dict:
    """Copies of everything a failed call must leave unchanged."""
    return {
        "allocatable": cluster.allocatable_matrix.copy(),
        "requested": cluster.requested_matrix.copy(),
        "nonzero": cluster.nonzero_requested_matrix.copy(),
        "live": cluster.live_mask.copy(),
        "n_pods": cluster.n_pods,
        "n_nodes": cluster.n_nodes,
        "node_names": list(cluster.node_names),
        "resource_names": list(cluster.resource_names),
        "generation": cluster.generation,
    }


def assert_unchanged(before: dict, cluster: vcore.Cluster) -> None:
    after = snapshot(cluster)
    assert after.keys() == before.keys()
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            assert after[key].shape == value.shape, key
            assert np.array_equal(after[key], value), key
        else:
            assert after[key] == value, key


@pytest.fixture
def cluster() -> vcore.Cluster:
    """Three nodes n0..n2 (4 cpu, 8Gi) with one pod default/p0 (1 cpu, 1Gi) bound on n1."""
    c = vcore.Cluster()
    for i in range(3):
        c.add_node(make_node(f"n{i}", 4000, 8 * GIB))
    c.bind(req_pod("p0", 1000, GIB), "n1")
    return c


# -------------------------------------------------------------------------------------------------------------
# Nodes
# -------------------------------------------------------------------------------------------------------------
def test_add_node_dict_returns_index_and_fills_views():
    c = vcore.Cluster()
    assert c.n_nodes == 0 and c.node_names == [] and c.n_pods == 0
    assert c.add_node(make_node("a", 2500, 3 * GIB, pods=7, extra={"ephemeral-storage": "10Gi"})) == 0
    assert c.add_node(make_node("b", "1", "512Mi")) == 1
    assert c.node_names == ["a", "b"] and c.n_nodes == 2
    assert c.node_index("a") == 0 and c.node_index("b") == 1
    assert c.has_node("a") and not c.has_node("c")
    assert c.resource_names[:4] == ["cpu", "memory", "ephemeral-storage", "pods"]
    assert c.allocatable("cpu").tolist() == [2500, 1000]
    assert c.allocatable("memory").tolist() == [3 * GIB, 512 * MI]
    assert c.allocatable("pods").tolist() == [7, 110]
    assert c.allocatable("ephemeral-storage").tolist() == [10 * GIB, 0]
    assert c.requested_matrix.shape == c.allocatable_matrix.shape == (len(c.resource_names), 2)
    assert not c.requested_matrix.any()
    assert c.live_mask.tolist() == [True, True]
    assert c.allocatable("cpu").dtype == np.int64 and c.live_mask.dtype == np.bool_


def test_add_node_kubernetes_v1_node_model():
    c = vcore.Cluster()
    node = v1_node(
        "k1", "3500m", "2Gi", labels={"zone": "a"}, taints=[("gpu", "yes", "NoSchedule")], extra={"nvidia.com/gpu": "2"}
    )
    assert c.add_node(node) == 0
    assert c.node_names == ["k1"]
    assert c.allocatable("cpu").tolist() == [3500]
    assert c.allocatable("memory").tolist() == [2 * GIB]
    assert c.allocatable("nvidia.com/gpu").tolist() == [2]
    # The taint is enforced: a pod without the toleration is filtered out.
    result = vcore.Scheduler(c).filter(req_pod("p", 100))
    assert result.feasible == [] and result.reasons == {"node(s) had untolerated taint(s)": 1}
    # A V1Pod binds like a dict pod.
    c.bind(v1_pod("vp", "250m", "64Mi"), "k1")
    assert c.node_of("default/vp") == "k1"
    assert c.requested("cpu").tolist() == [250] and c.requested("memory").tolist() == [64 * MI]


def test_update_node_replaces_spec_and_keeps_pods(cluster):
    index = cluster.node_index("n1")
    assert cluster.update_node(make_node("n1", 8000, 16 * GIB, labels={"zone": "b"})) == index
    assert cluster.allocatable("cpu")[index] == 8000
    assert cluster.allocatable("memory")[index] == 16 * GIB
    assert cluster.pods_on("n1") == ["default/p0"]
    assert cluster.requested("cpu")[index] == 1000 and cluster.n_pods == 1
    # The update works with a V1Node too, and it can make the node unschedulable.
    cluster.update_node(v1_node("n1", "2", "4Gi", unschedulable=True))
    assert cluster.allocatable("cpu")[index] == 2000
    result = vcore.Scheduler(cluster).filter(req_pod("q", 100))
    assert result.feasible == ["n0", "n2"] and result.reasons == {"node(s) were unschedulable": 1}


def test_update_node_drops_resources_missing_from_the_new_spec():
    c = vcore.Cluster()
    c.add_node(make_node("g", 4000, GIB, extra={"nvidia.com/gpu": 4}))
    c.update_node(make_node("g", 4000, GIB))
    assert c.allocatable("nvidia.com/gpu").tolist() == [0]


def test_duplicate_node_name_raises_and_leaves_state_unchanged(cluster):
    before = snapshot(cluster)
    with pytest.raises(NodeExistsError, match="n1") as info:
        cluster.add_node(make_node("n1", 1, 1))
    assert isinstance(info.value, VCoreError) and isinstance(info.value, ValueError)
    assert_unchanged(before, cluster)
    with pytest.raises(NodeExistsError):
        cluster.add_node(v1_node("n2"))
    assert_unchanged(before, cluster)


def test_update_unknown_node_raises(cluster):
    before = snapshot(cluster)
    with pytest.raises(NodeNotFoundError, match="ghost") as info:
        cluster.update_node(make_node("ghost", 1000, GIB))
    assert isinstance(info.value, KeyError)
    assert_unchanged(before, cluster)


def test_remove_unknown_node_raises(cluster):
    before = snapshot(cluster)
    with pytest.raises(NodeNotFoundError, match="ghost"):
        cluster.remove_node("ghost")
    with pytest.raises(NodeNotFoundError):
        cluster.node_index("ghost")
    assert_unchanged(before, cluster)


def test_remove_empty_node_frees_slot_and_reuses_it(cluster):
    assert cluster.remove_node("n0") == []
    assert cluster.node_names == ["n1", "n2"] and cluster.n_nodes == 2
    assert cluster.live_mask.tolist() == [False, True, True]
    assert cluster.allocatable("cpu").tolist() == [0, 4000, 4000]
    assert not cluster.has_node("n0")
    # Indices are stable: n1 and n2 keep theirs; the next add reuses slot 0.
    assert (cluster.node_index("n1"), cluster.node_index("n2")) == (1, 2)
    assert cluster.add_node(make_node("fresh", 1500, GIB)) == 0
    assert cluster.node_names == ["fresh", "n1", "n2"]
    assert cluster.live_mask.tolist() == [True, True, True]
    assert cluster.allocatable("cpu").tolist() == [1500, 4000, 4000]


def test_remove_node_with_pods_needs_evict(cluster):
    cluster.bind(req_pod("p1", 500, GIB, namespace="ml"), "n1")
    before = snapshot(cluster)
    with pytest.raises(NodeInUseError, match="n1") as info:
        cluster.remove_node("n1")
    assert isinstance(info.value, ValueError)
    assert_unchanged(before, cluster)
    assert cluster.node_of("default/p0") == "n1"

    index = cluster.node_index("n1")
    evicted = cluster.remove_node("n1", evict=True)
    assert sorted(evicted) == ["default/p0", "ml/p1"]
    assert cluster.n_pods == 0 and cluster.node_of("default/p0") is None and cluster.node_of("ml/p1") is None
    assert not cluster.requested_matrix[:, index].any()
    assert not cluster.nonzero_requested_matrix[:, index].any()
    assert not cluster.allocatable_matrix[:, index].any()
    assert not cluster.live_mask[index]
    assert cluster.node_names == ["n0", "n2"]
    with pytest.raises(PodNotFoundError):
        cluster.unbind("default/p0")

    # The freed index goes to the next node, which starts empty.
    assert cluster.add_node(make_node("n9", 2000, GIB)) == index
    assert cluster.live_mask[index]
    assert not cluster.requested_matrix[:, index].any()
    assert cluster.pods_on("n9") == []
    # Evicted pods can be bound again.
    cluster.bind(req_pod("p0", 1000, GIB), "n9")
    assert cluster.requested("cpu")[index] == 1000


# -------------------------------------------------------------------------------------------------------------
# Pods
# -------------------------------------------------------------------------------------------------------------
def test_bind_and_unbind_account_requests(cluster):
    i0, i1 = cluster.node_index("n0"), cluster.node_index("n1")
    cluster.bind(req_pod("a", 300, 100 * MI), "n0")
    cluster.bind(make_pod("b", container({"cpu": 200}), container({"cpu": 50, "memory": MI}), namespace="x"), "n0")
    assert cluster.requested("cpu")[i0] == 550
    assert cluster.requested("memory")[i0] == 101 * MI
    assert cluster.requested("pods")[i0] == 2 and cluster.requested("pods")[i1] == 1
    assert cluster.n_pods == 3
    assert sorted(cluster.pods_on("n0")) == ["default/a", "x/b"]
    assert cluster.node_of("x/b") == "n0" and cluster.node_of(req_pod("a")) == "n0"
    assert cluster.node_of("default/nope") is None

    assert cluster.unbind("x/b") == "n0"
    assert cluster.requested("cpu")[i0] == 300 and cluster.requested("pods")[i0] == 1
    assert cluster.unbind(req_pod("a", 300, 100 * MI)) == "n0"  # by pod object
    assert not cluster.requested_matrix[:, i0].any() and not cluster.nonzero_requested_matrix[:, i0].any()
    assert cluster.n_pods == 1


def test_bind_past_allocatable_is_accounted_as_is(cluster):
    cluster.bind(req_pod("huge", 64_000, 64 * GIB), "n0")
    i0 = cluster.node_index("n0")
    assert cluster.requested("cpu")[i0] == 64_000 > cluster.allocatable("cpu")[i0]


def test_bind_twice_raises_and_leaves_state_unchanged(cluster):
    before = snapshot(cluster)
    for node in ("n1", "n0"):  # same node or another one: both rejected
        with pytest.raises(PodAlreadyBoundError, match="default/p0") as info:
            cluster.bind(req_pod("p0", 1000, GIB), node)
        assert isinstance(info.value, VCoreError) and isinstance(info.value, ValueError)
        assert_unchanged(before, cluster)
    # Same name in another namespace is another pod.
    cluster.bind(req_pod("p0", 1000, GIB, namespace="other"), "n0")
    assert cluster.n_pods == 2


def test_unbind_unknown_raises(cluster):
    before = snapshot(cluster)
    for key in ("default/ghost", "p0", "other/p0", ""):
        with pytest.raises(PodNotFoundError) as info:
            cluster.unbind(key)
        assert isinstance(info.value, KeyError)
        assert_unchanged(before, cluster)
    with pytest.raises(PodNotFoundError, match="default/ghost"):
        cluster.unbind(req_pod("ghost"))
    assert_unchanged(before, cluster)


def test_bind_onto_unknown_node_raises(cluster):
    before = snapshot(cluster)
    with pytest.raises(NodeNotFoundError, match="ghost"):
        cluster.bind(req_pod("q", 100, MI), "ghost")
    assert_unchanged(before, cluster)
    assert cluster.node_of("default/q") is None
    cluster.remove_node("n0")
    before = snapshot(cluster)
    with pytest.raises(NodeNotFoundError, match="n0"):  # a removed node is unknown too
        cluster.bind(req_pod("q", 100, MI), "n0")
    assert_unchanged(before, cluster)


def test_failed_bind_with_a_new_resource_leaves_state_unchanged(cluster):
    """The architecture's rule holds for a pod that names a resource the cluster has never seen."""
    before = snapshot(cluster)
    with pytest.raises(NodeNotFoundError):
        cluster.bind(req_pod("g", 100, MI, extra={"example.com/new": 1}), "ghost")
    assert_unchanged(before, cluster)


def test_bad_pod_raises_and_leaves_state_unchanged(cluster):
    before = snapshot(cluster)
    with pytest.raises(ValueError, match=r"pod default/bad.*cpu"):
        cluster.bind(req_pod("bad", "-1"), "n0")
    with pytest.raises(ValueError, match=r"pod default/bad.*memory"):
        cluster.bind(req_pod("bad", 100, "12xyz"), "n0")
    with pytest.raises((TypeError, ValueError)):
        cluster.bind(42, "n0")
    assert_unchanged(before, cluster)


# -------------------------------------------------------------------------------------------------------------
# Malformed nodes
# -------------------------------------------------------------------------------------------------------------
def _with(node: dict, path: tuple[str, ...], value) -> dict:
    target = node
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    return node


MALFORMED = [
    pytest.param(("status", "allocatable", "cpu"), "-1", ValueError, "cpu", id="negative-cpu"),
    pytest.param(("status", "allocatable", "memory"), "-5Gi", ValueError, "memory", id="negative-memory"),
    pytest.param(
        ("status", "allocatable", "nvidia.com/gpu"), "-2", ValueError, "nvidia.com/gpu", id="negative-extended"
    ),
    pytest.param(("status", "allocatable", "cpu"), "4 cores", ValueError, "cpu", id="malformed-quantity"),
    pytest.param(("spec", "taints"), [taint("k", "v", "NoScheduleX")], ValueError, "effect", id="bad-taint-effect"),
    pytest.param(("spec", "taints"), [{"key": "k", "effect": ""}], ValueError, "effect", id="empty-taint-effect"),
    pytest.param(("metadata", "labels"), ["zone=a"], TypeError, "labels", id="labels-not-a-dict"),
    pytest.param(("metadata", "labels"), "zone=a", TypeError, "labels", id="labels-a-string"),
]


@pytest.mark.parametrize("path, value, error, field", MALFORMED)
def test_malformed_node_raises_naming_node_and_field(cluster, path, value, error, field):
    before = snapshot(cluster)
    with pytest.raises(error) as info:
        cluster.add_node(_with(make_node("bad-node", 1000, GIB), path, value))
    message = str(info.value)
    assert "bad-node" in message and field in message, message
    assert_unchanged(before, cluster)
    # Updating an existing node with the same defect fails the same way and keeps the old spec.
    with pytest.raises(error) as info:
        cluster.update_node(_with(make_node("n0", 1000, GIB), path, value))
    assert "n0" in str(info.value) and field in str(info.value)
    assert_unchanged(before, cluster)


def test_node_without_name_raises(cluster):
    before = snapshot(cluster)
    with pytest.raises(ValueError, match="name"):
        cluster.add_node({"metadata": {}, "status": {"allocatable": {"cpu": "1"}}})
    with pytest.raises((TypeError, ValueError)):
        cluster.add_node(None)
    with pytest.raises((TypeError, ValueError)):
        cluster.add_node("n5")
    assert_unchanged(before, cluster)


# -------------------------------------------------------------------------------------------------------------
# Resources
# -------------------------------------------------------------------------------------------------------------
def test_extended_resources_appear_as_new_rows():
    c = vcore.Cluster()
    c.add_node(make_node("cpu-only", 4000, GIB))
    rows = len(c.resource_names)
    assert "nvidia.com/gpu" not in c.resource_names
    with pytest.raises(KeyError, match="nvidia.com/gpu"):
        c.allocatable("nvidia.com/gpu")
    c.add_node(make_node("gpu", 4000, GIB, extra={"nvidia.com/gpu": 8, "hugepages-2Mi": "4Mi"}))
    assert c.resource_names[rows:] == ["nvidia.com/gpu", "hugepages-2Mi"]
    assert c.allocatable_matrix.shape == (rows + 2, 2)
    assert c.allocatable("nvidia.com/gpu").tolist() == [0, 8]
    assert c.allocatable("hugepages-2Mi").tolist() == [0, 4 * MI]
    c.bind(req_pod("trainer", 1000, GIB, extra={"nvidia.com/gpu": 2}), "gpu")
    assert c.requested("nvidia.com/gpu").tolist() == [0, 2]
    assert c.requested_matrix[c.resource_names.index("nvidia.com/gpu")].tolist() == [0, 2]


def test_nonzero_requested_matrix_semantics():
    c = vcore.Cluster()
    c.add_node(make_node("n", 8000, 8 * GIB))
    cpu_row, mem_row = 0, 1
    cases = [  # (pod, requested cpu, requested memory, non-zero cpu, non-zero memory)
        (make_pod("missing-both", container()), 0, 0, 100, 200 * MI),
        (make_pod("missing-cpu", container({"memory": GIB})), 0, GIB, 100, GIB),
        (make_pod("missing-mem", container({"cpu": 300})), 300, 0, 300, 200 * MI),
        (make_pod("explicit-zero", container({"cpu": 0, "memory": 0})), 0, 0, 0, 0),
        (make_pod("two", container({"cpu": 0}), container({"memory": MI})), 0, MI, 0 + 100, 200 * MI + MI),
        (make_pod("limit-only", container(limits={"cpu": 700, "memory": 3 * MI})), 700, 3 * MI, 700, 3 * MI),
    ]
    total = np.zeros(4, dtype=np.int64)
    for pod, cpu, mem, nz_cpu, nz_mem in cases:
        before_req = c.requested_matrix[[cpu_row, mem_row], 0].copy()
        before_nz = c.nonzero_requested_matrix[:, 0].copy()
        c.bind(pod, "n")
        name = pod["metadata"]["name"]
        assert (c.requested_matrix[[cpu_row, mem_row], 0] - before_req).tolist() == [cpu, mem], name
        assert (c.nonzero_requested_matrix[:, 0] - before_nz).tolist() == [nz_cpu, nz_mem], name
        total += [cpu, mem, nz_cpu, nz_mem]
    assert c.nonzero_requested_matrix.shape == (2, 1)
    assert c.nonzero_requested_matrix[:, 0].tolist() == total[2:].tolist()
    # Unbinding subtracts exactly what binding added.
    for pod, *_ in cases:
        c.unbind(pod)
    assert not c.nonzero_requested_matrix.any() and not c.requested_matrix.any()


# -------------------------------------------------------------------------------------------------------------
# Views
# -------------------------------------------------------------------------------------------------------------
def test_views_are_read_only(cluster):
    views = [
        cluster.allocatable("cpu"),
        cluster.requested("memory"),
        cluster.allocatable_matrix,
        cluster.requested_matrix,
        cluster.nonzero_requested_matrix,
        cluster.live_mask,
    ]
    for view in views:
        assert not view.flags.writeable
        with pytest.raises(ValueError):
            view[0] = 1
        with pytest.raises(ValueError):
            view.setflags(write=True)
    with pytest.raises(ValueError):
        np.add(cluster.requested("cpu"), 1, out=cluster.requested("cpu"))
    assert cluster.requested("cpu").tolist() == [0, 1000, 0]


def test_views_share_memory_and_see_binds(cluster):
    generation = cluster.generation
    cpu = cluster.requested("cpu")
    matrix = cluster.requested_matrix
    nonzero = cluster.nonzero_requested_matrix
    assert np.shares_memory(cpu, matrix)
    assert np.shares_memory(cluster.allocatable("cpu"), cluster.allocatable_matrix)
    i0 = cluster.node_index("n0")
    cluster.bind(req_pod("later", 250, MI), "n0")
    assert cluster.generation == generation
    assert cpu[i0] == 250 and matrix[0, i0] == 250  # visible through views taken before the bind
    assert nonzero[0, i0] == 250 and nonzero[1, i0] == MI
    cluster.unbind("default/later")
    assert cpu[i0] == 0
    # An update of a node's allocatable is visible too.
    alloc = cluster.allocatable("cpu")
    cluster.update_node(make_node("n0", 1234, GIB))
    assert cluster.generation == generation and alloc[i0] == 1234


def test_view_keeps_memory_alive_after_cluster_is_dropped():
    c = vcore.Cluster()
    c.add_node(make_node("a", 4000, GIB))
    c.bind(req_pod("p", 100, MI), "a")
    alloc, req, live = c.allocatable_matrix, c.requested_matrix, c.live_mask
    del c
    import gc

    gc.collect()
    assert alloc[0].tolist() == [4000] and req[0].tolist() == [100] and live.tolist() == [True]


def test_view_taken_before_growth_stays_readable_but_stale():
    c = vcore.Cluster()
    c.add_node(make_node("first", 4000, GIB))
    old_generation = c.generation
    old_cpu = c.allocatable("cpu")
    old_req = c.requested_matrix
    assert old_cpu.tolist() == [4000]
    n_added = 0
    while c.generation == old_generation:  # grow until storage is reallocated
        c.add_node(make_node(f"grow-{n_added}", 1000, GIB))
        n_added += 1
        assert n_added < 100_000
    assert c.generation != old_generation
    c.bind(req_pod("after", 300, MI), "first")
    # The old views are still valid memory with the values they had; fresh views see the change.
    assert old_cpu.tolist() == [4000]
    assert old_req.shape[1] == 1 and old_req[0, 0] == 0
    assert c.requested("cpu")[0] == 300
    assert c.allocatable("cpu").shape == (n_added + 1,)
    assert not old_cpu.flags.writeable


def test_new_resource_row_bumps_generation():
    c = vcore.Cluster()
    c.add_node(make_node("a", 4000, GIB))
    generation, rows = c.generation, c.allocatable_matrix.shape[0]
    c.add_node(make_node("b", 4000, GIB, extra={"example.com/fpga": 1}))
    assert c.allocatable_matrix.shape[0] == rows + 1
    assert c.generation != generation
