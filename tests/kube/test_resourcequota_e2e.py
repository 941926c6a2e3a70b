"""vcore-scheduler with Volcano's resourcequota plugin on the real control plane: a PodGroup (its pods not created
yet, as Volcano's job controller waits for Inqueue) is enqueued only where its namespace's ResourceQuotas hold its
minResources, counting what the quota controller reports used and what was enqueued before it, and a quota's
change reaches the PodGroup still waiting. The test writes the quota's status as kube-controller-manager's quota
controller would (the test control plane does not run it)."""

from __future__ import annotations

import functools

import pytest

from vcore.batch.config import DEFAULT_CONF
from vcore_kube.testenv.objects import create_nodes, node

from .harness import wait_for

SCHED = "vcore-quota"
VOLCANO = "/apis/scheduling.volcano.sh/v1beta1"
# resourcequota in the first tier: a later tier is asked only when no plugin of an earlier one voted (overcommit and
# proportion, in Volcano's second tier, permit this PodGroup).
CONF = {
    **DEFAULT_CONF,
    "tiers": [
        {"plugins": [*DEFAULT_CONF["tiers"][0]["plugins"], {"name": "resourcequota"}]},
        *DEFAULT_CONF["tiers"][1:],
    ],
}


@pytest.fixture
def scheduler(scheduler):
    return functools.partial(scheduler, SCHED, cycle=CONF)


def _podgroup(admin, namespace: str, name: str, cpu: str) -> None:
    admin.create(
        f"{VOLCANO}/namespaces/{namespace}/podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": 1, "minResources": {"cpu": cpu}},
        },
    )


def _phase(admin, namespace: str, name: str) -> str | None:
    return (admin.get(f"{VOLCANO}/namespaces/{namespace}/podgroups/{name}").get("status") or {}).get("phase")


def _quota_status(admin, namespace: str, hard: str, used: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/resourcequotas/cpu"
    q = admin.get(path)
    q["status"] = {"hard": {"cpu": hard}, "used": {"cpu": used}}
    admin.put(path + "/status", q)


def _quota_events(admin, namespace: str, podgroup: str) -> list[dict]:
    events = admin.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events").get("items") or []
    return [
        e
        for e in events
        if (e.get("regarding") or {}).get("name") == podgroup
        and e.get("reason") == "Unschedulable"
        and "resource quota insufficient" in (e.get("note") or "")
    ]


def test_a_podgroup_is_enqueued_only_within_its_namespaces_quota(admin, namespace, scheduler):
    run = scheduler()
    create_nodes(admin, [node(f"quota-{i}", labels={"pool": "quota"}, cpu="8") for i in range(2)])
    admin.create(
        f"/api/v1/namespaces/{namespace}/resourcequotas",
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "cpu"}, "spec": {"hard": {"cpu": "2"}}},
    )
    _quota_status(admin, namespace, hard="2", used="500m")
    _podgroup(admin, namespace, "small", "1")
    wait_for(lambda: _phase(admin, namespace, "small") == "Inqueue", 30, "small Inqueue", run)
    _podgroup(admin, namespace, "big", "2")  # 0.5 used + 1 enqueued + 2 > 2
    wait_for(lambda: _quota_events(admin, namespace, "big"), 30, "big's resource quota event", run)
    assert _phase(admin, namespace, "big") == "Pending"
    _quota_status(admin, namespace, hard="4", used="500m")  # the quota grows: 0.5 + 1 + 2 <= 4
    wait_for(lambda: _phase(admin, namespace, "big") == "Inqueue", 30, "big Inqueue once the quota grew", run)
