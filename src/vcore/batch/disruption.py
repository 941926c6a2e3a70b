"""Volcano's ``pdb`` plugin: preempt and reclaim leave alone the running pods whose eviction would go past a
PodDisruptionBudget (``Cluster.add_pod_disruption_budget``).

Volcano filters each node's preemptees with kube-scheduler's counting (filterPodsWithPDBViolation): walking them,
each pod a budget covers (same namespace, a non-empty selector matching its labels, not among the budget's
``disruptedPods``) spends one of ``status.disruptionsAllowed``; a pod that finds a budget spent stays. The counting
starts afresh on every node. vcore counts once per job attempt, so the budget a job's first task spent on a node is
not granted again to its next task (Volcano recounts per call, over the pods still running there); the walk is in
key order (Volcano's is Go map order). A pod without labels matches no budget and stays a victim candidate (Volcano
v1.14 drops it from the victims instead, a slip in its port of kube's loop).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from vcore._native import _core

PLUGIN = "pdb"
PREEMPTABLE, RECLAIMABLE = "enablePreemptable", "enableReclaimable"


def within_budgets(state: _core.ClusterState, keys: Iterable[str]) -> set[str]:
    """The bound pods among ``keys`` that may be evicted without going past a PodDisruptionBudget, budgets counted
    per node."""
    by_node: dict[int, list[str]] = defaultdict(list)
    for key in sorted(keys):
        by_node[state.pod_node(key)].append(key)
    keep: set[str] = set()
    for node_keys in by_node.values():
        keep.update(k for k, violating in zip(node_keys, state.pdb_violating(node_keys), strict=True) if not violating)
    return keep
