"""Faults, real where they can be: the API server killed and restarted, etcd compacted past the scheduler's
resourceVersion (410 Gone), a pod bound by someone else first (409), a pod deleted between decision and
binding, the scheduler SIGKILLed and restarted, two replicas with the leader killed, and 5xx / slow responses
through the fault-injecting proxy. After each: every pod bound exactly once or pending with a reason, none lost,
none double-bound, no node over-committed."""

from __future__ import annotations

import threading
import time

import pytest

from vcore_kube.testenv.control_plane import SCHEDULER_USER
from vcore_kube.testenv.faultproxy import Fault, FaultProxy
from vcore_kube.testenv.objects import create_nodes, create_pods, node, pod

from .harness import SchedulerRun, bound, check_invariants, delete_pod, events, wait_bound, wait_for

NAME = "vcore-faults"


@pytest.fixture
def proxy(control_plane):
    p = FaultProxy(control_plane.apiserver_url, control_plane.ca_file).start()
    yield p
    p.stop()


@pytest.fixture
def runs():
    started: list[SchedulerRun] = []
    yield started
    for run in started:
        if run.alive():
            run.stop()


def start(runs, kubeconfig, tmp_path, name=NAME, identity=None, wait_ready=True, **config) -> SchedulerRun:
    run = SchedulerRun(kubeconfig, tmp_path, name, **config)
    runs.append(run)
    return run.start(identity=identity, wait_ready=wait_ready)


def via(proxy, control_plane, tmp_path) -> str:
    return proxy.write_kubeconfig(
        str(tmp_path / "proxied.kubeconfig"), SCHEDULER_USER, control_plane.tokens[SCHEDULER_USER]
    )


def workload(admin, namespace, prefix, n, selector=None, cpu="200m"):
    pods = [pod(f"{prefix}{i}", namespace, scheduler=NAME, cpu=cpu) for i in range(n)]
    for p in pods:
        if selector:
            p["spec"]["nodeSelector"] = selector
    create_pods(admin, pods)
    return [p["metadata"]["name"] for p in pods]


def pool(admin, name, n, cpu="8"):
    create_nodes(admin, [node(f"{name}-{i}", cpu=cpu, labels={"pool": name}) for i in range(n)])
    return {"pool": name}


def test_api_server_killed_and_restarted_mid_run(control_plane, admin, namespace, runs, tmp_path):
    selector = pool(admin, "restart", 4)
    run = start(runs, control_plane.scheduler_kubeconfig, tmp_path)
    first = workload(admin, namespace, "a", 40, selector)
    control_plane.kill_apiserver()
    time.sleep(1.0)
    control_plane.start_apiserver()
    second = workload(admin, namespace, "b", 40, selector)
    wait_bound(admin, namespace, first + second, timeout=90, run=run)
    check_invariants(admin, namespace, NAME, expect_all_bound=True)
    assert run.alive()


def test_compaction_past_the_resource_version_forces_a_relist(control_plane, admin, namespace, proxy, runs, tmp_path):
    selector = pool(admin, "compact", 3)
    run = start(runs, via(proxy, control_plane, tmp_path), tmp_path)
    first = workload(admin, namespace, "a", 20, selector)
    wait_bound(admin, namespace, first, run=run)
    proxy.hold()  # the scheduler is cut off with its resourceVersions ...
    second = workload(admin, namespace, "b", 20, selector)  # ... while the cluster moves on ...
    control_plane.compact_etcd()  # ... and etcd forgets the history it would resume from
    control_plane.restart_apiserver()  # a fresh watch cache, starting after the compaction
    proxy.release()
    wait_bound(admin, namespace, first + second, timeout=90, run=run)
    assert run.metric('vcore_scheduler_relists_total{kind="Pod",reason="expired"}') >= 1
    check_invariants(admin, namespace, NAME, expect_all_bound=True)


def binding_on_the_wire(control_plane, admin, namespace, proxy, runs, tmp_path, name, selector) -> SchedulerRun:
    """Start a scheduler whose binding of pod `name` (1.5 cpu) the proxy holds for 2 s; return once it is sent."""
    proxy.add(Fault("delay", path=rf"/pods/{name}/binding", method="POST", seconds=2.0))
    run = start(runs, via(proxy, control_plane, tmp_path), tmp_path)
    workload(admin, namespace, name[:-1], 1, selector, cpu="1500m")
    wait_for(lambda: proxy.requests_to("POST", rf"/pods/{name}/binding"), 20, "the scheduler's binding", run)
    return run


def test_pod_bound_by_someone_else_first(control_plane, admin, namespace, proxy, runs, tmp_path):
    selector = pool(admin, "conflict", 2, cpu="2")
    run = binding_on_the_wire(control_plane, admin, namespace, proxy, runs, tmp_path, "raced0", selector)
    # It has decided and its binding is on the wire: bind the pod first ourselves, to conflict-1.
    admin.create(
        f"/api/v1/namespaces/{namespace}/pods/raced0/binding",
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "raced0"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "conflict-1"},
        },
    )
    wait_for(lambda: run.metric('vcore_scheduler_bind_errors_total{reason="conflict"}') == 1, 20, "the 409", run)
    time.sleep(1.5)  # time for a retry storm, if there were one
    assert proxy.requests_to("POST", r"/pods/raced0/binding") == 1
    assert bound(admin, namespace)["raced0"] == "conflict-1"
    # vcore now accounts raced0 on conflict-1: two more 1.5-cpu pods fit only one per node, and only one is left.
    more = workload(admin, namespace, "next", 2, selector, cpu="1500m")
    wait_for(lambda: events(admin, namespace, "FailedScheduling"), 20, "the second pod to be unschedulable", run)
    placed = bound(admin, namespace)
    assert sum(n in placed for n in more) == 1 and placed.get("next0", placed.get("next1")) == "conflict-0"
    check_invariants(admin, namespace, NAME)


def test_pod_deleted_between_decision_and_binding(control_plane, admin, namespace, proxy, runs, tmp_path):
    selector = pool(admin, "deleted", 1, cpu="2")
    run = binding_on_the_wire(control_plane, admin, namespace, proxy, runs, tmp_path, "doomed0", selector)
    delete_pod(admin, namespace, "doomed0")
    wait_for(
        lambda: (
            run.metric('vcore_scheduler_bind_errors_total{reason="not_found"}')
            + run.metric('vcore_scheduler_bind_errors_total{reason="conflict"}')
            == 1
        ),
        20,
        "the failed binding",
        run,
    )
    time.sleep(1.0)
    assert proxy.requests_to("POST", r"/pods/doomed0/binding") == 1
    # Its assumed 1.5 cpu were released: a pod needing them fits the node.
    after = workload(admin, namespace, "after", 1, selector, cpu="1500m")
    assert wait_bound(admin, namespace, after, run=run)["after0"] == "deleted-0"
    check_invariants(admin, namespace, NAME, expect_all_bound=True)


def test_scheduler_sigkilled_mid_run_and_restarted(control_plane, admin, namespace, runs, tmp_path):
    selector = pool(admin, "killed", 6)
    run = start(runs, control_plane.scheduler_kubeconfig, tmp_path)
    names = workload(admin, namespace, "k", 200, selector)
    wait_for(lambda: len(bound(admin, namespace)) >= 20, 60, "some pods bound", run)
    run.kill()
    partial = len(bound(admin, namespace))
    again = start(runs, control_plane.scheduler_kubeconfig, tmp_path)
    wait_bound(admin, namespace, names, timeout=120, run=again)
    assert partial < len(names) or partial == len(names)
    check_invariants(admin, namespace, NAME, expect_all_bound=True)


def test_two_replicas_and_the_leader_killed(control_plane, admin, namespace, runs, tmp_path):
    selector = pool(admin, "leader", 4)
    election = {
        "leaderElect": True,
        "leaseDuration": "3s",
        "renewDeadline": "2s",
        "retryPeriod": "500ms",
        "resourceNamespace": "vcore-system",
        "resourceName": "vcore-scheduler",
    }
    a = start(runs, control_plane.scheduler_kubeconfig, tmp_path, identity="replica-a", leaderElection=election)
    wait_for(lambda: a.metric("vcore_scheduler_is_leader") == 1, 30, "replica-a to lead", a)
    b = start(runs, control_plane.scheduler_kubeconfig, tmp_path, identity="replica-b", leaderElection=election)
    first = workload(admin, namespace, "a", 30, selector)
    wait_bound(admin, namespace, first, run=a)
    assert b.metric("vcore_scheduler_is_leader") == 0
    assert b.metric('vcore_scheduler_schedule_attempts_total{result="scheduled"}') == 0
    a.kill()
    second = workload(admin, namespace, "b", 30, selector)
    wait_bound(admin, namespace, first + second, timeout=60, run=b)
    assert b.metric("vcore_scheduler_is_leader") == 1
    lease = admin.get("/apis/coordination.k8s.io/v1/namespaces/vcore-system/leases/vcore-scheduler")
    assert lease["spec"]["holderIdentity"] == "replica-b"
    instances = {e["reportingInstance"].split("-")[0] for e in events(admin, namespace, "Scheduled")}
    assert instances <= {NAME.split("-")[0]}
    check_invariants(admin, namespace, NAME, expect_all_bound=True)
    assert b.stop() == 0  # graceful: releases the lease for the next candidate
    lease = admin.get("/apis/coordination.k8s.io/v1/namespaces/vcore-system/leases/vcore-scheduler")
    assert not lease["spec"].get("holderIdentity")


def test_server_errors_and_slow_responses(control_plane, admin, namespace, proxy, runs, tmp_path):
    selector = pool(admin, "flaky", 5)
    proxy.add(Fault("error", path=r"/binding", method="POST", status=500, probability=0.3))
    proxy.add(Fault("error", path=r"/binding", method="POST", status=503, probability=0.1))
    proxy.add(Fault("delay", path=r"/binding", method="POST", seconds=0.3, probability=0.3))
    proxy.add(Fault("error", path=r"watch=", method="GET", status=503, times=3))
    proxy.add(Fault("delay", path=r"/events", method="POST", seconds=0.5, probability=0.5))
    run = start(
        runs, via(proxy, control_plane, tmp_path), tmp_path, podInitialBackoffSeconds=0.2, podMaxBackoffSeconds=1
    )
    names = workload(admin, namespace, "f", 100, selector)
    wait_bound(admin, namespace, names, timeout=120, run=run)
    assert run.metric('vcore_scheduler_bind_errors_total{reason="server_error"}') > 0
    assert proxy.injected["error"] > 0 and proxy.injected["delay"] > 0
    check_invariants(admin, namespace, NAME, expect_all_bound=True)


def test_sigterm_lets_bindings_in_flight_finish(control_plane, admin, namespace, proxy, runs, tmp_path):
    selector = pool(admin, "graceful", 2)
    proxy.add(Fault("delay", path=r"/binding", method="POST", seconds=1.5))
    run = start(runs, via(proxy, control_plane, tmp_path), tmp_path)
    names = workload(admin, namespace, "g", 5, selector)
    wait_for(lambda: proxy.requests_to("POST", r"/binding") >= 5, 20, "bindings on the wire", run)
    stopper = threading.Thread(target=run.stop)
    stopper.start()
    stopper.join(30)
    assert run.proc.returncode == 0
    assert set(names) <= bound(admin, namespace).keys()  # started before SIGTERM: finished, not abandoned
    check_invariants(admin, namespace, NAME, expect_all_bound=True)


def test_a_leader_that_loses_its_lease_stops(control_plane, admin, runs, tmp_path):
    election = {
        "leaderElect": True,
        "leaseDuration": "3s",
        "renewDeadline": "2s",
        "retryPeriod": "500ms",
        "resourceNamespace": "vcore-system",
        "resourceName": "vcore-scheduler",
    }
    a = start(runs, control_plane.scheduler_kubeconfig, tmp_path, identity="replica-a", leaderElection=election)
    wait_for(lambda: a.metric("vcore_scheduler_is_leader") == 1, 30, "replica-a to lead", a)
    path = "/apis/coordination.k8s.io/v1/namespaces/vcore-system/leases/vcore-scheduler"
    lease = admin.get(path)
    lease["spec"]["holderIdentity"] = "intruder"
    admin.put(path, lease)
    try:
        wait_for(lambda: not a.alive(), 30, "the deposed leader to exit", a)
        assert a.proc.returncode == 1  # it must not go on deciding: kube-scheduler exits too
    finally:
        lease = admin.get(path)
        lease["spec"]["holderIdentity"] = None  # hand the Lease back for the tests that follow
        admin.put(path, lease)
