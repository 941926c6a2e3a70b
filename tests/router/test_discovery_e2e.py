"""Kubernetes discovery end to end: vcore-router's endpoint table follows pods on a real kube-apiserver + etcd
(vcore_kube's testenv), and the official openai client's requests go where the pods say.

No kubelet runs, so the test writes pod status as one would: phase Running, the Ready condition, a pod IP on
loopback; each pod's container port named ``http`` points at its own engine simulator. Pods join, become ready,
change labels, terminate and go; with the router cut off from the API server while pods change and etcd's
history is compacted, its watch gets 410 Gone and the relist reconciles the table.
"""

from __future__ import annotations

import time
import urllib.request

import pytest

openai = pytest.importorskip("openai", reason="the openai client (test extra) is not installed")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from vcore_kube.kubeclient import pod_path  # noqa: E402
from vcore_kube.testenv.control_plane import ADMIN_USER  # noqa: E402
from vcore_kube.testenv.faultproxy import FaultProxy  # noqa: E402
from vcore_kube.testenv.objects import pod as pod_object  # noqa: E402

SERVER = "llm"


def router_config(namespace: str) -> dict:
    return {
        "router": {"scrapeIntervalSeconds": 0.1},
        "modelServers": [
            {
                "name": SERVER,
                "model": "sim-model",
                "workloadSelector": {"namespace": namespace, "matchLabels": {"app": "llm"}, "port": "http"},
            }
        ],
        "modelRoutes": [{"modelName": "llama", "rules": [{"targetModels": [{"modelServerName": SERVER}]}]}],
    }


def create_pod(admin, namespace: str, name: str, port: int, *, ready: bool = True, app: str = "llm") -> None:
    p = pod_object(name, namespace, labels={"app": app}, node_name="node-0")
    p["spec"]["terminationGracePeriodSeconds"] = 30  # deleting it marks it terminating first, as on a real node
    p["spec"]["containers"][0]["ports"] = [
        {"name": "metrics", "containerPort": 9090},
        {"name": "http", "containerPort": port},
    ]
    admin.create(f"/api/v1/namespaces/{namespace}/pods", p)
    set_ready(admin, namespace, name, ready)


def set_ready(admin, namespace: str, name: str, ready: bool) -> None:
    """What the kubelet would write: Running, a pod IP, the Ready condition."""
    admin.patch(
        pod_path(namespace, name, "status"),
        {
            "status": {
                "phase": "Running",
                "podIP": "127.0.0.1",
                "podIPs": [{"ip": "127.0.0.1"}],
                "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            }
        },
    )


def delete_pod(admin, namespace: str, name: str, grace: int | None = None) -> None:
    query = {} if grace is None else {"gracePeriodSeconds": grace}
    admin.delete(pod_path(namespace, name), **query)


def table(loop, core) -> dict[str, str]:
    """The router's endpoint table (name -> URL), read on its event loop."""

    async def read():
        assert set(core.router.endpoints) == set(core.upstreams)  # the native table and the URLs agree
        return {name: up.url for name, up in core.upstreams.items()}

    return loop.run(read())


def wait_table(loop, core, want: dict[str, str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while (got := table(loop, core)) != want:
        if time.monotonic() > deadline:
            raise AssertionError(f"endpoint table {got}, expected {want}")
        time.sleep(0.05)


def metrics(url: str) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def served(url: str) -> dict[str, float]:
    """Requests each endpoint answered."""
    return {
        dict(labels)["endpoint"]: v
        for (name, labels), v in metrics(url).items()
        if name == "vcore_router_upstream_requests_total" and dict(labels)["outcome"] == "ok"
    }


def ask(client, n: int, tag: str) -> None:
    for i in range(n):
        r = client.chat.completions.create(
            model="llama", messages=[{"role": "user", "content": f"{tag} {i}"}], max_tokens=3
        )
        assert r.usage.completion_tokens == 3


def names(namespace: str, ports: dict[str, int], *pods: str) -> dict[str, str]:
    return {f"{SERVER}/{namespace}/{p}": f"http://127.0.0.1:{ports[p]}" for p in pods}


def test_pods_join_and_leave_the_endpoint_table(admin, namespace, engines, loop, control_plane):
    ports = {}
    for p in ("a", "b", "c", "x"):
        engines.start(f"join-{p}")
        ports[p] = engines.ports[f"join-{p}"]
    create_pod(admin, namespace, "a", ports["a"])
    create_pod(admin, namespace, "b", ports["b"])
    create_pod(admin, namespace, "c", ports["c"], ready=False)
    create_pod(admin, namespace, "x", ports["x"], app="other")  # ready, but not selected
    url, core = loop.start_router(router_config(namespace), kubeconfig=control_plane.kubeconfig)
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    try:
        wait_table(loop, core, names(namespace, ports, "a", "b"))
        ask(client, 6, "listed")
        first = served(url)
        assert sum(first.values()) == 6 and set(first) <= set(names(namespace, ports, "a", "b"))

        set_ready(admin, namespace, "c", True)  # becomes ready: joins
        wait_table(loop, core, names(namespace, ports, "a", "b", "c"))
        admin.patch(pod_path(namespace, "b"), {"metadata": {"labels": {"app": "other"}}})  # no longer selected
        wait_table(loop, core, names(namespace, ports, "a", "c"))
        delete_pod(admin, namespace, "a")  # terminating (30 s grace, no kubelet to end it): leaves at once
        wait_table(loop, core, names(namespace, ports, "c"))
        assert admin.get(pod_path(namespace, "a"))["metadata"]["deletionTimestamp"]
        delete_pod(admin, namespace, "a", grace=0)
        set_ready(admin, namespace, "c", False)  # not ready: no endpoint is left, and none is made up
        wait_table(loop, core, {})
        with pytest.raises(openai.APIStatusError) as refused:
            ask(client, 1, "empty")
        assert refused.value.status_code == 503

        set_ready(admin, namespace, "c", True)
        wait_table(loop, core, names(namespace, ports, "c"))
        before = served(url)
        ask(client, 4, "after")
        after = served(url)
        c = f"{SERVER}/{namespace}/c"
        assert after[c] - before.get(c, 0) == 4
        assert {k: v for k, v in after.items() if k != c} == {k: v for k, v in before.items() if k != c}
        assert metrics(url)[("vcore_router_discovered_endpoints", (("server", SERVER),))] == 1
    finally:
        loop.stop_router(url)
    for reflector in core.discovery.reflectors:  # stopping the router ends its watches
        reflector.join(5)
        assert not reflector.is_alive()


def test_a_relist_after_410_reconciles_the_table(admin, namespace, engines, loop, control_plane, tmp_path):
    ports = {}
    for p in ("a", "b", "c"):
        engines.start(f"relist-{p}")
        ports[p] = engines.ports[f"relist-{p}"]
    create_pod(admin, namespace, "a", ports["a"])
    create_pod(admin, namespace, "b", ports["b"])
    proxy = FaultProxy(control_plane.apiserver_url, control_plane.ca_file).start()
    url = None
    try:
        kubeconfig = proxy.write_kubeconfig(
            str(tmp_path / "router.kubeconfig"), ADMIN_USER, control_plane.tokens[ADMIN_USER]
        )
        url, core = loop.start_router(router_config(namespace), kubeconfig=kubeconfig)
        wait_table(loop, core, names(namespace, ports, "a", "b"))

        proxy.hold()  # the router is cut off, keeping its resourceVersion ...
        delete_pod(admin, namespace, "b", grace=0)  # ... while pods go and come ...
        create_pod(admin, namespace, "c", ports["c"])
        control_plane.compact_etcd()  # ... and etcd forgets the history its watch would resume from
        control_plane.restart_apiserver()  # a fresh watch cache, starting after the compaction
        assert table(loop, core) == names(namespace, ports, "a", "b")  # stale while cut off
        proxy.release()

        wait_table(loop, core, names(namespace, ports, "a", "c"), timeout=40)
        relists = metrics(url)
        assert relists[("vcore_router_discovery_relists_total", (("reason", "expired"), ("server", SERVER)))] >= 1
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        ask(client, 4, "reconciled")
        got = served(url)
        assert sum(got.values()) == 4 and set(got) <= set(names(namespace, ports, "a", "c"))
    finally:
        if url is not None:
            loop.stop_router(url)
        proxy.stop()
