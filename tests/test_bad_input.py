"""Bad input a tester found accepted, or answered with the wrong exception: each is now a precise error naming the
object and the field, with the cluster unchanged."""

from __future__ import annotations

import math

import pytest

import vcore
from tests.batch import builders as B


@pytest.fixture
def cluster():
    c = vcore.Cluster()
    c.add_node(B.node("a"))
    return c


def test_a_pod_whose_status_is_not_an_object(cluster):
    with pytest.raises(TypeError, match=r"^pod default/x: status: expected an object, got str$"):
        cluster.add_pod({"metadata": {"name": "x"}, "status": "Running"})
    assert cluster.pending_pods == []


@pytest.mark.parametrize("phase", [3, "Runing", True])
def test_a_pod_phase_that_is_not_one(cluster, phase):
    with pytest.raises(ValueError, match=r"^pod default/x: status\.phase: must be one of Pending, Running, "):
        cluster.add_pod({"metadata": {"name": "x"}, "status": {"phase": phase}})


def test_system_priority_class_names_are_reserved(cluster):
    with pytest.raises(ValueError, match=r"^priorityclass system-mine: metadata\.name: .*reserved for system use"):
        cluster.add_priority_class({"metadata": {"name": "system-mine"}, "value": 2_000_000_000})
    with pytest.raises(ValueError, match="reserved for system use"):  # a built-in name with another value
        cluster.add_priority_class({"metadata": {"name": "system-node-critical"}, "value": 5})
    # The cluster's own copy of a built-in class (a watch, a relist) is accepted and changes nothing.
    cluster.add_priority_class({"metadata": {"name": "system-node-critical"}, "value": 2_000_001_000})
    cluster.add_priority_class({"metadata": {"name": "system-node-critical"}, "value": 2_000_001_000})


def test_system_priority_classes_cannot_be_removed(cluster):
    with pytest.raises(ValueError, match=r"^priorityclass system-node-critical: a system priority class cannot be "):
        cluster.remove_priority_class("system-node-critical")
    cluster.add_pod(B.pod("p", priority_class="system-node-critical"))
    cluster.add_pod(B.pod("q", cpu="4", mem="1Gi"))
    vcore.Scheduler(cluster).run_cycle()
    assert cluster.node_of(f"{B.NS}/p") == "a"  # the class is still there: p (critical) went first


@pytest.mark.parametrize("factor", [math.nan, math.inf, -math.inf])
def test_overcommit_factor_must_be_finite(cluster, factor):
    cycle = {
        "actions": "enqueue, allocate",
        "tiers": [{"plugins": [{"name": "overcommit", "arguments": {"overcommit-factor": factor}}]}],
    }
    with pytest.raises(vcore.ProfileError, match=r"overcommit-factor: must be a finite number"):
        vcore.Scheduler(cluster, cycle=cycle)


def test_a_cycle_configmap_with_invalid_yaml_inside(cluster, tmp_path):
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap"},
        "data": {"volcano-scheduler.conf": "actions: [\n"},
    }
    with pytest.raises(vcore.ProfileError, match=r"^data\.volcano-scheduler\.conf: not valid YAML: "):
        vcore.Scheduler(cluster, cycle=configmap)
    with pytest.raises(vcore.ProfileError, match="the ConfigMap has no scheduler configuration"):
        vcore.Scheduler(cluster, cycle={**configmap, "data": "x"})


def test_a_profile_or_cycle_file_that_cannot_be_read(cluster, tmp_path):
    with pytest.raises(vcore.ProfileError, match=r"nope\.yaml: cannot read the file"):
        vcore.Scheduler(cluster, tmp_path / "nope.yaml")
    with pytest.raises(vcore.ProfileError, match=r"nope\.yaml: cannot read the file"):
        vcore.Scheduler(cluster, cycle=str(tmp_path / "nope.yaml"))
    (tmp_path / "bad.yaml").write_text("plugins: {score: [\n")
    with pytest.raises(vcore.ProfileError, match=r"bad\.yaml: invalid YAML"):
        vcore.Scheduler(cluster, tmp_path / "bad.yaml")
