"""Volcano v1.14 pkg/scheduler/plugins/resourcequota/resourcequota_test.go (TestResourceQuotaPlugin), against
vcore's cycle.

The Go test asks ssn.JobEnqueueable of an Inqueue PodGroup with the resourcequota plugin alone in its tier; here the
PodGroup starts Pending and the enqueue action decides: it goes Inqueue exactly when the Go case expects it
enqueueable. The quota is util.BuildResourceQuota's: ``spec.hard`` and ``status.hard`` both the limit, nothing used.

Beyond the table: what jobs already let through this cycle count, ``status.used`` counts, a quota holds only the
resources it names exactly, every quota of the namespace (and no other namespace's) applies, the rejection event,
the enableJobEnqueued switch, and the ResourceQuota calls of vcore.Cluster.
"""

from __future__ import annotations

import pytest

import vcore
from vcore.errors import ObjectExistsError, ObjectNotFoundError

from .volcano_fixtures import PG_INQUEUE, PG_PENDING, build_node, build_podgroup, build_queue, node_res, rl

HUGE, NORMAL = rl("20000m", "20G"), rl("2000m", "2G")


def quota(name: str, namespace: str, hard: dict[str, str], used: dict[str, str] | None = None) -> dict:
    """util.BuildResourceQuota (status.used as kube-controller-manager's quota controller would have it)."""
    status: dict = {"hard": dict(hard)}
    if used is not None:
        status["used"] = dict(used)
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"hard": dict(hard)},
        "status": status,
    }


def enqueued(podgroups: list[dict], quotas: list[dict], plugin: dict | None = None) -> dict[str, str]:
    """Each PodGroup's phase after one cycle of enqueue with the resourcequota plugin alone."""
    cluster = vcore.Cluster()
    cluster.add_node(build_node("n1", node_res("100", "100G")))
    cluster.add_queue(build_queue("c1", 1))
    for q in quotas:
        cluster.add_resource_quota(q)
    for pg in podgroups:
        cluster.add_podgroup(pg)
    cycle = {"actions": "enqueue", "tiers": [{"plugins": [plugin or {"name": "resourcequota"}]}]}
    result = vcore.Scheduler(cluster, cycle=cycle).run_cycle()
    return {key: status.phase for key, status in result.podgroups.items()}


def pg(name: str, min_resources: dict[str, str] | None, namespace: str = "default") -> dict:
    return build_podgroup(name, namespace, "c1", 2, None, PG_PENDING, min_resources=min_resources)


RQ1 = quota("test", "default", NORMAL)
CASES = [
    ("ResourceQuota capacity can match the needs of this pg", pg("pg1", NORMAL), [RQ1], True),
    ("ResourceQuota capacity can't match the needs of this pg", pg("pg2", HUGE), [RQ1], False),
    ("No ResourceQuota resource object", pg("pg2", HUGE), [], True),
    ("MinResources field of pg is not set", pg("pg3", None), [RQ1], True),
]


@pytest.mark.parametrize(("name", "group", "quotas", "enqueueable"), CASES, ids=[c[0] for c in CASES])
def test_resource_quota_plugin(name, group, quotas, enqueueable):
    key = f"default/{group['metadata']['name']}"
    assert enqueued([group], quotas)[key] == (PG_INQUEUE if enqueueable else PG_PENDING)


# -- beyond the table ----------------------------------------------------------------------------------------------
def test_jobs_let_through_this_cycle_count():
    """Two PodGroups of 1500m against a 2-cpu quota: the first (by creation) goes Inqueue, the second waits."""
    first, second = pg("first", rl("1500m")), pg("second", rl("1500m"))
    first["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    second["metadata"]["creationTimestamp"] = "2026-01-01T00:00:01Z"
    phases = enqueued([first, second], [quota("q", "default", {"cpu": "2"})])
    assert phases == {"default/first": PG_INQUEUE, "default/second": PG_PENDING}


def test_what_the_quota_controller_counted_is_used():
    used = quota("q", "default", {"cpu": "2"}, used={"cpu": "1500m"})
    assert enqueued([pg("a", rl("1"))], [used])["default/a"] == PG_PENDING
    assert enqueued([pg("a", rl("500m"))], [used])["default/a"] == PG_INQUEUE


def test_a_quota_holds_only_the_resources_it_names():
    """requests.cpu is not cpu (Volcano masks minResources by the quota's exact names); memory is held alone."""
    by_other_name = quota("q", "default", {"requests.cpu": "1", "memory": "1G"})
    assert enqueued([pg("a", rl("5", "500M"))], [by_other_name])["default/a"] == PG_INQUEUE
    assert enqueued([pg("a", rl("5", "2G"))], [by_other_name])["default/a"] == PG_PENDING


def test_every_quota_of_the_namespace_and_no_other_applies():
    roomy, tight = quota("roomy", "default", {"cpu": "100"}), quota("tight", "default", {"memory": "1G"})
    assert enqueued([pg("a", NORMAL)], [roomy, tight])["default/a"] == PG_PENDING
    elsewhere = quota("tight", "other", {"cpu": "1"})
    assert enqueued([pg("a", NORMAL)], [elsewhere])["default/a"] == PG_INQUEUE


def test_the_rejection_is_a_podgroup_event():
    cluster = vcore.Cluster()
    cluster.add_queue(build_queue("c1", 1))
    cluster.add_resource_quota(quota("q", "default", {"cpu": "2"}, used={"cpu": "1"}))
    cluster.add_podgroup(pg("a", rl("1500m", "1G")))
    cycle = {"actions": "enqueue", "tiers": [{"plugins": [{"name": "resourcequota"}]}]}
    events = vcore.Scheduler(cluster, cycle=cycle).run_cycle().events
    assert [(e.object, e.type, e.reason) for e in events] == [("PodGroup default/a", "Normal", "Unschedulable")]
    assert events[0].message == (
        "resource quota insufficient, requested: {'cpu': 1500}, used: {'cpu': 1000}, limited: {'cpu': 2000}"
    )


def test_enable_job_enqueued_off_asks_nothing():
    plugin = {"name": "resourcequota", "enableJobEnqueued": False}
    assert enqueued([pg("pg2", HUGE)], [RQ1], plugin)["default/pg2"] == PG_INQUEUE


def test_cluster_resource_quota_calls():
    cluster = vcore.Cluster()
    cluster.add_resource_quota(RQ1)
    with pytest.raises(ObjectExistsError, match="resourcequota default/test: already exists"):
        cluster.add_resource_quota(RQ1)
    cluster.update_resource_quota(quota("test", "default", HUGE))
    with pytest.raises(ObjectNotFoundError, match="resourcequota default/nope: not found"):
        cluster.update_resource_quota(quota("nope", "default", HUGE))
    with pytest.raises(ValueError, match=r"resourcequota default/bad: status\.hard: cpu: invalid quantity"):
        cluster.add_resource_quota(quota("bad", "default", {"cpu": "lots"}))
    cluster.remove_resource_quota("default/test")
    with pytest.raises(ObjectNotFoundError):
        cluster.remove_resource_quota("default/test")
