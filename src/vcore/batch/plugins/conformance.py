"""Volcano's conformance plugin (plugins/conformance/conformance.go): pods of the system-critical priority classes and
of the kube-system namespace are never preempted or reclaimed."""

from __future__ import annotations

from collections.abc import Sequence

from vcore.batch.plugins.base import Candidate, JobPlugin, Preemptor
from vcore.batch.priority import SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL

KUBE_SYSTEM = "kube-system"
_CRITICAL = (SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL)


class ConformancePlugin(JobPlugin):
    name = "conformance"
    parts = frozenset({"preemptable", "reclaimable"})

    def preemptable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        return [c for c in candidates if c.info.namespace != KUBE_SYSTEM and c.info.priority_class not in _CRITICAL]

    def reclaimable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        return self.preemptable(preemptor, candidates)
