"""Volcano's overcommit plugin (plugins/overcommit/overcommit.go): the cluster admits jobs up to
``overcommit-factor`` (default 1.2) times its allocatable.

At session open: idle = factor x allocatable - what is bound; admitted = the minResources of the Inqueue jobs plus,
for Running jobs at their minimum, the part of minResources not allocated yet. job_enqueueable permits a job without
minResources, and one whose minResources fits idle - admitted on every resource it names; job_enqueued adds an
admitted job's minResources.
"""

from __future__ import annotations

import math

from vcore.batch.config import DEFAULT_OVERCOMMIT_FACTOR
from vcore.batch.job import Job
from vcore.batch.plugins.base import PERMIT, REJECT, JobPlugin, PluginSession
from vcore.batch.podgroup import INQUEUE, RUNNING


class OvercommitPlugin(JobPlugin):
    name = "overcommit"
    parts = frozenset({"job_enqueueable", "job_enqueued"})

    @property
    def factor(self) -> float:
        return float(self.arguments.get("overcommit-factor", DEFAULT_OVERCOMMIT_FACTOR))

    def open(self, ssn: PluginSession) -> None:
        super().open(ssn)
        factor = self.factor
        # Python ints: a handful of axes, compared once per job (cheaper than numpy calls here; they never wrap).
        self.idle = [
            math.floor(t * factor) - u for t, u in zip(ssn.total.tolist(), ssn.state.requested_total().tolist())
        ]
        admitted = [0] * ssn.n_resources
        for job in ssn.jobs.values():
            if job.min_resources is None:
                continue
            if job.phase == INQUEUE:
                admitted = [a + m for a, m in zip(admitted, job.min_resources.tolist())]
            elif job.phase == RUNNING and len(job.running) >= job.min_member:
                waiting = [max(m - a, 0) for m, a in zip(job.min_resources.tolist(), job.allocated.tolist())]
                admitted = [a + w for a, w in zip(admitted, waiting)]
        self.admitted = admitted

    def job_enqueueable(self, job: Job) -> int:
        if job.min_resources is None:
            return PERMIT
        minimum = job.min_resources.tolist()
        short = [
            a for a, (m, used, idle) in enumerate(zip(minimum, self.admitted, self.idle)) if m > 0 and used + m > idle
        ]
        if not short:
            return PERMIT
        names = self.ssn.resources
        parts = ", ".join(f"{names[a]} {minimum[a]} > {max(self.idle[a] - self.admitted[a], 0)}" for a in short)
        if not job.fit_error:
            job.fit_error = (
                f"the cluster cannot admit the job's minResources: {parts} (overcommit-factor {self.factor})"
            )
        return REJECT

    def job_enqueued(self, job: Job) -> None:
        if job.min_resources is not None:
            self.admitted = [a + m for a, m in zip(self.admitted, job.min_resources.tolist())]
