"""Why a node was filtered out, in kube-scheduler's words, and the FitError text kube-scheduler v1.34 writes into a
pod's FailedScheduling event and PodScheduled condition.

The codes are the C++ core's (core/include/vcore/reasons.h): its fused filters' fixed reasons (FIXED_REASONS here;
tests keep the two equal), then every node plugin's, then "Insufficient <resource>" per resource axis. The whole
table of a cluster state is ``vcore._native._core.reason_names(state)``.

kube-scheduler's text has three parts: "0/<nodes> nodes are available:", then the PreFilter rejection or the
filters' reasons counted over the nodes, then what its PostFilter plugins said (post_filter_message) -- in the
default profile DynamicResources ("no new claims to deallocate" for a pod without resource claims), then
DefaultPreemption (vcore.preemption: "preemption: 0/5 nodes are available: ..." when no eviction helps, nothing when
it picks a node).
"""

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self

UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED_TAINT = "node(s) had untolerated taint(s)"
AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"
NO_FITTING_GPUS = "node(s) had no free GPU devices that fit"
NO_NUMA_ALIGNMENT = "node(s) could not align the pod on NUMA nodes as its topology policy asks"
# The kernel's code for a pod it refuses outright; the text a user sees names why (pod_refusal).
UNHONORED = "pod has a constraint vcore does not honor"
# NodeAffinity's PreFilter: the required terms all name nodes (matchFields metadata.name In), so the others are
# not looked at; disjoint names refuse the pod as a whole.
NODE_AFFINITY_PREFILTER = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
AFFINITY_TERMS_CONFLICT = "pod affinity terms conflict"

# The fused filters' codes 0..8 in this order.
FIXED_REASONS = (
    UNSCHEDULABLE,
    UNTOLERATED_TAINT,
    AFFINITY_MISMATCH,
    TOO_MANY_PODS,
    NO_FITTING_GPUS,
    NO_NUMA_ALIGNMENT,
    UNHONORED,
    NODE_AFFINITY_PREFILTER,
    AFFINITY_TERMS_CONFLICT,
)

# What kube-scheduler v1.34's DynamicResources PostFilter says of a pod without resource claims.
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
# A PreFilter rejection ends the cycle before DynamicResources' PreFilter writes its state; its PostFilter then
# fails to read it, and the error's text ends the message (DefaultPreemption does not run).
POST_FILTER_STATE_MISSING = "not found"

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


def pod_refusal(spec: Mapping[str, Any] | None) -> str:
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


def reason_counts(
    codes_counts: Iterable[int],
    reason_names: Sequence[str],
    spec: Mapping[str, Any] | None = None,
    noted: Callable[[str], str] | None = None,
) -> dict[str, int]:
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


def fit_error_message(n_nodes: int, reasons: Mapping[str, int], post_filter: str = "") -> str:
    """kube-scheduler's FitError text: '0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had ...' and what
    the PostFilter plugins said (``post_filter``, see post_filter_message); for a pod refused as a whole
    '0/5 nodes are available: <why>.' (a PreFilter rejection has no per-node count)."""
    if n_nodes == 0:
        return "no nodes available to schedule pods"
    message = f"0/{n_nodes} nodes are available:"
    refusal = next((reason for reason in reasons if is_pod_refusal(reason)), None)
    if isinstance(refusal, PodRejection):  # a plugin's PreFilter rejection, or its Filter's error (said alone)
        if refusal.error:
            return str(refusal)
        message += f" {refusal}."
        return f"{message} {post_filter}" if post_filter else message
    if refusal is not None:  # vcore's own words: no kube-scheduler plugin ran
        return f"{message} {refusal}."
    if AFFINITY_TERMS_CONFLICT in reasons:
        message += f" {AFFINITY_TERMS_CONFLICT}."
    elif reasons:
        histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
        message += f" {', '.join(histogram)}."
    return f"{message} {post_filter}" if post_filter else message


def post_filter_message(reasons: Mapping[str, int], preemption: str | None) -> str:
    """What kube-scheduler's PostFilter plugins say about a pod that fits no node for ``reasons``: DynamicResources'
    words, then DefaultPreemption's ``preemption`` text (None when the profile does not run it; empty when it found
    a node, which ends the PostFilter without a word). Empty for a pod vcore refuses as a whole (no kube-scheduler
    plugin ran) and for a plugin's Filter error (no PostFilter runs). fit_error_message leaves it out where there
    are no nodes (no PostFilter runs then)."""
    rejection = next((reason for reason in reasons if isinstance(reason, PodRejection)), None)
    if rejection is not None:
        # A volume plugin's PreFilter rejection (UnschedulableAndUnresolvable) ends the PreFilter before
        # DynamicResources' (later in the profile) writes its state, as NodeAffinity's does.
        return "" if rejection.error else POST_FILTER_STATE_MISSING
    if any(is_pod_refusal(reason) for reason in reasons):
        return ""
    if AFFINITY_TERMS_CONFLICT in reasons:
        return POST_FILTER_STATE_MISSING
    if preemption is None:
        return NO_CLAIMS_TO_DEALLOCATE
    return f"{NO_CLAIMS_TO_DEALLOCATE}, {preemption}" if preemption else ""
