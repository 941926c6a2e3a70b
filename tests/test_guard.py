"""The guard: a pod field that makes nodes infeasible in kube-scheduler v1.34 is honored by vcore, or the pod is
refused with a reason naming the field. Never placed as if the field did not exist.

``test_every_pod_spec_field_is_classified`` walks the v1 PodSpec of the installed Kubernetes client: a field vcore
has not classified (a new Kubernetes release) fails it, so a new hard constraint cannot slip through unnoticed.
"""

from __future__ import annotations

import re

import pytest
from kubernetes import client

import vcore
from tests.batch import builders as B

HOSTNAME = "kubernetes.io/hostname"
ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}
        ]
    }
}
AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOSTNAME}
        ]
    }
}
SPREAD = [
    {
        "maxSkew": 1,
        "topologyKey": HOSTNAME,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
]

# Every PodSpec field (snake_case, as the client names them) and what vcore does with it.
HONORED = {  # evaluated exactly as kube-scheduler v1.34 does
    "containers",
    "init_containers",
    "overhead",
    "resources",  # NodeResourcesFit, NodePorts, ImageLocality
    "node_selector",
    "affinity",  # NodeAffinity, InterPodAffinity
    "tolerations",  # TaintToleration, NodeUnschedulable
    "node_name",  # NodeName
    "priority",
    "priority_class_name",
    "preemption_policy",  # queueing and preemption
    "scheduler_name",  # which scheduler owns the pod (the adapter's filter)
    "scheduling_gates",  # SchedulingGates: never attempted while gated
    "topology_spread_constraints",  # PodTopologySpread
    "host_network",  # makes every container port a host port (NodePorts)
    "volumes",  # VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone (every source they read)
}
REFUSED_FIELDS = {  # field -> a pod spec fragment that uses it as a hard constraint, and the path named
    "resource_claims": ({"resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]}, "spec.resourceClaims"),
}
NOT_SCHEDULING = {  # read by the kubelet, the API server or controllers; no kube-scheduler v1.34 filter reads them
    "active_deadline_seconds",
    "automount_service_account_token",
    "dns_config",
    "dns_policy",
    "enable_service_links",
    "ephemeral_containers",
    "host_aliases",
    "host_ipc",
    "host_pid",
    "host_users",
    "hostname",
    "image_pull_secrets",
    "os",
    "readiness_gates",
    "restart_policy",
    "runtime_class_name",  # the RuntimeClass admission sets overhead
    "security_context",
    "service_account",
    "service_account_name",
    "set_hostname_as_fqdn",
    "share_process_namespace",
    "subdomain",
    "termination_grace_period_seconds",
    # Newer than Kubernetes 1.34: the v1.34 API server drops them, and its scheduler never reads them.
    "hostname_override",
    "scheduling_group",
    "eviction_responders",
}
CONTAINER_FIELDS_READ = {"resources", "restart_policy", "ports", "image"}  # ports: NodePorts; image: ImageLocality
# The volume sources kube-scheduler's volume plugins read, each with a use of it and what vcore does with the pod on
# two nodes and no storage objects: placed (the plugins find nothing against it) or the plugins' rejection. vcore
# evaluates every one of them (tests/volumes/ holds the plugins' tables); none is refused, so VOLUME_SOURCES_REFUSED
# is empty: a source vcore could not evaluate exactly would be listed there, refused by name.
VOLUME_SOURCES_READ = {
    "persistent_volume_claim": ({"claimName": "data"}, 'persistentvolumeclaim "data" not found'),
    "ephemeral": (
        {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "v-d"',
    ),
    "gce_persistent_disk": ({"pdName": "disk-1"}, None),
    "aws_elastic_block_store": ({"volumeID": "vol-1"}, None),
    "rbd": ({"monitors": ["m1"], "image": "img"}, None),
    "iscsi": ({"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:disk", "lun": 0}, None),
    "azure_disk": ({"diskName": "d", "diskURI": "/subscriptions/s/disks/d"}, None),
    "azure_file": ({"secretName": "s", "shareName": "share"}, None),
    "cinder": ({"volumeID": "c-1"}, None),
    "vsphere_volume": ({"volumePath": "[ds] vol.vmdk"}, None),
    "portworx_volume": ({"volumeID": "px-1"}, None),
}
VOLUME_SOURCES_REFUSED: set[str] = set()


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(p.capitalize() for p in rest)


def _cluster(n: int = 2) -> vcore.Cluster:
    cluster = vcore.Cluster()
    for i in range(n):
        cluster.add_node(
            {
                "metadata": {"name": f"n{i}", "labels": {HOSTNAME: f"n{i}"}},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            }
        )
    return cluster


def _pod(name: str, labels: dict | None = None, **spec) -> dict:
    body = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}], **spec}
    return {"metadata": {"name": name, "labels": labels or {"app": "web"}}, "spec": body}


def test_every_pod_spec_field_is_classified():
    fields = set(client.V1PodSpec.attribute_map)
    classified = HONORED | set(REFUSED_FIELDS) | NOT_SCHEDULING | {"volumes", "resource_claims"}
    assert fields - classified == set(), (
        "PodSpec fields vcore has not classified: decide whether kube-scheduler acts on them"
    )
    assert classified - fields == set(), "classified fields the client does not have"


def test_container_fields_that_matter_are_known():
    # Of a container, kube-scheduler reads its requests (and limits, defaulted into requests), its restart policy
    # (sidecars) and its host ports; a new container field that constrains placement would need a look.
    assert CONTAINER_FIELDS_READ <= set(client.V1Container.attribute_map)


@pytest.mark.parametrize("source", sorted(set(client.V1Volume.attribute_map) - {"name"}))
def test_volume_sources_kube_scheduler_acts_on_are_honored_or_refused(source):
    fragment, rejection = VOLUME_SOURCES_READ.get(source, ({}, None))
    pod = _pod("v", volumes=[{"name": "d", _camel(source): fragment}])
    placement = vcore.Scheduler(_cluster()).schedule([pod])[0]
    if source in VOLUME_SOURCES_REFUSED:
        assert placement.node is None
        assert placement.message == f"0/2 nodes are available: vcore does not honor spec.volumes[0].{_camel(source)}."
    elif rejection is not None:  # a claim that does not exist: the volume plugins' PreFilter, in kube's words
        # (the rejection ends the PreFilter before DynamicResources' writes its state: its PostFilter says "not found")
        assert placement.node is None
        assert placement.message == f"0/2 nodes are available: {rejection}. not found"
    else:  # secrets, config maps, emptyDir, hostPath, and disks nothing conflicts with or counts: placed
        assert placement.node is not None


def test_the_volume_sources_read_are_the_clients():
    assert set(VOLUME_SOURCES_READ) <= set(client.V1Volume.attribute_map)
    assert VOLUME_SOURCES_REFUSED <= set(VOLUME_SOURCES_READ)


@pytest.mark.parametrize("field", sorted(REFUSED_FIELDS))
def test_refused_fields_are_named_in_schedule_filter_and_score(field):
    fragment, path = REFUSED_FIELDS[field]
    cluster = _cluster()
    scheduler = vcore.Scheduler(cluster)
    pod = _pod("p", **fragment)
    why = f"vcore does not honor {path}"
    filtered = scheduler.filter(pod)
    assert filtered.feasible == [] and filtered.reasons == {why: 2}
    assert filtered.message == f"0/2 nodes are available: {why}."
    assert scheduler.score(pod) == {}
    placement = scheduler.schedule([pod])[0]
    assert (placement.node, placement.reasons, placement.message) == (None, {why: 2}, filtered.message)
    assert cluster.n_pods == 0


def test_the_testers_cases_are_never_placed_wrong():
    """Three anti-affinity replicas, three hostPort pods, a gated pod, a DoNotSchedule spread and a PVC on two nodes:
    placed as if the fields did not exist before the guard. Now each is honored or refused (the PVC does not exist:
    VolumeBinding's PreFilter keeps the pod pending)."""
    cluster = _cluster()
    pods = [_pod(f"anti-{i}", affinity=ANTI) for i in range(3)]
    pods += [
        _pod(f"port-{i}", {"app": "port"}, containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}])
        for i in range(3)
    ]
    pods += [
        _pod("gated", schedulingGates=[{"name": "kueue.x-k8s.io/admission"}]),
        _pod("spread", {"app": "spread"}, topologySpreadConstraints=SPREAD),
        _pod("pvc", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]),
    ]
    placed = {p.pod.split("/")[1]: p.node for p in vcore.Scheduler(cluster).schedule(pods)}
    for group in ("anti", "port"):
        nodes = [placed[f"{group}-{i}"] for i in range(3) if placed[f"{group}-{i}"] is not None]
        assert len(nodes) == len(set(nodes)) <= 2, f"two {group} pods share a node"
    assert sum(placed[f"anti-{i}"] is not None for i in range(3)) == 2
    assert placed["gated"] is None and placed["pvc"] is None and placed["spread"] is not None


def test_soft_terms_never_make_a_pod_pending():
    preferred = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME},
                }
            ]
        }
    }
    anyway = [{**SPREAD[0], "whenUnsatisfiable": "ScheduleAnyway"}]
    pods = [
        _pod("pref", affinity=preferred),
        _pod("anyway", topologySpreadConstraints=anyway),
        _pod("port0", containers=[{"name": "c", "ports": [{"containerPort": 80}]}]),
        _pod("cm", volumes=[{"name": "c", "configMap": {"name": "x"}}]),
    ]
    assert all(p.node is not None for p in vcore.Scheduler(_cluster()).schedule(pods))


def test_a_sidecar_host_port_counts_and_a_regular_init_container_port_does_not():
    init = {"name": "i", "ports": [{"containerPort": 53, "hostPort": 53}]}
    scheduler = vcore.Scheduler(_cluster(1))
    assert scheduler.schedule([_pod("init", initContainers=[init])])[0].node == "n0"
    assert scheduler.schedule([_pod("init2", initContainers=[init])])[0].node == "n0"
    assert scheduler.schedule([_pod("side", initContainers=[{**init, "restartPolicy": "Always"}])])[0].node == "n0"
    taken = scheduler.schedule([_pod("side2", initContainers=[{**init, "restartPolicy": "Always"}])])[0]
    assert taken.message == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption "
        "victims found for incoming pod."
    )


def test_a_host_network_pods_container_ports_are_host_ports():
    scheduler = vcore.Scheduler(_cluster(1))
    web = {"name": "c", "ports": [{"containerPort": 8080}]}
    assert scheduler.schedule([_pod("a", hostNetwork=True, containers=[web])])[0].node == "n0"
    assert scheduler.schedule([_pod("b", containers=[web])])[0].node == "n0"  # no host port without hostNetwork
    assert scheduler.schedule([_pod("c", hostNetwork=True, containers=[web])])[0].node is None


def test_a_gated_pod_waits_for_its_gates_in_kube_schedulers_words():
    placement = vcore.Scheduler(_cluster()).schedule([_pod("g", schedulingGates=[{"name": "a"}, {"name": "b"}])])[0]
    assert placement.node is None
    assert placement.message == "0/2 nodes are available: waiting for scheduling gates: [a b]."


def test_node_name_confines_the_pod_to_that_node():
    cluster = _cluster(3)
    scheduler = vcore.Scheduler(cluster)
    assert scheduler.filter(_pod("x", nodeName="n1")).feasible == ["n1"]
    placement = scheduler.schedule([_pod("y", nodeName="n2")])[0]
    assert placement.node == "n2"
    missing = scheduler.filter(_pod("z", nodeName="gone"))
    assert missing.message == (
        "0/3 nodes are available: 3 node(s) didn't match the requested node name. no new claims "
        "to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
        "scheduling."
    )


def test_a_bound_pods_required_anti_affinity_keeps_the_pods_it_matches_off_its_domain():
    cluster = _cluster()
    cluster.bind(_pod("guard", {"app": "guard"}, affinity=ANTI), "n0")
    scheduler = vcore.Scheduler(cluster)
    assert scheduler.filter(_pod("web")).feasible == ["n1"]
    assert scheduler.filter(_pod("other", {"app": "other"})).feasible == ["n0", "n1"]
    cluster.unbind("default/guard")
    assert scheduler.filter(_pod("web")).feasible == ["n0", "n1"]


def test_refusals_reach_the_cycle_results():
    cluster = _cluster()
    cluster.add_podgroup(B.podgroup("gang", 2))
    claims = [{"name": "gpu", "resourceClaimName": "gpu-claim"}]
    cluster.add_pod({**B.pod("a", "gang"), "spec": {**B.pod("a", "gang")["spec"], "resourceClaims": claims}})
    cluster.add_pod(B.pod("b", "gang"))
    cluster.add_pod({**B.pod("single"), "spec": {**B.pod("single")["spec"], "resourceClaims": claims}})
    pvc = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    cluster.add_pod({**B.pod("pvc"), "spec": {**B.pod("pvc")["spec"], "volumes": pvc}})
    gated = B.pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "wait"}]
    cluster.add_pod(gated)
    result = vcore.Scheduler(cluster).run_cycle()
    assert result.bindings == []
    assert "vcore does not honor spec.resourceClaims" in result.podgroups[f"{B.NS}/gang"].message
    assert (
        result.unschedulable[f"{B.NS}/single"][1]
        == "0/2 nodes are available: vcore does not honor spec.resourceClaims."
    )
    # Volumes are honored: a claim that does not exist is VolumeBinding's PreFilter rejection, in kube's words.
    assert result.unschedulable[f"{B.NS}/pvc"][1] == '0/2 nodes are available: persistentvolumeclaim "data" not found.'
    assert "waiting for scheduling gates: [wait]" in result.unschedulable[f"{B.NS}/gated"][1]
    assert cluster.n_pods == 0


@pytest.mark.parametrize(
    "bad, path",
    [
        ({"topologySpreadConstraints": "x"}, "spec.topologySpreadConstraints"),
        ({"volumes": [5]}, "spec.volumes[0]"),
        ({"hostNetwork": "yes"}, "spec.hostNetwork"),
        ({"containers": [{"name": "c", "ports": [{"hostPort": "80"}]}]}, "spec.containers[0].ports[0].hostPort"),
        ({"containers": [{"name": "c", "ports": [{"hostPort": 70000}]}]}, "spec.containers[0].ports[0].hostPort"),
        ({"schedulingGates": [{"name": 3}]}, "spec.schedulingGates[0].name"),
        ({"nodeName": 7}, "spec.nodeName"),
    ],
)
def test_malformed_guarded_fields_are_errors_naming_them(bad, path):
    with pytest.raises((ValueError, TypeError), match="^" + re.escape(f"pod default/p: {path}: ")):
        vcore.Scheduler(_cluster()).filter(_pod("p", **bad))
