"""kube-scheduler's DefaultPreemption (PostFilter) for a pod that fits no node: whether the pod may preempt, the
native dry run (``Engine.preempt``: candidate nodes, victims, PodDisruptionBudgets) and its outcome in
kube-scheduler's words.

A pod with ``preemptionPolicy: Never`` may not preempt; nor may one whose nominated node still holds a
lower-priority pod that an earlier preemption is terminating (it waits for that pod to go). Otherwise the dry run
picks a node and its victims, or explains why none helps: "preemption: 0/N nodes are available: ..." with, per
node, "No preemption victims found for incoming pod", the filter that still fails with every lower-priority pod
gone, or "Preemption is not helpful for scheduling" (a node whose failure no eviction lifts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from vcore._native import _core
from vcore.reasons import fit_error_message
from vcore.types import Preemption, PreemptionCandidate

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."
PREFIX = "preemption: "

# Per-slot statuses of the native dry run (core/include/vcore/engine.h: PreemptionOutcome).
_CANDIDATE, _NO_VICTIMS, _NOT_HELPFUL, _FITS, _OUTSIDE = -1, -2, -3, -4, -5


def preempt(
    engine: _core.Engine,
    state: _core.ClusterState,
    pod: _core.CompiledPod,
    spec: Mapping[str, Any] | None,
    *,
    args: Any,
    offset: int,
    n_nodes: int,
    reason_names: Sequence[str],
    terminating: Any = None,
    nominated: Sequence[tuple[_core.CompiledPod, str]] = (),
) -> Preemption:
    """DefaultPreemption for ``pod`` (``spec`` its converted spec, None when the caller compiled it). ``args`` are
    the DefaultPreemptionArgs; ``offset`` where the walk over candidate nodes starts; ``n_nodes`` the nodes the
    scheduler sees; ``terminating(key)`` whether a bound pod is being terminated by an earlier preemption;
    ``nominated`` the pending pods with a nominated node (compiled, node name): those of the pod's priority or
    higher count as there while it is filtered."""
    if pod.never_preempts:  # spec.preemptionPolicy Never, known to a pod the caller compiled too
        return Preemption(None, message=PREFIX + NEVER)
    slots = [(nominee, state.node_index(node)) for nominee, node in nominated if state.has_node(node)]
    node, victims, violations, status, failed, candidates = engine.preempt(
        pod, offset, args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute, slots
    )
    own = spec.get("nominated_node") if spec is not None else None
    if own and terminating is not None and _waits_for_victims(state, pod, own, status, terminating):
        return Preemption(None, message=PREFIX + TERMINATING)
    if node >= 0:
        listed = tuple(PreemptionCandidate(state.node_name(slot), tuple(keys), int(n)) for slot, keys, n in candidates)
        return Preemption(state.node_name(node), tuple(victims), int(violations), candidates=listed)
    return Preemption(None, message=PREFIX + fit_error_message(n_nodes, _histogram(status, failed, reason_names)))


def _waits_for_victims(
    state: _core.ClusterState, pod: _core.CompiledPod, node: str, status: Any, terminating: Any
) -> bool:
    """PodEligibleToPreemptOthers: the nominated node (unless no eviction can help there) holds a lower-priority
    pod being terminated by preemption."""
    slot = state.node_index(node) if state.has_node(node) else -1
    if slot < 0 or status[slot] == _NOT_HELPFUL:
        return False
    return any(terminating(key) and state.pod_priority(key) < pod.priority for key in state.pods_on(slot))


def _histogram(status: Any, failed: Sequence[tuple[int, Sequence[int]]], reason_names: Sequence[str]) -> dict[str, int]:
    """kube-scheduler's NodeToStatus of a preemption that found no candidate, counted per reason: the nodes it tried
    say why they failed, every other node that preemption is not helpful there."""
    counts: Counter[str] = Counter()
    tried = 0
    for _, codes in failed:
        tried += 1
        for code in codes:
            counts[reason_names[code]] += 1
    no_victims = int((status == _NO_VICTIMS).sum())
    if no_victims:
        counts[NO_VICTIMS] += no_victims
    absent = int(((status != _OUTSIDE) & (status != _NO_VICTIMS)).sum()) - tried
    if absent:
        counts[NOT_HELPFUL] += absent
    return dict(counts)
