"""Why a node was filtered out, in kube-scheduler's words, and the FitError-style summary of those reasons.

The codes are the C++ core's (core/include/vcore/reasons.h): its fused filters' fixed reasons (FIXED_REASONS here;
tests keep the two equal), then every node plugin's, then "Insufficient <resource>" per resource axis. The whole
table of a cluster state is ``vcore._native._core.reason_names(state)``.
"""

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self

UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED_TAINT = "node(s) had untolerated taint"
AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"
NO_FITTING_GPUS = "node(s) had no free GPU devices that fit"
NO_NUMA_ALIGNMENT = "node(s) could not align the pod on NUMA nodes as its topology policy asks"
# The kernel's code for a pod it refuses outright; the text a user sees names why (pod_refusal).
UNHONORED = "pod has a constraint vcore does not honor"

# The fused filters' codes 0..6 in this order.
FIXED_REASONS = (UNSCHEDULABLE, UNTOLERATED_TAINT, AFFINITY_MISMATCH, TOO_MANY_PODS, NO_FITTING_GPUS,
                 NO_NUMA_ALIGNMENT, UNHONORED)

# Refusals of the whole pod, not of particular nodes: reported as kube-scheduler reports a PreFilter rejection.
_NOT_HONORED = "vcore does not honor "
_GATED = "waiting for scheduling gates: "


# A node plugin's reason whose words are the pod's own (a volume plugin's PreFilter rejection, an error, or a filter
# status naming the claim): the native table holds a placeholder, the message is noted per pod and plugin.
_NOTED = re.compile(r"<(\w+): (pod rejected at PreFilter|filter error|filter status)>")


class NotedReason(str):
    """A reason in the words a plugin noted for the pod (a message of its own, such as a claim's name), with the
    plugin that gave it."""

    plugin: str

    def __new__(cls, text: str, plugin: str = "") -> Self:
        out = super().__new__(cls, text)
        out.plugin = plugin
        return out


class PodRejection(NotedReason):
    """A reason that rejects the pod as a whole, reported without a node count as kube-scheduler reports a PreFilter
    rejection; ``error`` marks a failure kube-scheduler reports as the scheduling attempt's error (the message
    alone)."""

    error: bool

    def __new__(cls, text: str, plugin: str = "", error: bool = False) -> Self:
        out = super().__new__(cls, text, plugin)
        out.error = error
        return out


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


def pod_refusal(spec: Mapping | None) -> str:
    """Why every node refuses a pod outright: its scheduling gates (as kube-scheduler's SchedulingGates words
    them), or the fields of it that vcore does not evaluate (unnamed for a pod the caller compiled)."""
    if spec is not None:
        gates = spec.get("scheduling_gates")
        if gates:
            return f"{_GATED}[{' '.join(gates)}]"
        fields = spec.get("unhonored")
        if fields:
            return _NOT_HONORED + ", ".join(fields)
    return _NOT_HONORED + "a field of this pod, or it waits for scheduling gates"


def reason_counts(codes_counts: Iterable[int], reason_names: Sequence[str], spec: Mapping[str, Any] | None = None,
                  noted: Callable[[str], str] | None = None) -> dict[str, int]:
    """Map a per-code count array to {reason: count}, keeping only reasons that occurred; ``reason_names`` is the
    state's table (``_core.reason_names(state)``), ``spec`` (the pod's native spec) names what a refusal is about,
    ``noted(plugin)`` gives the message a plugin noted for the pod (vcore.volumes.store.rejection_lookup)."""
    out = {reason_names[code]: int(count) for code, count in enumerate(codes_counts) if count}
    if UNHONORED in out:
        out[pod_refusal(spec)] = out.pop(UNHONORED)
    for name in [n for n in out if n.startswith("<")]:
        match = _NOTED.fullmatch(name)
        if match is None:
            continue
        plugin, kind = match.groups()
        count = out.pop(name)
        message = (noted(plugin) if noted is not None else "") or f"{plugin} rejected the pod"
        if kind == "filter status":
            out[NotedReason(message, plugin)] = out.get(message, 0) + count
        else:
            out[PodRejection(message, plugin, error=kind == "filter error")] = count
    return out


def is_pod_refusal(reason: str) -> bool:
    return isinstance(reason, PodRejection) or reason.startswith((_NOT_HONORED, _GATED))


def fit_error_message(n_nodes: int, reasons: Mapping[str, int]) -> str:
    """kube-scheduler's FitError text: '0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had ...', or for
    a pod refused as a whole '0/5 nodes are available: <why>.' (a PreFilter rejection has no per-node count)."""
    if n_nodes == 0:
        return "no nodes available to schedule pods"
    refusal = next((reason for reason in reasons if is_pod_refusal(reason)), None)
    if refusal is not None:
        if isinstance(refusal, PodRejection) and refusal.error:
            return str(refusal)
        return f"0/{n_nodes} nodes are available: {refusal}."
    histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{n_nodes} nodes are available: {', '.join(histogram)}."
