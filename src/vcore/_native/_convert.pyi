"""Type stub for the Cython module vcore._native._convert (hand-written; keep in step with _convert.pyx).

Kubernetes resource quantities and v1 Node/Pod objects -> the flat integer-only dicts of vcore's core.
cpu is in milli-cores, every other resource in whole units (bytes, devices, pods); values round up.
"""

from collections.abc import Iterable, Mapping
from typing import Any, Literal, NotRequired, TypedDict

__all__ = ["api_dict", "parse_quantity", "node_spec", "pod_spec", "pod_specs", "label_selector", "node_selector_term"]

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
TolerationEffect = Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"]
SelectorOperator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]

# (key or field, operator, values); Gt/Lt values are one decimal int64 string.
Requirement = tuple[str, SelectorOperator, list[str]]

class SelectorTerm(TypedDict):
    expressions: list[Requirement]
    fields: list[Requirement]  # key is always "metadata.name", operator In/NotIn, exactly one value

# A GPU of a node spec: (model, memory MiB, NUMA node, NVLink domain, MIG mode, MIG geometry id,
# [(MIG shape id, start slice)]).
GpuDevice = tuple[str, int, int, int, bool, int, list[tuple[int, int]]]

class NodeSpec(TypedDict):
    name: str
    labels: list[tuple[str, str]]
    allocatable: dict[str, int]
    taints: list[tuple[str, str, TaintEffect]]  # (key, value, effect)
    unschedulable: bool
    may_have_gpus: NotRequired[bool]  # present (True) when allocatable or GFD labels show GPUs
    images: NotRequired[list[tuple[list[str], int]]]  # status.images: (names, sizeBytes)
    # Added by vcore, not by the converter, before the core reads the spec:
    gpus: NotRequired[list[GpuDevice]]  # vcore.gpu.specs.node_devices
    numa_cpu: NotRequired[list[tuple[int, int]]]  # vcore.gpu.numa.node_numa_cpu: (NUMA node, allocatable milli-cpu)
    pattern_version: NotRequired[int]  # vcore.topology.patterns: the regexMatch pattern table the ids are of
    pattern_ids: NotRequired[list[int]]  # the ids of the patterns the node's name matches

class LabelSelector(TypedDict):
    requirements: list[Requirement]  # matchLabels as In of one value; In, NotIn, Exists, DoesNotExist only

class AffinityTerm(TypedDict):
    selector: LabelSelector | None  # None: a nil labelSelector (matches no pod); matchLabelKeys merged in
    topology_key: str
    namespaces: list[str]  # none and no namespace_selector: the pod's own namespace
    namespace_selector: NotRequired[LabelSelector | None]
    weight: int  # preferred terms 1..100, required terms 0

class PodAffinity(TypedDict, total=False):
    required_affinity: list[AffinityTerm]
    required_anti_affinity: list[AffinityTerm]
    preferred_affinity: list[AffinityTerm]
    preferred_anti_affinity: list[AffinityTerm]

class SpreadConstraint(TypedDict):
    max_skew: int
    topology_key: str
    hard: bool  # whenUnsatisfiable DoNotSchedule
    selector: LabelSelector | None  # matchLabelKeys merged in
    min_domains: int
    honor_node_affinity: bool
    honor_taints: bool

class PodSpec(TypedDict):
    key: str  # "namespace/name"
    requests: dict[str, int]  # effective request (resourcehelper.PodRequests), nonzero entries only
    nonzero_cpu_milli: int  # what the pod adds to its node's NonZeroRequested once bound
    nonzero_mem_bytes: int
    score_cpu_milli: NotRequired[int]  # NodeResourcesFit's scorer's reading (pod-level requests left out); only
    score_mem_bytes: NotRequired[int]  # for a pod with pod-level requests, where it differs from nonzero_*
    node_selector: list[tuple[str, str]]
    required_terms: list[SelectorTerm] | None
    preferred_terms: list[tuple[int, SelectorTerm]]  # (weight 1..100, term)
    tolerations: list[tuple[str, Literal["Equal", "Exists"], str, TolerationEffect]]  # (key, operator, value, effect)
    priority: int
    may_use_gpus: NotRequired[bool]  # present (True) when the pod may have a GPU request
    may_use_volumes: NotRequired[bool]  # present (True) when a volume of it is one the volume plugins read
    labels: NotRequired[list[tuple[str, str]]]  # metadata.labels, when it has any
    deleting: NotRequired[bool]  # metadata.deletionTimestamp is set
    controller: NotRequired[tuple[str, str, str]]  # (apiVersion, kind, name) of the controller owner reference
    pod_affinity: NotRequired[PodAffinity]
    spread: NotRequired[list[SpreadConstraint]]
    default_spread_selector: NotRequired[LabelSelector]  # added by Cluster.complete_spec
    volumes: NotRequired[dict[str, Any]]  # added by vcore.volumes.pods for pods with may_use_volumes
    node_name: NotRequired[str]
    unhonored: NotRequired[tuple[str, ...]]  # fields vcore does not evaluate: the pod is refused
    scheduling_gates: NotRequired[tuple[str, ...]]
    host_ports: NotRequired[list[tuple[str, str, int]]]  # (host IP, protocol, port): NodePorts
    images: NotRequired[list[str]]  # each container's image, init containers first, tag defaulted: ImageLocality
    n_containers: NotRequired[int]
    preemption_policy: NotRequired[Literal["Never"]]  # present only when the pod may not preempt
    start_time: NotRequired[int]  # status.startTime, Unix seconds
    nominated_node: NotRequired[str]  # status.nominatedNodeName
    preempted: NotRequired[bool]  # being terminated by a preemption (DisruptionTarget, PreemptionByScheduler)
    gpu: NotRequired[dict[str, Any]]  # added by vcore (vcore.gpu.specs.pod_gpu): the native GPU request

def parse_quantity(value: str | int | float, *, milli: bool = False, obj: str = "", field: str = "") -> int:
    """MilliValue() if milli else Value() of a Kubernetes quantity, rounded up.

    Raises ValueError (malformed, negative, None/bool, > 2**63-1) or TypeError (other types); the message starts
    with "<obj>: <field>: ".
    """

def api_dict(o: Mapping[str, Any] | Any, kind: str) -> dict[str, Any]:
    """A Kubernetes object as a dict in API shape (client models serialized); else TypeError naming ``kind``."""

def node_spec(node: Mapping[str, Any] | Any) -> NodeSpec:
    """A v1 Node as an API-shaped dict or a kubernetes.client.V1Node; metadata.name must be a DNS-1123 subdomain
    (at most 253 characters)."""

def pod_spec(pod: Mapping[str, Any] | Any) -> PodSpec:
    """A v1 Pod as an API-shaped dict or a kubernetes.client.V1Pod."""

def pod_specs(pods: Iterable[Mapping[str, Any] | Any]) -> list[PodSpec]:
    """pod_spec over a sequence; errors are prefixed with "pods[<index>]: "."""

def label_selector(selector: Mapping[str, Any] | None, ctx: str, path: str) -> LabelSelector | None:
    """A metav1.LabelSelector as the core reads it; None for a nil selector."""

def node_selector_term(term: Mapping[str, Any], ctx: str, path: str) -> SelectorTerm:
    """A v1.NodeSelectorTerm as the core reads it, checked as node affinity terms are."""
