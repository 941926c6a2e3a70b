"""vcore-scheduler with Volcano's nodegroup plugin on the real control plane: a Queue's spec.affinity keeps its
PodGroups' pods in the node groups it names (nodes labelled volcano.sh/nodegroup-name), prefers the group it
prefers, and a Queue update reaches the pods still waiting."""

from __future__ import annotations

import functools

import pytest

from vcore.batch.config import DEFAULT_CONF
from vcore.batch.nodegroups import NODE_GROUP_LABEL
from vcore_kube.testenv.objects import create_nodes, create_pods, node, pod

from .harness import wait_bound

SCHED = "vcore-nodegroup"
VOLCANO = "/apis/scheduling.volcano.sh/v1beta1"
# Volcano's default configuration with nodegroup beside predicates (as Volcano's nodegroup guide configures it).
CONF = {
    **DEFAULT_CONF,
    "tiers": [DEFAULT_CONF["tiers"][0], {"plugins": [*DEFAULT_CONF["tiers"][1]["plugins"], {"name": "nodegroup"}]}],
}


@pytest.fixture
def scheduler(scheduler):
    return functools.partial(scheduler, SCHED, cycle=CONF)


def _queue(name: str, required: list[str], preferred: list[str] = ()) -> dict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {
            "weight": 1,
            "affinity": {
                "nodeGroupAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": list(required),
                    "preferredDuringSchedulingIgnoredDuringExecution": list(preferred),
                }
            },
        },
    }


def _job(admin, namespace: str, name: str, queue: str, n: int) -> list[str]:
    admin.create(
        f"{VOLCANO}/namespaces/{namespace}/podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": n, "queue": queue},
        },
    )
    names = [f"{name}-{i}" for i in range(n)]
    pods = []
    for member in names:
        p = pod(member, namespace, scheduler=SCHED, cpu="100m", annotations={"scheduling.k8s.io/group-name": name})
        p["spec"]["nodeSelector"] = {"pool": "ng"}
        pods.append(p)
    create_pods(admin, pods)
    return names


def test_a_queue_keeps_its_jobs_in_its_node_groups(admin, namespace, scheduler):
    run = scheduler()
    create_nodes(
        admin,
        [node(f"ng-{g}-{i}", labels={"pool": "ng", NODE_GROUP_LABEL: g}, cpu="4") for g in "abc" for i in range(2)]
        + [node("ng-unlabelled", labels={"pool": "ng"}, cpu="8")],
    )
    queue = f"{namespace}-ng"
    admin.create(f"{VOLCANO}/queues", _queue(queue, required=["b", "c"], preferred=["c"]))
    train = _job(admin, namespace, "train", queue, 3)
    placed = wait_bound(admin, namespace, train, timeout=60, run=run)
    # Groups b and c are admitted; c scores 150 against b's 100, and its two nodes hold all three pods.
    assert {placed[p].rsplit("-", 1)[0] for p in train} == {"ng-c"}, placed
    # The queue now requires group a only: a job created after the update goes there.
    admin.patch(f"{VOLCANO}/queues/{queue}", {"spec": _queue(queue, required=["a"])["spec"]})
    serve = _job(admin, namespace, "serve", queue, 2)
    placed = wait_bound(admin, namespace, serve, timeout=60, run=run)
    assert {placed[p].rsplit("-", 1)[0] for p in serve} == {"ng-a"}, placed
