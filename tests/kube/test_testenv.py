"""The test control plane itself: a real API server with vcore's CRDs, RBAC and identities, reachable through
the kubeconfigs it writes, and the command line that starts and stops it."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from vcore_kube.kubeclient import ApiException, load_api
from vcore_kube.testenv import build
from vcore_kube.testenv.control_plane import ControlPlane, crd_manifests
from vcore_kube.testenv.objects import create_nodes, create_pods, node, pod


def test_build_key_names_the_pinned_versions():
    key = build.version_key()
    assert key.startswith("kubernetes-v1.34.4_etcd-v3.6.4_go"), key
    assert build.binaries_dir(build=False).name == key


def test_build_key_hashes_the_module_not_its_place_or_comments(tmp_path, monkeypatch):
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain: the key names the Go version")
    key = build.version_key()
    moved = tmp_path / "go" / "controlplane"
    shutil.copytree(build.MODULE_DIR, moved)
    go_mod = (moved / "go.mod").read_text()
    (moved / "go.mod").write_text("// a comment decides no byte of the binaries\n" + go_mod)
    monkeypatch.setattr(build, "GO_MODULES", tmp_path / "go")
    assert build.version_key() == key
    etcd = "go.etcd.io/etcd/server/v3"
    (moved / "go.mod").write_text(go_mod.replace(f"{etcd} v3.6.4", f"{etcd} v3.6.5"))
    assert build.version_key().startswith("kubernetes-v1.34.4_etcd-v3.6.5_") and build.version_key() != key


def test_go_module_replaces_every_staging_module_with_the_matching_release():
    go_mod = (build.MODULE_DIR / "go.mod").read_text()
    replaced = [line.split()[0] for line in go_mod.splitlines() if "=> k8s.io/" in line]
    assert len(replaced) >= 30
    assert all(line.endswith(" v0.34.4") for line in go_mod.splitlines() if "=> k8s.io/" in line)


def test_api_server_is_ready_with_the_pinned_version(admin):
    assert admin.get("/version")["gitVersion"] == "v1.34.4"
    assert admin.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.scheduling.volcano.sh")


def test_volcano_objects_apply_unchanged(admin, namespace):
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "job", "namespace": namespace},
        "spec": {
            "minMember": 3,
            "minTaskMember": {"worker": 2},
            "queue": "research",
            "minResources": {"cpu": "3", "nvidia.com/gpu": 2},
            "priorityClassName": "high",
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "subGroupPolicy": [
                {
                    "name": "w",
                    "subGroupSize": 2,
                    "minSubGroups": 1,
                    "labelSelector": {"matchLabels": {"role": "worker"}},
                    "matchLabelKeys": ["ring"],
                    "networkTopology": {"mode": "soft", "highestTierName": "rack"},
                }
            ],
        },
    }
    created = admin.create(
        f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups", group, fieldValidation="Strict"
    )
    assert created["spec"] == {
        **group["spec"],
        "subGroupPolicy": [
            {**group["spec"]["subGroupPolicy"][0], "networkTopology": {"mode": "soft", "highestTierName": "rack"}}
        ],
    }
    queue = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": f"q-{namespace}"},
        "spec": {
            "weight": 2,
            "capability": {"cpu": "10", "memory": "20Gi"},
            "reclaimable": True,
            "guarantee": {"resource": {"cpu": "1"}},
            "parent": "root",
        },
    }
    assert (
        admin.create("/apis/scheduling.volcano.sh/v1beta1/queues", queue, fieldValidation="Strict")["spec"]
        == queue["spec"]
    )
    hyper = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": f"s-{namespace}"},
        "spec": {
            "tier": 1,
            "tierName": "rack",
            "members": [
                {"type": "Node", "selector": {"exactMatch": {"name": "n1"}}},
                {"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-"}}},
            ],
        },
    }
    assert (
        admin.create("/apis/topology.volcano.sh/v1alpha1/hypernodes", hyper, fieldValidation="Strict")["spec"]
        == hyper["spec"]
    )
    shard = {
        "apiVersion": "shard.volcano.sh/v1alpha1",
        "kind": "NodeShard",
        "metadata": {"name": f"sh-{namespace}"},
        "spec": {"nodesDesired": ["n1", "n2"]},
    }
    assert admin.create("/apis/shard.volcano.sh/v1alpha1/nodeshards", shard)["spec"] == shard["spec"]


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"tier": 1, "members": [{"type": "Node", "selector": {}}]}, "Either ExactMatch or RegexMatch"),
        (
            {
                "tier": 1,
                "members": [
                    {"type": "Node", "selector": {"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "b"}}}
                ],
            },
            "Only one of",
        ),
        ({"tier": 1, "members": [{"type": "Rack"}]}, "Unsupported value"),
        ({"members": [{"type": "Node"}]}, "spec.tier: Required value"),
    ],
    ids=["no-selector", "two-selectors", "bad-member-type", "no-tier"],
)
def test_hypernode_schema_rejects_what_volcano_rejects(admin, spec, field):
    with pytest.raises(ApiException) as err:
        admin.create(
            "/apis/topology.volcano.sh/v1alpha1/hypernodes",
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": "bad"},
                "spec": spec,
            },
        )
    assert err.value.status == 422 and field in err.value.body


def test_every_crd_is_structural_and_established(admin):
    for crd in crd_manifests():
        got = admin.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}")
        conditions = {c["type"]: c["status"] for c in got["status"]["conditions"]}
        assert conditions.get("Established") == "True"
        assert conditions.get("NonStructuralSchema") is None, got["status"]["conditions"]


def test_nodes_keep_their_status_and_carry_no_not_ready_taint(admin):
    created = create_nodes(admin, [node("testenv-node", cpu="8", gpus=4)])[0]
    assert created["status"]["allocatable"]["nvidia.com/gpu"] == "4"
    assert "taints" not in created["spec"]


def test_pods_are_admitted_in_a_namespace_without_service_accounts(admin, namespace):
    created = create_pods(admin, [pod("p", namespace, scheduler="nobody")])[0]
    assert created["spec"]["schedulerName"] == "nobody"
    assert created["spec"]["priority"] == 0  # the Priority admission plugin runs


def test_scheduler_identity_has_exactly_the_cluster_role(control_plane, namespace):
    api = load_api(control_plane.scheduler_kubeconfig)
    try:
        assert api.get("/api/v1/nodes") is not None
        with pytest.raises(ApiException) as err:  # pods it may create (warm-pool placeholders); nothing else
            api.create(
                f"/api/v1/namespaces/{namespace}/configmaps",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": namespace}},
            )
        assert err.value.status == 403
        with pytest.raises(ApiException) as err:
            api.put(
                "/apis/shard.volcano.sh/v1alpha1/nodeshards/x",
                {
                    "apiVersion": "shard.volcano.sh/v1alpha1",
                    "kind": "NodeShard",
                    "metadata": {"name": "x"},
                    "spec": {"nodesDesired": []},
                },
            )
        assert err.value.status == 403  # a NodeShard's spec is the sharding controller's
        with pytest.raises(ApiException) as err:
            api.get("/api/v1/secrets")
        assert err.value.status == 403
        review = api.create(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectAccessReview",
                "spec": {
                    "resourceAttributes": {
                        "verb": "create",
                        "resource": "pods",
                        "subresource": "binding",
                        "namespace": namespace,
                    }
                },
            },
        )
        assert review["status"]["allowed"] is True
    finally:
        api.close()


def test_compaction_past_a_resource_version_makes_a_fresh_api_server_answer_410(control_plane, admin, namespace):
    """The mechanism the watch fault test relies on: a watch cache started after etcd was compacted past a
    resourceVersion cannot serve a watch from it."""
    old = admin.get("/api/v1/pods", limit=1)["metadata"]["resourceVersion"]
    create_pods(admin, [pod(f"c{i}", namespace, scheduler="nobody") for i in range(3)])
    compacted = control_plane.compact_etcd()
    control_plane.restart_apiserver()
    response = admin.open(
        "GET", "/api/v1/pods", query={"watch": True, "resourceVersion": old, "timeoutSeconds": 5}, timeout=10
    )
    try:
        first = response.readline()
    finally:
        response.release_conn()
    assert b'"code":410' in first and str(compacted).encode() in first


def test_command_line_up_and_down(tmp_path):
    run = [sys.executable, "-m", "vcore_kube.testenv"]
    up = subprocess.run(
        [*run, "up", "--dir", str(tmp_path), "--nodes", "2"], capture_output=True, text=True, timeout=300
    )
    assert up.returncode == 0, up.stderr
    assert all(p.alive() for p in ControlPlane.load(tmp_path).processes.values())
    try:
        assert "ready" in up.stdout and (tmp_path / "kubeconfig").exists()
        assert (tmp_path / "scheduler.kubeconfig").exists()
        api = load_api(str(tmp_path / "kubeconfig"))
        assert len(api.get("/api/v1/nodes")["items"]) == 2
        api.close()
    finally:
        down = subprocess.run([*run, "down", "--dir", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert down.returncode == 0, down.stderr
    assert not any(p.alive() for p in ControlPlane.load(tmp_path).processes.values())


def test_command_line_rejects_bad_arguments(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "vcore_kube.testenv", "up", "--dir", str(tmp_path), "--nodes", "-1"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and "--nodes must be >= 0" in res.stderr
    res = subprocess.run(
        [sys.executable, "-m", "vcore_kube.testenv", "down", "--dir", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 1 and "no testenv.json" in res.stderr
