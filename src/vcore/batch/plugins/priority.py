"""Volcano's priority plugin (plugins/priority/priority.go): higher priority first, and only lower priority yields.

* job_order: the job's priority (its PodGroup's priority class), higher first; task_order: the task's priority;
* preemptable: a task of another job whose job priority is lower than the preemptor's job, or a task of the
  preemptor's own job whose task priority is lower than the preemptor's;
* job_starving: fewer ready and waiting tasks than the job has tasks.
"""

from __future__ import annotations

from collections.abc import Sequence

from vcore.batch.job import Job
from vcore.batch.plugins.base import Candidate, JobPlugin, Preemptor
from vcore.batch.pods import PodInfo


class PriorityPlugin(JobPlugin):
    name = "priority"
    parts = frozenset({"job_order", "task_order", "preemptable", "job_starving"})

    def job_order_key(self, job: Job) -> int:
        return -job.priority

    def task_order_key(self, task: PodInfo) -> int:
        return -self.ssn.pod_priority(task)

    def preemptable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        own = preemptor.job
        return [
            c
            for c in candidates
            if (c.priority < preemptor.priority if c.job is own else c.job.priority < own.priority)
        ]

    def job_starving(self, job: Job) -> bool:
        return job.ready_count + job.pipelined < job.n_tasks
