"""Why a node was filtered out, in kube-scheduler's words, and the FitError-style summary of those reasons.

The codes are shared with the C++ core (core/include/vcore/reasons.h); tests keep the two tables equal.
"""

from collections.abc import Mapping

UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED_TAINT = "node(s) had untolerated taint"
AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"
NO_FITTING_GPUS = "node(s) had no free GPU devices that fit"
NO_NUMA_ALIGNMENT = "node(s) could not align the pod on NUMA nodes as its topology policy asks"

# Codes 0..5 in this order; code 6 + resource axis is "Insufficient <resource>".
FIXED_REASONS = (UNSCHEDULABLE, UNTOLERATED_TAINT, AFFINITY_MISMATCH, TOO_MANY_PODS, NO_FITTING_GPUS,
                 NO_NUMA_ALIGNMENT)


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


def reason_counts(codes_counts, resource_names) -> dict[str, int]:
    """Map a per-code count array to {reason: count}, keeping only reasons that occurred."""
    names = [*FIXED_REASONS, *(insufficient(r) for r in resource_names)]
    return {names[code]: int(count) for code, count in enumerate(codes_counts) if count}


def fit_error_message(n_nodes: int, reasons: Mapping[str, int]) -> str:
    """kube-scheduler's FitError text: '0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had ...'."""
    if n_nodes == 0:
        return "no nodes available to schedule pods"
    histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{n_nodes} nodes are available: {', '.join(histogram)}."
