"""Kubernetes discovery: pod -> endpoint conversion. (The list+watch loop is tested once vcore_kube's real
control plane test environment is merged.)"""
from __future__ import annotations

import pytest

kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes client is not installed")
from kubernetes.client import V1Pod, V1ObjectMeta, V1PodCondition, V1PodStatus  # noqa: E402

from vcore_router.config import PdGroupSelector, WorkloadSelector  # noqa: E402
from vcore_router.discovery import pod_endpoint  # noqa: E402

SELECTOR = WorkloadSelector("default", {"app": "llm"}, 8000,
                            PdGroupSelector("pd-group", {"role": "prefill"}, {"role": "decode"}), max_loras=2)


def pod(name, ip="10.0.0.5", ready="True", **labels):
    return V1Pod(metadata=V1ObjectMeta(name=name, namespace="default", labels={"app": "llm", **labels}),
                 status=V1PodStatus(pod_ip=ip, conditions=[V1PodCondition(type="Ready", status=ready)]))


def test_pod_to_endpoint():
    ep = pod_endpoint(pod("p1", role="prefill", **{"pd-group": "g1", "topology.kubernetes.io/zone": "z1"}), SELECTOR)
    assert (ep.name, ep.url, ep.role, ep.pd_group, ep.domain, ep.max_loras) == \
        ("default/p1", "http://10.0.0.5:8000", "prefill", "g1", "z1", 2)
    assert pod_endpoint(pod("p2", role="decode"), SELECTOR).role == "decode"
    assert pod_endpoint(pod("p3", ready="False"), SELECTOR) is None
    assert pod_endpoint(pod("p4", ip=None), SELECTOR) is None
