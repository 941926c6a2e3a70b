"""vcore-scheduler's Helm chart (vcore_kube/deploy) with the real helm (helm.sh/helm/v4, built from the Go module proxy
with the machine's Go and cached like the control plane): it lints, the plain manifests beside it are exactly its
rendering, what it renders (the defaults; the sharder and warm pools on) is accepted by the real API server
(`kubectl apply --dry-run=server`) and by vcore-scheduler's own configuration checks, values reach the objects,
and values that cannot work (a misspelt key, a port out of range, warm pools without the fast path, ...) are refused
with a message naming them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml

from vcore_kube.config import load_config
from vcore_kube.shardplan import load_sharding_config
from vcore_kube.testenv import build, chart


def _helm_unavailable() -> str | None:
    try:
        build.helm_binary(build=False)
        return None
    except build.BuildError:
        pass
    return "no Go toolchain to build helm (and no cached build)" if shutil.which("go") is None else None


pytestmark = pytest.mark.skipif(_helm_unavailable() is not None, reason=str(_helm_unavailable()))

ALL_ON = (
    "--set",
    "sharder.enabled=true",
    "--set",
    "warmPools.enabled=true",
    "--set",
    "config.fastPath.enabled=true",
    "--set",
    "config.fastPath.schedulerName=vcore-agent",
)


@pytest.fixture(scope="module", autouse=True)
def helm_built():
    build.helm_binary(out=sys.__stderr__)  # the first build takes minutes: its progress line goes past pytest


def objects(text: str) -> dict[tuple[str, str], dict]:
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(text) if d}


def test_the_pinned_helm_is_helm_v4():
    assert chart.helm("version", "--short").startswith("v4.")


@pytest.mark.parametrize("values", [(), ALL_ON], ids=["defaults", "sharder-and-warm-pools"])
def test_the_chart_lints(values):
    out = chart.helm("lint", "--strict", str(chart.chart_dir()), "--namespace", chart.NAMESPACE, *values)
    assert "1 chart(s) linted, 0 chart(s) failed" in out, out


def test_the_plain_manifests_are_the_chart_rendered():
    stale = chart.render_manifests(check=True)
    assert not stale, f"{stale} differ from the chart: python -m vcore_kube.testenv render-manifests writes them"


@pytest.mark.parametrize("values", [(), ALL_ON], ids=["defaults", "sharder-and-warm-pools"])
def test_the_rendered_chart_is_accepted_by_the_api_server(control_plane, values):
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed (Debian's kubernetes-client; .ci/run installs it)")
    rendered = chart.template("--include-crds", *values)
    res = subprocess.run(
        ["kubectl", "apply", "--dry-run=server", "--validate=strict", "-f", "-"],
        input=rendered,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KUBECONFIG": control_plane.kubeconfig},
    )
    assert res.returncode == 0, res.stderr
    applied = [line for line in res.stdout.splitlines() if line.endswith("(server dry run)")]
    assert len(applied) == len(objects(rendered)), res.stdout


@pytest.mark.parametrize("values", [(), ALL_ON], ids=["defaults", "sharder-and-warm-pools"])
def test_the_rendered_configurations_load(values):
    rendered = objects(chart.template(*values))
    config = load_config(yaml.safe_load(rendered[("ConfigMap", "vcore-scheduler")]["data"]["config.yaml"]))
    assert config.leader_election.resource_name == "vcore-scheduler"
    assert config.leader_election.resource_namespace == chart.NAMESPACE
    assert config.warm_pools.enabled == bool(values)
    if values:
        sharding = rendered[("ConfigMap", "vcore-sharder")]["data"]["sharding.yaml"]
        assert [s.name for s in load_sharding_config(yaml.safe_load(sharding)).scheduler_configs] == ["vcore"]


def test_defaults_render_the_scheduler_alone():
    kinds = sorted(objects(chart.template()))
    assert kinds == [
        ("ClusterRole", "vcore-scheduler"),
        ("ClusterRoleBinding", "vcore-scheduler"),
        ("ConfigMap", "vcore-scheduler"),
        ("Deployment", "vcore-scheduler"),
        ("FlowSchema", "vcore-scheduler"),
        ("ServiceAccount", "vcore-scheduler"),
    ]


def test_values_reach_the_objects():
    rendered = objects(
        chart.template(
            "--set",
            "replicas=3",
            "--set",
            "image.repository=registry.example/vcore",
            "--set",
            "image.tag=0.2.0",
            "--set",
            "metrics.port=9100",
            "--set",
            "config.cyclePeriod=1s",
            "--set",
            "fullnameOverride=vcore-batch",
            *ALL_ON,
        )
    )
    deployment = rendered[("Deployment", "vcore-batch")]
    assert deployment["spec"]["replicas"] == 3
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example/vcore:0.2.0"
    assert container["ports"] == [{"name": "metrics", "containerPort": 9100}]
    config = load_config(yaml.safe_load(rendered[("ConfigMap", "vcore-batch")]["data"]["config.yaml"]))
    assert (config.metrics_address, config.cycle_period) == ("0.0.0.0:9100", 1.0)
    assert config.leader_election.resource_name == "vcore-batch"
    lease_rule = rendered[("ClusterRole", "vcore-batch")]["rules"][-1]
    assert lease_rule["resourceNames"] == ["vcore-batch"]  # the Lease the configuration names, and only it
    assert rendered[("Deployment", "vcore-sharder")]["spec"]["replicas"] == 2
    assert ("PriorityClass", "vcore-warm-placeholder") in rendered
    warm_pool_binding = rendered[("ClusterRoleBinding", "vcore-batch-warm-pools")]
    assert [s["name"] for s in warm_pool_binding["subjects"]] == ["vcore-batch"]


@pytest.mark.parametrize(
    "values, message",
    [
        (("--set", "leaderElection.enabled=false"), "replicas > 1 needs leaderElection.enabled"),
        (("--set", "warmPools.enabled=true"), "warmPools.enabled needs config.fastPath.enabled"),
        (("--set", "config.metricsAddress=:1"), "config.metricsAddress: set by the chart"),
        (("--set", "sharder.enabled=true", "--namespace", "elsewhere"), "install the release in vcore-system"),
        (("--set", "replica=3"), "additional properties 'replica' not allowed"),
        (("--set", "metrics.port=70000"), "/metrics/port"),
        (("--set", "image.pullPolicy=Sometimes"), "/image/pullPolicy"),
    ],
    ids=[
        "replicas-without-election",
        "warm-pools-without-fast-path",
        "chart-owned-key",
        "sharder-namespace",
        "misspelt-value",
        "port-out-of-range",
        "pull-policy",
    ],
)
def test_values_that_cannot_work_are_refused(values, message):
    with pytest.raises(chart.ChartError) as err:
        chart.template(*values)
    assert message in str(err.value)
