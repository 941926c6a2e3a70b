"""vcore-scheduler honors what a pod says about other pods, on the real API server: required anti-affinity,
required affinity through a namespaceSelector (Namespace labels watched), DoNotSchedule topology spread, host ports.
Each constraint is checked from the API afterwards: what is bound never violates it, and what cannot be placed waits
with kube-scheduler's reason."""

from __future__ import annotations

import functools
from collections import Counter

import pytest

from vcore_kube.testenv.objects import create_nodes, create_pods, ensure_namespace, node, pod

from .harness import bound, check_invariants, events, pods, wait_bound, wait_for

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def scheduler(scheduler):
    return functools.partial(scheduler, "vcore-interpod")


def _nodes(admin, prefix: str, n: int, zones: int = 1) -> dict:
    create_nodes(
        admin,
        [node(f"{prefix}-{i}", labels={"pool": prefix, ZONE: f"{prefix}-z{i % zones}"}, cpu="8") for i in range(n)],
    )
    return {"pool": prefix}


def _pod(name: str, namespace: str, selector: dict, labels: dict, **spec) -> dict:
    p = pod(name, namespace, scheduler="vcore-interpod", labels=labels)
    p["spec"]["nodeSelector"] = selector
    p["spec"].update(spec)
    return p


def _failed(admin, namespace: str, name: str) -> str:
    notes = [e["note"] for e in events(admin, namespace, "FailedScheduling") if e["regarding"]["name"] == name]
    return notes[-1] if notes else ""


def test_required_anti_affinity_keeps_replicas_apart(admin, namespace, scheduler):
    run = scheduler()
    selector = _nodes(admin, "anti", 2)
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    create_pods(admin, [_pod(f"web{i}", namespace, selector, {"app": "web"}, affinity=affinity) for i in range(3)])
    wait_for(lambda: len(bound(admin, namespace)) == 2, 60, "two replicas bound", run)
    wait_for(
        lambda: "didn't match pod anti-affinity rules" in _failed(admin, namespace, _unbound(admin, namespace)),
        60,
        "the third replica's FailedScheduling",
        run,
    )
    placed = bound(admin, namespace)
    assert len(set(placed.values())) == 2
    check_invariants(admin, namespace, "vcore-interpod")


def _unbound(admin, namespace: str) -> str:
    return next((p["metadata"]["name"] for p in pods(admin, namespace) if not p["spec"].get("nodeName")), "")


def test_affinity_through_a_namespace_selector_follows_namespace_labels(admin, namespace, scheduler):
    run = scheduler()
    selector = _nodes(admin, "nsaff", 3)
    other = f"{namespace[:58]}-db"
    ensure_namespace(admin, other)
    admin.patch(f"/api/v1/namespaces/{other}", {"metadata": {"labels": {"team": "data"}}})
    create_pods(admin, [_pod("db", other, {**selector, HOSTNAME: "nsaff-2"}, {"app": "db"})])
    wait_bound(admin, other, ["db"], run=run)
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": HOSTNAME,
        "namespaceSelector": {"matchLabels": {"team": "data"}},
    }
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    create_pods(admin, [_pod(f"app{i}", namespace, selector, {"app": "client"}, affinity=affinity) for i in range(3)])
    placed = wait_bound(admin, namespace, [f"app{i}" for i in range(3)], run=run)
    assert set(placed.values()) == {"nsaff-2"}
    check_invariants(admin, namespace, "vcore-interpod", expect_all_bound=True)


def test_do_not_schedule_spread_balances_zones(admin, namespace, scheduler):
    run = scheduler()
    selector = _nodes(admin, "spread", 4, zones=2)
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "spread"}},
        }
    ]
    names = [f"s{i}" for i in range(6)]
    create_pods(
        admin, [_pod(n, namespace, selector, {"app": "spread"}, topologySpreadConstraints=spread) for n in names]
    )
    placed = wait_bound(admin, namespace, names, run=run)
    per_zone = Counter("z0" if int(n.rsplit("-", 1)[1]) % 2 == 0 else "z1" for n in placed.values())
    assert per_zone == {"z0": 3, "z1": 3}
    check_invariants(admin, namespace, "vcore-interpod", expect_all_bound=True)


def test_host_ports_are_never_shared(admin, namespace, scheduler):
    run = scheduler()
    selector = _nodes(admin, "ports", 2)
    containers = [
        {
            "name": "main",
            "image": "registry.invalid/pause:3.10",
            "ports": [{"containerPort": 8080, "hostPort": 80}],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
        }
    ]
    create_pods(admin, [_pod(f"p{i}", namespace, selector, {"app": "ports"}, containers=containers) for i in range(3)])
    wait_for(lambda: len(bound(admin, namespace)) == 2, 60, "two pods bound", run)
    wait_for(
        lambda: "didn't have free ports" in _failed(admin, namespace, _unbound(admin, namespace)),
        60,
        "the third pod's FailedScheduling",
        run,
    )
    assert len(set(bound(admin, namespace).values())) == 2
    check_invariants(admin, namespace, "vcore-interpod")


def test_a_pod_waiting_for_affinity_is_placed_when_its_partner_arrives(admin, namespace, scheduler):
    run = scheduler()
    selector = _nodes(admin, "partner", 2)
    term = {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": HOSTNAME}
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    create_pods(admin, [_pod("client", namespace, selector, {"app": "client"}, affinity=affinity)])
    wait_for(
        lambda: "didn't match pod affinity rules" in _failed(admin, namespace, "client"),
        60,
        "the client's FailedScheduling",
        run,
    )
    # Someone else binds the partner (spec.nodeName): vcore-scheduler learns it from the watch and tries again.
    partner = _pod("cache", namespace, selector, {"app": "cache"})
    partner["spec"]["nodeName"] = "partner-1"
    create_pods(admin, [partner])
    placed = wait_bound(admin, namespace, ["client"], timeout=90, run=run)
    assert placed["client"] == "partner-1"
