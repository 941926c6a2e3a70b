"""What the batch layer knows of one pod: its gang, role, queue hint, priority and phase, beside its native spec.

The node a pod runs on is not kept here: the native cluster state is the one truth about bindings
(``ClusterState.pod_node``), so this record can never disagree with the accounting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from vcore._native import _convert, _core
from vcore.batch.podgroup import GROUP_NAME_ANNOTATION, QUEUE_NAME_ANNOTATION, TASK_SPEC_KEY, metadata, string_map
from vcore.topology.constraint import TopologyConstraint, kueue_constraint
from vcore.validation import go_parse_bool

if TYPE_CHECKING:
    from vcore._native._convert import PodSpec

KUEUE_TAS_PREFIX = "kueue.x-k8s.io/podset-"

#: Pod phases that hold no resources any more (kube-scheduler and the kubelet let them go).
TERMINATED = frozenset({"Succeeded", "Failed"})
PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")  # v1 PodPhase
GPU_INDEX_ANNOTATION = "volcano.sh/gpu-index"
#: Whether a pod may be a preempt or reclaim victim (annotation first, then label; default true), read as Go's
#: strconv.ParseBool: Volcano reads a value that is not a boolean as false (GetPodPreemptable).
PREEMPTABLE_KEY = "volcano.sh/preemptable"
COOLDOWN_TIME_KEY = "volcano.sh/cooldown-time"


@dataclass(slots=True)  # read for tens of thousands of pods a cycle: no per-object dict
class PodInfo:
    key: str
    namespace: str
    group: str | None  # namespace/name of its PodGroup; None: a gang of one
    role: str  # volcano.sh/task-spec, "" when none
    queue_hint: str  # scheduling.volcano.sh/queue-name, for pods without a group
    priority_class: str
    spec_priority: int | None  # spec.priority as the API server's Priority admission set it
    phase: str  # status.phase ("Pending" when absent)
    node_name: str  # spec.nodeName, "" when pending
    creation: str
    gpu_index: str | None  # volcano.sh/gpu-index of a running pod
    spec: PodSpec  # the native pod spec (vcore.cluster.pod_spec)
    labels: dict[str, str]  # metadata.labels (PodGroup sub-group selectors)
    topology: TopologyConstraint | None  # Kueue TAS annotations of its pod template, None when it has none
    best_effort: bool  # no resource requests at all (Volcano's backfill places these)
    preemptable: bool = True  # volcano.sh/preemptable
    never_preempts: bool = False  # spec.preemptionPolicy: Never (the pod may not preempt or reclaim)
    deleting: bool = False  # metadata.deletionTimestamp set: Releasing on its node, never scheduled again
    # A Running pod with volcano.sh/cooldown-time (label, else annotation) and a PodScheduled True condition: that
    # value and the condition's lastTransitionTime, as the cdp plugin reads them (None otherwise).
    cooldown: tuple[str, str] | None = None
    compiled: _core.CompiledPod | None = None  # made when the pod is added while pending
    node_groups: Any = None  # the nodegroup plugin's filter compiled into `compiled` (vcore.batch.nodegroups)
    shape: int = -1  # its request shape in BatchState.shapes ((axis, amount) pairs); -1 until known

    @property
    def terminated(self) -> bool:
        return self.phase in TERMINATED


def pod_info(obj: Any, spec: PodSpec) -> PodInfo:
    """The batch view of a pod whose native spec is ``spec`` (converted by the caller)."""
    d = _convert.api_dict(obj, "pod")
    namespace, name, meta = metadata(d, "pod")
    what = f"pod {namespace}/{name}"
    annotations = string_map(meta.get("annotations"), f"{what}: metadata.annotations")
    labels = string_map(meta.get("labels"), f"{what}: metadata.labels")
    pod_spec = d.get("spec") or {}
    status = d.get("status") or {}
    if not isinstance(status, dict):
        raise TypeError(f"{what}: status: expected an object, got {type(status).__name__}")
    group = annotations.get(GROUP_NAME_ANNOTATION)
    node_name = pod_spec.get("nodeName") or ""
    if not isinstance(node_name, str):
        raise TypeError(f"{what}: spec.nodeName: expected a string")
    priority_class = pod_spec.get("priorityClassName") or ""
    if not isinstance(priority_class, str):
        raise TypeError(f"{what}: spec.priorityClassName: expected a string")
    phase = status.get("phase") or "Pending"
    if phase not in PHASES:
        raise ValueError(f"{what}: status.phase: must be one of {', '.join(PHASES)}, got {phase!r}")
    topology = None
    if any(k.startswith(KUEUE_TAS_PREFIX) for k in annotations):
        constraint = kueue_constraint(annotations, owner=what)  # TopologyError naming the pod and the annotation
        topology = constraint if constraint.mode != "none" or constraint.subgroups else None
    return PodInfo(
        key=spec["key"],
        namespace=namespace,
        group=f"{namespace}/{group}" if group else None,
        role=annotations.get(TASK_SPEC_KEY) or labels.get(TASK_SPEC_KEY) or "",
        queue_hint=annotations.get(QUEUE_NAME_ANNOTATION, ""),
        priority_class=priority_class,
        spec_priority=pod_spec.get("priority"),
        phase=str(phase),
        node_name=node_name,
        creation=str(meta.get("creationTimestamp") or ""),
        gpu_index=annotations.get(GPU_INDEX_ANNOTATION),
        spec=spec,
        labels=labels,
        topology=topology,
        best_effort=not spec["requests"],
        preemptable=preemptable(annotations, labels),
        never_preempts=spec.get("preemption_policy") == "Never",
        deleting=bool(spec.get("deleting")),
        cooldown=cooldown(labels, annotations, status, phase, what),
    )


def cooldown(
    labels: dict[str, str], annotations: dict[str, str], status: dict[str, Any], phase: str, what: str
) -> tuple[str, str] | None:
    """What the cdp plugin reads of a pod (PodInfo.cooldown)."""
    value = labels.get(COOLDOWN_TIME_KEY, annotations.get(COOLDOWN_TIME_KEY))
    if value is None or phase != "Running":
        return None
    conditions = status.get("conditions") or []
    if not isinstance(conditions, list):
        raise TypeError(f"{what}: status.conditions: expected a list")
    for i, c in enumerate(conditions):
        if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("status") == "True":
            since = c.get("lastTransitionTime")
            if not isinstance(since, str):
                raise TypeError(f"{what}: status.conditions[{i}].lastTransitionTime: expected an RFC 3339 string")
            return value, since
    return None


def preemptable(annotations: dict[str, str], labels: dict[str, str]) -> bool:
    """volcano.sh/preemptable: the annotation, else the label, else true; a value Go's ParseBool refuses is false."""
    value = annotations.get(PREEMPTABLE_KEY, labels.get(PREEMPTABLE_KEY))
    return value is None or go_parse_bool(value) is True


def compiled_pods(tasks: list[PodInfo]) -> list[_core.CompiledPod]:
    """The compiled pods of pending tasks: the session compiled every one as it opened."""
    return cast("list[_core.CompiledPod]", [t.compiled for t in tasks])
