"""NodePorts against kube-scheduler v1.34's own table (plugins/nodeports/node_ports_test.go TestNodePorts), case
names kept: the pod fits the node unless a host port it takes is in use there (same protocol and port, on the same
IP or with 0.0.0.0 on either side); of init containers only sidecars hold ports."""

from __future__ import annotations

import pytest

import vcore

REASON = "node(s) didn't have free ports for the requested pod ports"
ALLOCATABLE = {"cpu": "4", "memory": "4Gi", "pods": "10"}


def ports(*specs: str) -> list[dict]:
    """ "PROTOCOL/IP/PORT" as the Go test's newPod writes them."""
    out = []
    for spec in specs:
        protocol, ip, port = spec.split("/")
        out.append({"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": protocol})
    return out


def pod(name: str, *specs: str, init: list[dict] | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "ports": ports(*specs)}] if specs else [{"name": "c"}]}
    if init is not None:
        spec["initContainers"] = init
    return {"metadata": {"name": name}, "spec": spec}


def sidecar(is_sidecar: bool) -> list[dict]:
    c = {"name": "i", "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]}
    return [{**c, "restartPolicy": "Always"} if is_sidecar else c]


CASES = [  # (name, incoming pod, pod already on the node, fits)
    ("skip filter", pod("in"), None, True),
    ("other port", pod("in", "UDP/127.0.0.1/8080"), pod("m1", "UDP/127.0.0.1/9090"), True),
    ("same udp port", pod("in", "UDP/127.0.0.1/8080"), pod("m1", "UDP/127.0.0.1/8080"), False),
    ("same tcp port", pod("in", "TCP/127.0.0.1/8080"), pod("m1", "TCP/127.0.0.1/8080"), False),
    ("different host ip", pod("in", "TCP/127.0.0.1/8080"), pod("m1", "TCP/127.0.0.2/8080"), True),
    ("different protocol", pod("in", "UDP/127.0.0.1/8080"), pod("m1", "TCP/127.0.0.1/8080"), True),
    (
        "second udp port conflict",
        pod("in", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        pod("m1", "UDP/127.0.0.1/8080"),
        False,
    ),
    (
        "first tcp port conflict",
        pod("in", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        False,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        pod("in", "TCP/0.0.0.0/8001"),
        pod("m1", "TCP/127.0.0.1/8001"),
        False,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        pod("in", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        pod("m1", "TCP/127.0.0.1/8001"),
        False,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        pod("in", "TCP/127.0.0.1/8001"),
        pod("m1", "TCP/0.0.0.0/8001"),
        False,
    ),
    ("second different protocol", pod("in", "UDP/127.0.0.1/8001"), pod("m1", "TCP/0.0.0.0/8001"), True),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        pod("in", "UDP/127.0.0.1/8001"),
        pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
        False,
    ),
    ("non-sidecar initContainer using hostPort", pod("in", init=sidecar(False)), pod("m1", "TCP/0.0.0.0/8001"), True),
    (
        "TCP hostPort conflict from sidecar initContainer",
        pod("in", init=sidecar(True)),
        pod("m1", "TCP/0.0.0.0/8001"),
        False,
    ),
]

ONLY_NODE_PORTS = {"plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodePorts"}]}}}


@pytest.mark.parametrize("name, incoming, existing, fits", CASES, ids=[c[0] for c in CASES])
def test_node_ports_table(name, incoming, existing, fits):
    cluster = vcore.Cluster()
    cluster.add_node({"metadata": {"name": "n"}, "status": {"allocatable": ALLOCATABLE}})
    if existing is not None:
        cluster.bind(existing, "n")
    result = vcore.Scheduler(cluster, ONLY_NODE_PORTS).filter(incoming)
    assert (result.feasible == ["n"]) is fits
    if not fits:
        assert result.reasons == {REASON: 1}


def test_unbinding_frees_the_port_and_two_holders_keep_it_taken():
    cluster = vcore.Cluster()
    cluster.add_node({"metadata": {"name": "n"}, "status": {"allocatable": ALLOCATABLE}})
    # Two pods bound on one port by someone else (vcore would not place the second): each holds it.
    cluster.bind(pod("a", "TCP/0.0.0.0/80"), "n")
    cluster.bind(pod("b", "TCP/0.0.0.0/80"), "n")
    scheduler = vcore.Scheduler(cluster, ONLY_NODE_PORTS)
    cluster.unbind("default/a")
    assert scheduler.filter(pod("in", "TCP/0.0.0.0/80")).feasible == []
    cluster.unbind("default/b")
    assert scheduler.filter(pod("in", "TCP/0.0.0.0/80")).feasible == ["n"]


@pytest.mark.parametrize(
    "port, problem",
    [
        ({"containerPort": 80, "hostPort": 70000}, "hostPort: must be between 0 and 65535, got 70000"),
        ({"containerPort": 80, "hostPort": "80"}, "hostPort: expected an integer, got str"),
        ({"containerPort": 80, "hostPort": 80, "protocol": "ICMP"}, "protocol: unsupported value 'ICMP'"),
    ],
)
def test_bad_ports_name_the_field(port, problem):
    bad = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "ports": [port]}]}}
    with pytest.raises((ValueError, TypeError), match=r"pod default/p: spec.containers\[0\].ports\[0\]\." + problem):
        vcore.Scheduler(vcore.Cluster()).filter(bad)
