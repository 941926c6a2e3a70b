"""Volcano's drf plugin (plugins/drf/drf.go), dominant resource fairness between jobs.

* job_order: the job's dominant share (its largest share of any resource the cluster has), lower first;
* preemptable: a task whose job, without it, still holds at least the dominant share the preemptor's job would hold
  with the preemptor (within Volcano's 1e-6), each victim of a job lowering that job's share for the next.

enableHierarchy (hierarchical DRF over namespace hierarchies, Volcano's queue order and reclaim for it) is accepted
and not implemented: the plugin then orders and preempts as without it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vcore.batch.job import Job
from vcore.batch.plugins.base import Candidate, JobPlugin, PluginSession, Preemptor

SHARE_DELTA = 0.000001  # Volcano's shareDelta


class DrfPlugin(JobPlugin):
    name = "drf"
    parts = frozenset({"job_order", "preemptable"})

    def open(self, ssn: PluginSession) -> None:
        super().open(ssn)
        self._counted = ssn.total > 0
        self._total = ssn.total[self._counted].astype(np.float64)

    def share(self, allocated: np.ndarray) -> float:
        """The dominant share of an allocation."""
        if not self._total.size:
            return 0.0
        return float(np.max(allocated[self._counted] / self._total))

    def job_order_key(self, job: Job) -> float:
        if not job.running and not job.placed:  # nothing allocated: share 0 (most jobs, when a cycle opens)
            return 0.0
        return self.share(job.allocated)

    def preemptable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        mine = self.share(preemptor.job.allocated + preemptor.request)
        allocations: dict[str, np.ndarray] = {}
        victims = []
        for c in candidates:
            left = allocations.get(c.job.key)
            if left is None:
                left = allocations[c.job.key] = c.job.allocated.copy()
            left -= c.request
            theirs = self.share(left)
            if mine < theirs or abs(mine - theirs) <= SHARE_DELTA:
                victims.append(c)
        return victims
