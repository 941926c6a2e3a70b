"""Status writing against the real API server: the status writer (with the scheduler's own permissions) writes a
status once and not again for a stale cache, re-reads the object on a real conflict, and retries a failed write
with backoff on its own until it lands; vcore-scheduler writes its Volcano Queues' status (state, allocated,
PodGroups by phase) and records Volcano's PodGroup and eviction events; the API server's system priority classes
are taken as they are (no error at start)."""

from __future__ import annotations

import functools
import logging
import time

import pytest

from vcore_kube.convert import Converter
from vcore_kube.kubeclient import ApiException, load_api
from vcore_kube.metrics import Metrics
from vcore_kube.statuswriter import StatusWriter
from vcore_kube.testenv.control_plane import SHARDER_USER
from vcore_kube.testenv.objects import create_nodes, create_pods, node, pod
from vcore_kube.volcanostatus import KINDS, PODGROUP, podgroup_path

from .harness import bound, delete_pod, events, pods, wait_bound, wait_for

VOLCANO = "/apis/scheduling.volcano.sh/v1beta1"
SCHED = "vcore-status"
RUNNING = {
    "phase": "Running",
    "running": 1,
    "succeeded": 0,
    "failed": 0,
    "conditions": [
        {
            "type": "Scheduled",
            "status": "True",
            "reason": "tasks in gang are ready to be scheduled",
            "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ],
}
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def make_podgroup(admin, namespace: str, name: str, min_member: int = 1, **spec) -> dict:
    return admin.create(
        f"{VOLCANO}/namespaces/{namespace}/podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": min_member, **spec},
        },
    )


def writes(metrics: Metrics, result: str, kind: str = PODGROUP) -> float:
    return (
        metrics.registry.get_sample_value("vcore_scheduler_status_writes_total", {"kind": kind, "result": result})
        or 0.0
    )


@pytest.fixture
def writer_for(control_plane):
    made = []

    def make(kubeconfig: str) -> tuple[StatusWriter, Metrics]:
        api = load_api(kubeconfig)
        metrics = Metrics()
        writer = StatusWriter(api, KINDS, metrics=metrics).start()
        made.append((writer, api))
        return writer, metrics

    yield make
    for writer, api in made:
        writer.close(timeout=1)
        api.close()


def test_a_status_is_written_once_and_not_again_for_a_stale_cache(control_plane, admin, namespace, writer_for):
    writer, metrics = writer_for(control_plane.scheduler_kubeconfig)
    created = make_podgroup(admin, namespace, "once")
    key = f"{namespace}/once"
    assert writer.want(PODGROUP, key, created, RUNNING)
    wait_for(lambda: writer.pending() == 0, 30, "the write")
    held = admin.get(podgroup_path(key))
    assert held["status"]["phase"] == "Running" and held["status"]["conditions"][0]["type"] == "Scheduled"
    # The loop's cache has not seen the write yet: wanting the same status again writes nothing.
    assert not writer.want(PODGROUP, key, created, RUNNING)
    writer.observed(PODGROUP, key, created)  # the watch is behind, then catches up
    writer.observed(PODGROUP, key, held)
    time.sleep(0.3)
    assert writes(metrics, "ok") == 1 and writer.pending() == 0
    assert admin.get(podgroup_path(key))["metadata"]["resourceVersion"] == held["metadata"]["resourceVersion"]


def test_a_conflict_rereads_the_object_and_writes_on_the_fresh_version(control_plane, admin, namespace, writer_for):
    writer, metrics = writer_for(control_plane.scheduler_kubeconfig)
    created = make_podgroup(admin, namespace, "conflict")
    key = f"{namespace}/conflict"
    admin.patch(podgroup_path(key), {"metadata": {"labels": {"changed": "meanwhile"}}})  # a newer version
    assert writer.want(PODGROUP, key, created, RUNNING)  # decided against the older one
    wait_for(lambda: writer.pending() == 0, 30, "the write after the conflict")
    held = admin.get(podgroup_path(key))
    assert held["status"]["phase"] == "Running" and held["metadata"]["labels"] == {"changed": "meanwhile"}
    assert writes(metrics, "conflict") == 1 and writes(metrics, "ok") == 1


def test_a_failed_write_is_retried_with_backoff_until_it_lands(control_plane, admin, namespace, writer_for):
    # A real failure: the sharder's identity may not patch PodGroups (HTTP 403) until it is granted to. No cycle,
    # no second want: the writer's own threads retry.
    writer, metrics = writer_for(control_plane.sharder_kubeconfig)
    created = make_podgroup(admin, namespace, "retried")
    key = f"{namespace}/retried"
    assert writer.want(PODGROUP, key, created, RUNNING)
    wait_for(lambda: writes(metrics, "error") >= 2, 30, "two failed attempts")
    assert writer.pending() == 1 and not (admin.get(podgroup_path(key)).get("status") or {})
    name = f"{namespace}-podgroup-status"
    admin.create(
        f"{RBAC}/clusterroles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [
                {
                    "apiGroups": ["scheduling.volcano.sh"],
                    "resources": ["podgroups"],
                    "verbs": ["patch"],
                    "resourceNames": ["retried"],
                }
            ],
        },
    )
    admin.create(
        f"{RBAC}/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": SHARDER_USER}],
        },
    )
    try:
        wait_for(lambda: writer.pending() == 0, 60, "the retried write to land")
    finally:
        admin.delete(f"{RBAC}/clusterrolebindings/{name}")
        admin.delete(f"{RBAC}/clusterroles/{name}")
    assert admin.get(podgroup_path(key))["status"]["phase"] == "Running"
    assert writes(metrics, "ok") == 1


def test_the_api_servers_system_priority_classes_are_taken_as_they_are(admin, caplog):
    listed = admin.get("/apis/scheduling.k8s.io/v1/priorityclasses")["items"]
    assert {"system-node-critical", "system-cluster-critical"} <= {pc["metadata"]["name"] for pc in listed}
    converter = Converter()
    with caplog.at_level(logging.ERROR):
        for pc in listed:  # what the first list gives: every class ADDED, the system ones vcore has already
            converter.volcano_object("PriorityClass", None, pc)
        for pc in listed:  # and again, as a watch that restarts without the cache (each one new to it)
            converter.volcano_object("PriorityClass", None, pc)
    assert converter.errors == 0 and not caplog.records


# -- vcore-scheduler ------------------------------------------------------------------------------------------
@pytest.fixture
def scheduler(scheduler):
    return functools.partial(scheduler, SCHED)


def queue_of(admin, name: str) -> dict:
    return admin.get(f"{VOLCANO}/queues/{name}")


def member(namespace: str, group: str, i: int, pool: str, cpu: str) -> dict:
    p = pod(f"{group}-{i}", namespace, scheduler=SCHED, cpu=cpu, annotations={"scheduling.k8s.io/group-name": group})
    p["spec"]["nodeSelector"] = {"pool": pool}
    return p


def test_queue_status_and_podgroup_events_as_volcano_writes_them(admin, namespace, scheduler):
    run = scheduler()
    pool = f"status-{namespace.split('-')[0]}"  # the namespace's unique prefix: a name short enough for a label
    create_nodes(admin, [node(f"{pool}-{i}", cpu="2", labels={"pool": pool}) for i in range(2)])
    q = f"{namespace}-q"
    admin.create(
        f"{VOLCANO}/queues",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": q},
            "spec": {"weight": 1},
        },
    )
    make_podgroup(admin, namespace, "fits", 2, queue=q)
    make_podgroup(admin, namespace, "waits", 2, queue=q)
    create_pods(admin, [member(namespace, "fits", i, pool, "1500m") for i in range(2)])
    wait_bound(admin, namespace, ["fits-0", "fits-1"], run=run)
    create_pods(admin, [member(namespace, "waits", i, pool, "1500m") for i in range(2)])  # no room left

    def status_reads(want):
        return lambda: all((queue_of(admin, q).get("status") or {}).get(k) == v for k, v in want.items())

    wait_for(
        status_reads({"state": "Open", "running": 1, "allocated": {"cpu": "3", "memory": "256Mi"}}),
        30,
        "the queue's status",
        run,
    )
    st = queue_of(admin, q)["status"]
    assert st["pending"] + st["inqueue"] == 1 and st["unknown"] == st["completed"] == 0, st

    ready = ("Normal", "Scheduled", "pod group is ready")

    def told_fits():
        pg = [e for e in events(admin, namespace) if e["regarding"]["kind"] == "PodGroup"]
        return [(e["type"], e["reason"], e["note"]) for e in pg if e["regarding"]["name"] == "fits"]

    # Events go out on their own thread, so the queue's status may land first.
    told = wait_for(lambda: ready in (t := told_fits()) and t, 30, "the gang's ready event", run)
    assert told.count(ready) == 1, told
    # Created before its pods, the gang is told it lacks them if a cycle sees it in between (timing decides).
    lacking = [t for t in told if t != ready]
    lacks_pods = ("Warning", "Unschedulable", "Not enough valid tasks")
    assert all(t[:2] == lacks_pods[:2] and t[2].startswith(lacks_pods[2]) for t in lacking), told
    # Created before its pods, the waiting gang first lacks pods, then room: an event for each reason.
    waiting = wait_for(
        lambda: (
            (
                w := [
                    e
                    for e in events(admin, namespace)
                    if e["regarding"]["kind"] == "PodGroup" and e["regarding"]["name"] == "waits"
                ]
            )
            and any("tasks in gang unschedulable" in e["note"] for e in w)
            and w
        ),
        30,
        "the Unschedulable event",
        run,
    )
    assert {(e["type"], e["reason"]) for e in waiting} == {("Warning", "Unschedulable")}
    assert {e["regarding"]["apiVersion"] for e in waiting} == {"scheduling.volcano.sh/v1beta1"}

    # The running gang goes (as a job controller would delete it): the waiting one takes its place.
    for i in range(2):
        delete_pod(admin, namespace, f"fits-{i}")
    wait_bound(admin, namespace, ["waits-0", "waits-1"], run=run)
    wait_for(
        lambda: podgroup_status(admin, namespace, "waits").get("phase") == "Running", 30, "the second gang Running", run
    )
    wait_for(lambda: podgroup_status(admin, namespace, "fits").get("running") == 0, 30, "the emptied gang's count", run)
    wait_for(status_reads({"running": 1, "allocated": {"cpu": "3", "memory": "256Mi"}}), 30, "the queue's status", run)
    # A pod of the running gang goes while no pod of this scheduler is pending: no cycle is due, yet the statuses
    # follow (the gang is below its minimum: no longer Running).
    delete_pod(admin, namespace, "waits-1")
    wait_for(lambda: podgroup_status(admin, namespace, "waits").get("running") == 1, 30, "the gang's new count", run)
    assert podgroup_status(admin, namespace, "waits")["phase"] != "Running"
    wait_for(
        status_reads({"running": 0, "allocated": {"cpu": "1500m", "memory": "128Mi"}}),
        30,
        "the queue's status after the loss",
        run,
    )
    assert " ERROR " not in run.log.read_text()
    # The two queue statuses waited for above differ, so each was written; states in between may have been
    # coalesced into a later write (the latest wins), so more writes than that depend on timing.
    assert run.metric('vcore_scheduler_status_writes_total{kind="Queue",result="ok"}') >= 2


def podgroup_status(admin, namespace: str, name: str) -> dict:
    return admin.get(podgroup_path(f"{namespace}/{name}")).get("status") or {}


def test_a_podgroup_without_pods_goes_inqueue_then_runs_its_pods(admin, namespace, scheduler):
    # Volcano's job controller creates a job's pods only once its PodGroup is Inqueue: vcore-scheduler admits a
    # PodGroup that has no pod yet on its minResources, and writes so.
    run = scheduler()
    pool = f"status-{namespace.split('-')[0]}"
    create_nodes(admin, [node(f"{pool}-{i}", cpu="2", labels={"pool": pool}) for i in range(2)])
    make_podgroup(admin, namespace, "job", 2, minResources={"cpu": "3", "memory": "256Mi"})
    make_podgroup(admin, namespace, "toobig", 2, minResources={"cpu": "100000"})  # more than the whole cluster has
    wait_for(
        lambda: podgroup_status(admin, namespace, "job").get("phase") == "Inqueue",
        30,
        "the pod-less PodGroup Inqueue",
        run,
    )
    assert podgroup_status(admin, namespace, "toobig").get("phase") in (None, "Pending")
    assert not pods(admin, namespace)
    create_pods(admin, [member(namespace, "job", i, pool, "1500m") for i in range(2)])  # as the job controller would
    wait_bound(admin, namespace, ["job-0", "job-1"], run=run)
    wait_for(
        lambda: podgroup_status(admin, namespace, "job").get("phase") == "Running", 30, "the PodGroup Running", run
    )
    assert podgroup_status(admin, namespace, "job")["running"] == 2
    assert podgroup_status(admin, namespace, "toobig").get("phase") in (None, "Pending")


def test_evictions_are_told_as_volcano_tells_them(admin, namespace, scheduler):
    run = scheduler(
        cycle={
            "actions": "enqueue, allocate, preempt, backfill",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}]},
            ],
        }
    )
    for name, value in ((f"{namespace}-low", 10), (f"{namespace}-high", 1000)):
        admin.create(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value},
        )
    pool = f"status-{namespace.split('-')[0]}"
    create_nodes(admin, [node(f"{pool}-0", cpu="2", labels={"pool": pool})])
    make_podgroup(admin, namespace, "low", 1, priorityClassName=f"{namespace}-low")
    low = [member(namespace, "low", i, pool, "1") for i in range(2)]
    for p in low:
        p["spec"]["priorityClassName"] = f"{namespace}-low"
    create_pods(admin, low)
    wait_bound(admin, namespace, ["low-0", "low-1"], run=run)
    make_podgroup(admin, namespace, "high", 1, priorityClassName=f"{namespace}-high")
    high = member(namespace, "high", 0, pool, "1")
    high["spec"]["priorityClassName"] = f"{namespace}-high"
    create_pods(admin, [high])

    def evicted():
        present = {p["metadata"]["name"]: p for p in pods(admin, namespace)}
        going = [name for name, p in present.items() if p["metadata"].get("deletionTimestamp")]
        for name in going:  # no kubelet: finish the deletion as one would
            delete_pod(admin, namespace, name)
        return going + [name for name in ("low-0", "low-1") if name not in present]  # gone at once (grace 0)

    victims = wait_for(evicted, 30, "a victim evicted", run)
    wait_bound(admin, namespace, ["high-0"], run=run)
    told = wait_for(lambda: [e for e in events(admin, namespace, "Evict")], 30, "the Evict events", run)
    on_pod = [e for e in told if e["regarding"]["kind"] == "Pod"]
    on_group = [e for e in told if e["regarding"]["kind"] == "PodGroup"]
    assert [(e["type"], e["regarding"]["name"], e["note"]) for e in on_pod] == [
        ("Warning", victims[0], "Pod is evicted, because of preempt")
    ]
    assert [(e["type"], e["regarding"]["name"], e["note"]) for e in on_group] == [("Normal", "low", "preempt")]
    assert len(bound(admin, namespace)) == 2


def test_the_scheduler_starts_without_an_error(admin, scheduler):
    run = scheduler()
    time.sleep(1.0)  # a few cycles over the API server's objects (its system priority classes among them)
    try:
        admin.get("/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical")
    except ApiException as e:  # pragma: no cover - every API server has it
        pytest.fail(f"no system-node-critical: {e}")
    assert " ERROR " not in run.log.read_text(), run.log_tail()
