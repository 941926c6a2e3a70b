"""enqueue: admit Pending PodGroups (Pending -> Inqueue), as Volcano's enqueue action.

Queues are served in queue order (nothing enqueue does moves it: Volcano's turns of one job per queue serve each
queue to its end), their Pending jobs in job order. A job without minResources
is admitted; one with minResources when the plugins' JobEnqueueable votes let it (overcommit: the cluster's
overcommitted room; the queue-share plugins: the queue's bound; sla: a job past its waiting time), after which
JobEnqueued tells them. Like Volcano, admission asks nothing of the job's pods: a PodGroup whose pods do not exist
yet is admitted on its minResources (its controller creates the pods once it is Inqueue). Allocate only places
admitted jobs.
"""

from __future__ import annotations

from vcore.batch.job import Job
from vcore.batch.podgroup import INQUEUE, PENDING
from vcore.batch.session import Session


def enqueue(ssn: Session) -> None:
    fw = ssn.framework
    queues = ssn.batch.queues
    by_queue: dict[str, list[Job]] = {}
    for job in ssn.jobs.values():
        if job.phase != PENDING or job.podgroup is None or job.queue not in queues:
            continue
        if not queues.get(job.queue).is_open:  # refused at open (its condition says so)
            continue
        by_queue.setdefault(job.queue, []).append(job)
    left = list(by_queue)
    while left:
        queue = ssn.queue_order(left)
        left.remove(queue)
        for i, job in enumerate(sorted(by_queue[queue], key=ssn.job_order_key)):
            ssn.interleave_at(i)
            if job.min_resources is None or fw.job_enqueueable(job):
                fw.job_enqueued(job)
                job.phase = INQUEUE
                job.enqueued = True
                ssn.result.enqueued.append(job.key)
