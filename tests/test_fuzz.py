"""Fuzz of the library's public entry points: random JSON-shaped objects and mutations of valid ones.

Every call either succeeds or raises one of the errors vcore promises (a vcore.VCoreError, ValueError, TypeError
or KeyError naming what is wrong), and a call that raises leaves the cluster exactly as it was. Never another
exception (AttributeError, IndexError, OverflowError...), never a crash. Deterministic (derandomized) and bounded.
The adapters' configurations, the router's HTTP bodies and the topology inputs have fuzz tests of their own
(tests/kube, tests/router, tests/topology).
"""

from __future__ import annotations

import copy
import functools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import vcore

PROMISED = (vcore.VCoreError, ValueError, TypeError, KeyError)
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 2**63 - 1, 2**63, 2**61]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "1",
            "-1",
            "1Ei",
            "9Ei",
            "100m",
            "0.5",
            "NaN",
            "Inf",
            "1e400",
            "a" * 300,
            "In",
            "Exists",
            "DoNotSchedule",
            "NoSchedule",
            "Pending",
            "Running",
            "\ud800",
        ]
    ),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n0", "labels": {"zone": "a", "kubernetes.io/hostname": "n0"}},
    "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}], "unschedulable": False},
    "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "4"}},
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p0",
        "namespace": "ns",
        "labels": {"app": "x"},
        "annotations": {"scheduling.k8s.io/group-name": "g0", "volcano.sh/task-spec": "worker"},
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": "1"}},
                "ports": [{"containerPort": 80}],
            }
        ],
        "initContainers": [{"name": "i", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}}],
        "nodeSelector": {"zone": "a"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}
                    ]
                }
            }
        },
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "priority": 10,
        "priorityClassName": "high",
        "schedulingGates": [],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}],
    },
    "status": {"phase": "Pending"},
}
PODGROUP = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "g0", "namespace": "ns"},
    "spec": {
        "minMember": 2,
        "minTaskMember": {"worker": 1},
        "queue": "q0",
        "priorityClassName": "high",
        "minResources": {"cpu": "2"},
    },
}
QUEUE = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "Queue",
    "metadata": {"name": "q0"},
    "spec": {"weight": 2, "capability": {"cpu": "64"}, "guarantee": {"resource": {"cpu": "2"}}, "reclaimable": True},
}
PRIORITY_CLASS = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
    "preemptionPolicy": "PreemptLowerPriority",
}
PROFILE = {
    "percentageOfNodesToScore": 50,
    "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 2}]}},
    "pluginConfig": [
        {
            "name": "NodeResourcesFit",
            "args": {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                }
            },
        }
    ],
}
CYCLE = {
    "actions": "enqueue, allocate, preempt, reclaim, backfill",
    "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang", "enablePreemptable": False}, {"name": "conformance"}]},
        {
            "plugins": [
                {"name": "overcommit", "arguments": {"overcommit-factor": 1.5}},
                {"name": "drf"},
                {"name": "predicates"},
                {"name": "proportion"},
                {"name": "nodeorder"},
                {"name": "binpack", "arguments": {"binpack.weight": 2}},
            ]
        },
    ],
}


@st.composite
def mutated(draw, valid: dict):
    """A valid object with a few mutations at random paths: a value replaced by random JSON, a key dropped or
    added, a list emptied."""
    obj = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, 3))):
        parent, key = _pick(draw, obj)
        if parent is None:
            return draw(json_values)
        action = draw(st.sampled_from(["replace", "replace", "drop", "add"]))
        if action == "replace":
            parent[key] = draw(json_values)
        elif action == "drop" and isinstance(parent, dict):
            parent.pop(key, None)
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(json_values)
    return obj


def _pick(draw, obj):
    """A (container, key) somewhere in obj, walking down a random number of levels."""
    parent, key = None, None
    node = obj
    while isinstance(node, (dict, list)) and node and draw(st.integers(0, 3)) > 0:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        parent, key = node, draw(st.sampled_from(keys))
        node = node[key]
    if parent is None and isinstance(obj, (dict, list)) and obj:
        keys = list(obj) if isinstance(obj, dict) else list(range(len(obj)))
        parent, key = obj, draw(st.sampled_from(keys))
    return parent, key


def _cluster() -> vcore.Cluster:
    cluster = vcore.Cluster()
    for i in range(3):
        node = copy.deepcopy(NODE)
        node["metadata"]["name"] = node["metadata"]["labels"]["kubernetes.io/hostname"] = f"n{i}"
        cluster.add_node(node)
    cluster.add_priority_class(PRIORITY_CLASS)
    cluster.add_queue(QUEUE)
    cluster.add_podgroup(PODGROUP)
    running = copy.deepcopy(POD)
    running["metadata"]["name"] = "running"
    running["spec"]["nodeName"] = "n1"
    running["status"]["phase"] = "Running"
    cluster.add_pod(running)
    return cluster


def _snapshot(cluster: vcore.Cluster):
    with cluster.lock:
        return (
            tuple(cluster.node_names),
            tuple(cluster.resource_names),
            cluster.allocatable_matrix.tobytes(),
            cluster.requested_matrix.tobytes(),
            cluster.n_pods,
            tuple(sorted(cluster.pending_pods)),
            tuple(cluster.podgroups),
            tuple(cluster.queues),
            tuple((n, tuple(cluster.pods_on(n))) for n in cluster.node_names),
            cluster.topology.node_topo.tobytes(),
        )


def _call_or_promised_error(cluster, call):
    before = _snapshot(cluster)
    try:
        call()
    except PROMISED as e:
        assert str(e), "an error must say what is wrong"
        assert _snapshot(cluster) == before, f"state changed by a refused call: {e}"
        return False
    return True


ENTRY_POINTS = {
    "add_node": ({**NODE, "metadata": {**NODE["metadata"], "name": "n3"}}, lambda c, o: c.add_node(o)),
    "update_node": ({**NODE, "metadata": {**NODE["metadata"], "name": "n1"}}, lambda c, o: c.update_node(o)),
    "add_pod": (POD, lambda c, o: c.add_pod(o)),
    "update_pod": ({**POD, "metadata": {**POD["metadata"], "name": "running"}}, lambda c, o: c.update_pod(o)),
    "bind": (POD, lambda c, o: c.bind(o, "n2")),
    "add_podgroup": ({**PODGROUP, "metadata": {"name": "g1", "namespace": "ns"}}, lambda c, o: c.add_podgroup(o)),
    "update_podgroup": (PODGROUP, lambda c, o: c.update_podgroup(o)),
    "add_queue": ({**QUEUE, "metadata": {"name": "q1"}}, lambda c, o: c.add_queue(o)),
    "add_priority_class": ({**PRIORITY_CLASS, "metadata": {"name": "low"}}, lambda c, o: c.add_priority_class(o)),
    "schedule": (POD, lambda c, o: vcore.Scheduler(c).schedule([o])),
    "filter": (POD, lambda c, o: vcore.Scheduler(c).filter(o)),
    "profile": (PROFILE, lambda c, o: vcore.Scheduler(c, o)),
    "cycle": (CYCLE, lambda c, o: vcore.Scheduler(c, cycle=o).run_cycle()),
}


def _fuzz(name):
    valid, call = ENTRY_POINTS[name]

    @FUZZ
    @given(st.one_of(mutated(valid), json_values))
    def run(obj):
        cluster = _cluster()
        _call_or_promised_error(cluster, lambda: call(cluster, obj))

    return run


def test_the_valid_objects_are_valid():
    for name, (valid, call) in ENTRY_POINTS.items():
        cluster = _cluster()
        assert _call_or_promised_error(cluster, functools.partial(call, cluster, copy.deepcopy(valid))), name


test_fuzz_add_node = _fuzz("add_node")
test_fuzz_update_node = _fuzz("update_node")
test_fuzz_add_pod = _fuzz("add_pod")
test_fuzz_update_pod = _fuzz("update_pod")
test_fuzz_bind = _fuzz("bind")
test_fuzz_add_podgroup = _fuzz("add_podgroup")
test_fuzz_update_podgroup = _fuzz("update_podgroup")
test_fuzz_add_queue = _fuzz("add_queue")
test_fuzz_add_priority_class = _fuzz("add_priority_class")
test_fuzz_schedule = _fuzz("schedule")
test_fuzz_filter = _fuzz("filter")
test_fuzz_profile = _fuzz("profile")
test_fuzz_cycle = _fuzz("cycle")


@FUZZ
@given(st.lists(st.sampled_from(list(ENTRY_POINTS)), min_size=2, max_size=6), st.data())
def test_fuzz_sequences_keep_the_accounting_consistent(names, data):
    """Several calls, valid or not, in a row on one cluster: the accounting stays consistent after each."""
    cluster = _cluster()
    for name in names:
        valid, call = ENTRY_POINTS[name]
        obj = data.draw(st.one_of(st.just(copy.deepcopy(valid)), mutated(valid)))
        _call_or_promised_error(cluster, functools.partial(call, cluster, obj))
        requested, allocatable = cluster.requested_matrix, cluster.allocatable_matrix
        assert (requested >= 0).all() and (allocatable >= 0).all()
        assert not np.isnan(requested.astype(float)).any() and math.isfinite(float(requested.sum()))
