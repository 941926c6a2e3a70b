"""The queue-share plugins (:mod:`vcore.batch.shares`: proportion, capacity, hierarchy, cohort) as job plugins of the
cycle: each share plugin's hooks become the parts it registers, its queues' usage is read once per cycle.

Volcano's proportion and capacity add an admitted job's minResources to their queue's inqueue inside their
JobEnqueueable function (so a permit counts even when a later plugin of the tier rejects); vcore's hierarchy and
cohort plugins record it when the job is admitted (job_enqueued).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vcore.batch.amounts import summed, vector
from vcore.batch.job import Job
from vcore.batch.plugins.base import PERMIT, Candidate, JobPlugin, PluginSession, Preemptor
from vcore.batch.podgroup import INQUEUE, RUNNING
from vcore.batch.shares import SHARE_PLUGINS, names
from vcore.batch.shares.base import Claim, QueueShare, QueueUsage, SharePlugin

# share plugin hook -> the part it is
_PARTS = {
    "queue_order": "queue_order",
    "overused": "overused",
    "allocatable": "allocatable",
    "job_enqueueable": "job_enqueueable",
    "preemptive": "preemptive",
    "reclaimable": "reclaimable",
    "victim_queue_order": "victim_queue_order",
}
_RECORDS_AT_VOTE = (names.PROPORTION, names.CAPACITY)


class QueueSharePlugin(JobPlugin):
    """One configured queue-share plugin."""

    def __init__(
        self, name: str, arguments: dict[str, Any] | None = None, path: str = "", hierarchy: bool = False
    ) -> None:
        self.name = name  # type: ignore[misc]  # per instance: the share plugin's name
        super().__init__(arguments, path)
        self.share: SharePlugin[Any] = SHARE_PLUGINS[name](arguments, hierarchy=hierarchy)
        parts = {_PARTS[h] for h in self.share.hooks if h in _PARTS}
        if name not in _RECORDS_AT_VOTE and "job_enqueueable" in parts:
            parts.add("job_enqueued")
        self.parts = frozenset(parts)  # type: ignore[misc]  # per instance: what this share plugin registers
        self.queue_key = getattr(self.share, "queue_key", None)

    def open(self, ssn: PluginSession) -> None:
        super().open(ssn)
        self.share.open(ssn.batch.queues, ssn.resources, ssn.total, queue_usage(ssn))

    def queue_hook(self, part: str) -> Callable[[str], Any]:
        hook: Callable[[str], Any] = getattr(self.share, part)  # the parts of one queue pass through unchanged
        return hook

    # -- parts -----------------------------------------------------------------------------------------------
    def queue_order(self, left: str, right: str) -> int:
        return self.share.queue_order(left, right)

    def victim_queue_order(self, left: str, right: str, preemptor: str) -> int:
        return self.share.victim_queue_order(left, right, preemptor)

    def overused(self, queue: str) -> bool:
        return self.share.overused(queue)

    def allocatable(self, queue: str, request: np.ndarray) -> bool:
        return self.share.allocatable(queue, request)

    def headroom(self, queue: str) -> np.ndarray | None:
        return self.share.headroom(queue)

    def preemptive(self, queue: str, request: np.ndarray) -> bool:
        return self.share.preemptive(queue, request)

    def job_enqueueable(self, job: Job) -> int:
        vote = self.share.job_enqueueable(job.queue, job.min_resources)
        if vote == PERMIT and self.name in _RECORDS_AT_VOTE and job.min_resources is not None:
            self.share.on_job_enqueued(job.queue, job.min_resources)
        elif vote < 0 and not job.fit_error:
            job.fit_error = f"queue {job.queue} cannot admit the job's minResources now ({self.name})"
        return vote

    def job_enqueued(self, job: Job) -> None:
        self.share.on_job_enqueued(job.queue, job.min_resources)

    def reclaimable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        claims = [Claim(c.job.queue, c.request, c.job.priority) for c in candidates]
        chosen = self.share.reclaimable(Claim(preemptor.job.queue, preemptor.request, preemptor.job.priority), claims)
        return [candidates[i] for i in chosen]

    def on_allocate(self, job: Job, request: np.ndarray) -> None:
        self.share.on_allocate(job.queue, request)

    def on_deallocate(self, job: Job, request: np.ndarray) -> None:
        self.share.on_deallocate(job.queue, request)

    def status(self) -> dict[str, QueueShare]:
        return self.share.status()


def queue_usage(ssn: PluginSession) -> dict[str, QueueUsage]:
    """What each queue with jobs holds and asks for as the cycle opens (read once, whatever plugins share it)."""
    if ssn.opened_usage is not None:
        return ssn.opened_usage
    usage = {}
    for queue in set(ssn.queue_jobs) | set(ssn.single_usage):
        if queue not in ssn.batch.queues:
            continue
        jobs = ssn.queue_jobs.get(queue, [])
        singles = vector(ssn.single_usage.get(queue, [0] * ssn.n_resources))
        allocated = summed([j.allocated for j in jobs], singles)
        request = summed([j.request for j in jobs], singles)
        waiting, beyond = [], []  # per job with minResources: what admission holds for it, what it uses past it
        for j in jobs:
            if j.min_resources is None:
                continue
            if j.phase == INQUEUE:
                waiting.append(j.min_resources)
            elif j.phase == RUNNING:
                waiting.append(np.maximum(j.min_resources - j.allocated, 0))
                beyond.append(np.maximum(j.allocated - j.min_resources, 0))
        zero = np.zeros(ssn.n_resources, np.int64)
        usage[queue] = QueueUsage(allocated, request, summed(waiting, zero), summed(beyond, zero))
    ssn.opened_usage = usage
    return usage
