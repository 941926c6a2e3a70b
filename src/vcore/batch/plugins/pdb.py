"""Volcano's ``pdb`` plugin (plugins/pdb/pdb.go): preempt and reclaim leave alone the running pods whose eviction
would go past a PodDisruptionBudget (``Cluster.add_pod_disruption_budget``).

Volcano filters each node's candidates with kube-scheduler's counting (filterPodsWithPDBViolation): walking them,
each pod a budget covers (same namespace, a non-empty selector matching its labels, not among the budget's
``disruptedPods``) spends one of ``status.disruptionsAllowed``; a pod that finds a budget spent stays. The counting
starts afresh on every node and every vote, over the candidates offered; the walk is in key order (Volcano's is Go
map order). A pod without labels matches no budget and stays a candidate (Volcano v1.14 drops it from the victims
instead, a slip in its port of kube's loop).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from vcore.batch.plugins.base import Candidate, JobPlugin, Preemptor


class PdbPlugin(JobPlugin):
    name = "pdb"
    parts = frozenset({"preemptable", "reclaimable"})

    def preemptable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        by_node: dict[int, list[Candidate]] = defaultdict(list)
        for c in sorted(candidates, key=lambda c: c.key):
            by_node[self.ssn.state.pod_node(c.key)].append(c)
        keep: set[str] = set()
        for on_node in by_node.values():
            violating = self.ssn.state.pdb_violating([c.key for c in on_node])
            keep.update(c.key for c, bad in zip(on_node, violating, strict=True) if not bad)
        return [c for c in candidates if c.key in keep]

    def reclaimable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        return self.preemptable(preemptor, candidates)
