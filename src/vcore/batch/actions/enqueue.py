"""enqueue: admit Pending jobs (Pending -> Inqueue) whose minResources the queue and the cluster can take.

Volcano's overcommit plugin lets the cluster admit up to ``overcommit-factor`` (1.2) times its allocatable,
minus what is bound and what admitted jobs still wait for; the queue-share plugin votes with its own bound. A job
without minResources is always admitted. Allocate only places admitted jobs.

A job that lacks pods for its gang is admitted all the same (Volcano's enqueue does not ask JobValid): its
controller creates the pods only once the PodGroup is Inqueue, so a PodGroup with no pods yet must get there.
"""

from __future__ import annotations

import math

import numpy as np

from vcore.batch.job import Job
from vcore.batch.podgroup import INQUEUE, PENDING
from vcore.batch.session import NOT_ENOUGH_PODS, NOT_ENOUGH_PODS_OF_TASK, Session
from vcore.batch.shares.base import REJECT

# What makes a job invalid only until its controller creates its pods (not a missing or closed queue).
_LACKS_PODS = (NOT_ENOUGH_PODS, NOT_ENOUGH_PODS_OF_TASK)


def enqueue(ssn: Session) -> None:
    factor = ssn.config.overcommit_factor
    idle = None
    if factor:
        # Python ints (a handful of axes, compared once per job: cheaper than numpy calls here, and never wrap).
        idle = [math.floor(t * factor) - u for t, u in zip(ssn.total.tolist(), ssn.state.requested_total().tolist())]
        # What admitted jobs still wait for counts as taken (Volcano's inqueue resources).
        for job in ssn.jobs.values():
            if job.phase == INQUEUE and job.min_resources is not None:
                waiting = np.maximum(job.min_resources - job.allocated, 0).tolist()
                idle = [i - w for i, w in zip(idle, waiting)]
    pending = [j for j in ssn.jobs.values() if j.phase == PENDING and j.podgroup is not None and (
        j.invalid is None or j.invalid[0] in _LACKS_PODS)]
    by_queue: dict[str, list[Job]] = {}
    for job in pending:
        by_queue.setdefault(job.queue, []).append(job)
    queues = list(by_queue)
    while queues:
        queue = ssn.queue_order(queues)
        queues.remove(queue)
        for i, job in enumerate(sorted(by_queue[queue], key=ssn.job_order_key)):
            ssn.interleave_at(i)
            if job.min_resources is not None:
                minimum = job.min_resources.tolist()
                if idle is not None and any(0 < m and free < m for m, free in zip(minimum, idle)):
                    job.fit_error = ("the cluster cannot admit the job's minResources: "
                                     f"{_shortfall(ssn, minimum, idle)} (overcommit-factor {factor})")
                    continue
                if ssn.share is not None and ssn.share.job_enqueueable(queue, job.min_resources) == REJECT:
                    job.fit_error = f"queue {queue} cannot admit the job's minResources now"
                    continue
                if idle is not None:
                    idle = [free - m for free, m in zip(idle, minimum)]
                if ssn.share is not None:
                    ssn.share.on_job_enqueued(queue, job.min_resources)
            job.phase = INQUEUE


def _shortfall(ssn: Session, need: list[int], idle: list[int]) -> str:
    return ", ".join(f"{ssn.resources[a]} {m} > {max(free, 0)}" for a, (m, free) in enumerate(zip(need, idle))
                     if 0 < m and free < m)

