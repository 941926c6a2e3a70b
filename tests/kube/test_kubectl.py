"""What a user does with kubectl against the test control plane: apply Volcano's objects by file, read them back
by their short names, and see vcore-scheduler's reasons in `kubectl describe`."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from vcore_kube.testenv.objects import create_nodes, node

from .harness import SchedulerRun, events, wait_for

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None, reason="kubectl is not installed (Debian's kubernetes-client; .ci/run installs it)"
)

VOLCANO_OBJECTS = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: kubectl-research}
spec: {weight: 3, capability: {cpu: "64", nvidia.com/gpu: 8}, reclaimable: true}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: train, namespace: NAMESPACE}
spec: {minMember: 1, queue: kubectl-research, minResources: {cpu: "4"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: big
  namespace: NAMESPACE
  annotations: {scheduling.k8s.io/group-name: train}
spec:
  schedulerName: vcore-kubectl
  containers: [{name: c, image: registry.invalid/x, resources: {requests: {cpu: "900"}}}]
"""


def kubectl(control_plane, *args, stdin: str | None = None) -> str:
    res = subprocess.run(
        ["kubectl", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KUBECONFIG": control_plane.kubeconfig},
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_apply_volcano_objects_and_describe_the_reason(control_plane, admin, namespace, tmp_path):
    create_nodes(admin, [node("kubectl-node", cpu="8")])
    kubectl(control_plane, "apply", "-f", "-", stdin=VOLCANO_OBJECTS.replace("NAMESPACE", namespace))
    assert "train" in kubectl(control_plane, "get", "pg", "-n", namespace)
    assert "kubectl-research" in kubectl(control_plane, "get", "q")
    run = SchedulerRun(control_plane.scheduler_kubeconfig, tmp_path, "vcore-kubectl").start()
    try:
        # The pod may reach the scheduler before its PodGroup ("podgroup ... not found"): wait for the real reason.
        wait_for(
            lambda: any("Insufficient cpu" in e.get("note", "") for e in events(admin, namespace, "FailedScheduling")),
            30,
            "FailedScheduling: Insufficient cpu",
            run,
        )
        described = kubectl(control_plane, "describe", "pod", "big", "-n", namespace)
        assert "FailedScheduling" in described and "Insufficient cpu" in described
        # The PodGroup says it too, as Volcano writes it: admitted (Inqueue), unschedulable for lack of cpu.
        wait_for(
            lambda: (
                "Insufficient cpu"
                in kubectl(
                    control_plane,
                    "get",
                    "pg",
                    "train",
                    "-n",
                    namespace,
                    "-o",
                    "jsonpath={.status.conditions[*].message}",
                )
            ),
            30,
            "the PodGroup's Unschedulable condition",
            run,
        )
        assert (
            kubectl(control_plane, "get", "pg", "train", "-n", namespace, "-o", "jsonpath={.status.phase}") == "Inqueue"
        )
    finally:
        assert run.stop() == 0
