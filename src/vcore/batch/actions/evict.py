"""preempt and reclaim: evict running pods so that a starving job can run.

preempt works inside a queue: a job that allocate could not satisfy may evict pods of lower-priority jobs of the
same queue. reclaim works across queues: a queue the share plugin lets take more (below its deserved share) may
evict pods of reclaimable queues the plugin marks as above theirs. Both choose nodes and victims with the native
search (kube-scheduler's minimal-victim rule), never take a pod of the system-critical classes or kube-system
(the conformance plugin), and never leave another gang below its minMember: a gang's pods are victims only
while it keeps its minimum, or all of them together when nothing less frees a node. Each job is one Statement:
evictions happen only if every task its minimum needs found a node; its tasks then wait (nominated) for the
victims to go and bind in a later cycle. Jobs with a hard network topology constraint do not preempt (as in
Volcano: the victims' nodes would have to lie in one domain). With the ``pdb`` plugin, pods a PodDisruptionBudget
protects are no victims (vcore.batch.disruption).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable

import numpy as np

from vcore.batch import config as C, disruption
from vcore.batch.actions.allocate import task_order
from vcore.batch.amounts import summed
from vcore.batch.job import Job
from vcore.batch.podgroup import PENDING
from vcore.batch.pods import PodInfo
from vcore.batch.priority import SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL
from vcore.batch.session import Session
from vcore.batch.shares.base import Claim
from vcore.batch.statement import Statement

PREEMPT_REASON, RECLAIM_REASON = "preempt", "reclaim"


def preempt(ssn: Session) -> None:
    for job in _starving(ssn):
        ssn.isolated([job], functools.partial(_preempt_for, ssn, job))
        ssn.interleave()


def reclaim(ssn: Session) -> None:
    for job in _starving(ssn):
        ssn.isolated([job], functools.partial(_reclaim_for, ssn, job))
        ssn.interleave()


def _preempt_for(ssn: Session, job: Job) -> None:
    _evict_for(ssn, job, PREEMPT_REASON,
               lambda victim_job: victim_job.queue == job.queue and victim_job.priority < job.priority)


def _reclaim_for(ssn: Session, job: Job) -> None:
    if ssn.share is not None and not ssn.share.preemptive(job.queue, _minimum_vector(ssn, job)):
        return
    _evict_for(ssn, job, RECLAIM_REASON, lambda victim_job: victim_job.queue != job.queue
               and ssn.batch.queues.get(victim_job.queue).reclaimable)


def _starving(ssn: Session) -> list[Job]:
    """Jobs below their minimum after allocate that may preempt, in queue then job order."""
    gated = C.ENQUEUE in ssn.config.actions
    jobs = [j for j in ssn.jobs.values()
            if j.invalid is None and j.pending and not j.skipped and j.can_preempt and not j.best_effort and not j.ready
            and not j.pipelined_ready and not (gated and j.phase == PENDING and j.podgroup is not None)
            and not any(t.key in ssn.batch.nominated for t in j.pending)
            and not ssn.topology.hard(j)]  # Volcano does not preempt for hard network-topology jobs
    order = {q: i for i, q in enumerate(_queue_sequence(ssn, {j.queue for j in jobs}))}
    return sorted(jobs, key=lambda j: (order[j.queue], ssn.job_order_key(j)))


def _queue_sequence(ssn: Session, queues: set[str]) -> list[str]:
    out, left = [], sorted(queues)
    while left:
        q = ssn.queue_order(left)
        out.append(q)
        left.remove(q)
    return out


def _minimum_vector(ssn: Session, job: Job) -> np.ndarray:
    tasks = task_order(job)[0]
    need = max(job.min_member - job.ready_count, 1)
    return summed([ssn.pod_vector(t) for t in tasks[:need]], np.zeros(ssn.n_resources, np.int64))


def _critical(ssn: Session, key: str) -> bool:
    info = ssn.batch.pods[key]
    return info.namespace == "kube-system" or info.priority_class in (SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL)


def _evict_for(ssn: Session, job: Job, reason: str, eligible_job: Callable[[Job], bool]) -> None:
    # Running pods of eligible jobs; a gang's pods only while it keeps its minimum (per job, how many may go).
    owners: dict[str, Job] = {}
    spare: Counter[str] = Counter()
    for other in ssn.running_jobs():
        if other is job or not eligible_job(other):
            continue
        spare[other.key] = max(other.ready_count - other.min_member, 0)
        for key in other.running:
            if key not in ssn.batch.releasing and not _critical(ssn, key):
                owners[key] = other
    budgets = ssn.config.plugin(disruption.PLUGIN)
    if owners and budgets is not None and budgets.enabled(
            disruption.RECLAIMABLE if reason == RECLAIM_REASON else disruption.PREEMPTABLE):
        allowed_by_budgets = disruption.within_budgets(ssn.state, owners)
        owners = {k: owners[k] for k in owners if k in allowed_by_budgets}
    if reason == RECLAIM_REASON and ssn.share is not None and owners:
        keys = sorted(owners)
        claims = [Claim(owners[k].queue, ssn.pod_vector(ssn.batch.pods[k]), owners[k].priority)
                  for k in keys]
        allowed = set(ssn.share.reclaimable(Claim(job.queue, _minimum_vector(ssn, job), job.priority), claims))
        owners = {k: owners[k] for i, k in enumerate(keys) if i in allowed}
    if not owners:
        return
    stmt = Statement(ssn)
    tasks = task_order(job)[0]
    taken: Counter[str] = Counter()
    piped_roles: Counter[str] = Counter()

    def satisfied() -> bool:  # Volcano's JobPipelined, with each role's minimum
        return job.pipelined_ready and all(job.role_ready.get(r, 0) + piped_roles[r] >= n
                                           for r, n in job.min_task.items())

    try:
        for task in tasks:
            if satisfied():
                break
            choice = _choose(ssn, task, owners, spare, taken, stmt.evicted)
            if choice is None:
                break
            slot, victims = choice
            for key in victims:
                taken[owners[key].key] += 1
                stmt.evict(key, reason, task.key)
            stmt.pipeline(task, slot)
            job.pipelined += 1
            piped_roles[task.role] += 1
    except BaseException:  # nothing tentative may outlive the job's attempt
        stmt.discard()
        job.pipelined = 0
        raise
    if job.pipelined and satisfied():
        evictions = stmt.commit()
        for e in evictions:
            victim_job = owners[e.victim]
            victim_job.running.remove(e.victim)
            victim_job.releasing += 1
            vec = ssn.pod_vector(ssn.batch.pods[e.victim])
            victim_job.allocated -= vec
            if ssn.share is not None:
                ssn.share.on_deallocate(victim_job.queue, vec)
        ssn.result.evictions.extend(evictions)
        job.fit_error = (f"waiting for {len(evictions)} evicted pod(s) to release their resources"
                         if evictions else job.fit_error)
    else:
        stmt.discard()
        job.pipelined = 0


def _choose(ssn: Session, task: PodInfo, owners: dict[str, Job], spare: Counter[str], taken: Counter[str],
            gone: set[str]) -> tuple[int, list[str]] | None:
    """(slot, victims) for one task: first among pods whose gangs keep their minimum, then allowing a whole
    gang to go (all of its running pods); None when no node can be freed for it."""
    free_first = [(k, owners[k].priority) for k in owners
                  if k not in gone and taken[owners[k].key] < spare[owners[k].key]]
    for candidates, whole in ((free_first, False), ([(k, owners[k].priority) for k in owners if k not in gone], True)):
        if not candidates:
            continue
        assert task.compiled is not None, "the session compiles every pending pod"
        slot, victims = ssn.engine.find_victims(task.compiled, candidates)
        if slot < 0:
            continue
        over = {owners[k].key for k in victims} if whole else set()
        over = {g for g in over if Counter(owners[k].key for k in victims)[g] + taken[g] > spare[g]}
        if over:  # a gang would drop below its minimum: it goes whole
            victims = sorted(set(victims) | {k for k in owners if owners[k].key in over and k not in gone})
        return slot, victims
    return None
