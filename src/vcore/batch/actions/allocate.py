"""allocate and backfill: place admitted jobs, each in one native all-or-nothing call.

allocate serves queues in the share plugin's order (a queue the plugin says is overused is left for this
cycle), and in each queue jobs by the configured job order (priority, gang readiness, DRF share, creation). A
job's tasks go to the native gang placement with its minimums; the tasks that complete each role's minimum come
first. A job whose minimum cannot be met holds nothing afterwards. A quick check of the cluster's free totals
skips jobs that cannot fit anywhere before any per-node work. A job with a network topology constraint is
confined to the nodes and per-node counts the domain search chose (vcore.batch.topology_planner). backfill then places
the jobs made only of best-effort pods (no requests), which allocate leaves alone as Volcano does.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from vcore._native import _core
from vcore.batch import config as C
from vcore.batch.podgroup import PENDING
from vcore.batch.session import Job, Session
from vcore.reasons import fit_error_message, reason_counts
from vcore.volumes.store import rejection_lookup

KPLACED, KNOFIT, KHEADROOM = 1, 2, 3  # native TaskOutcome
SINGLES_PER_CALL = 4096  # pods without a group per native call (bounds one call's hold on the cluster's lock)
# With a caller waiting between jobs (a fast path), a run holds the cycle for a few milliseconds at most.
SINGLES_PER_CALL_INTERLEAVED = 128


def allocate(ssn: Session) -> None:
    _serve(ssn, lambda job: not job.best_effort, check_overused=True)


def backfill(ssn: Session) -> None:
    # Volcano's backfill asks no queue questions: best-effort pods take no share.
    _serve(ssn, lambda job: job.best_effort, check_overused=False)


def _serve(ssn: Session, wanted, *, check_overused: bool) -> None:
    gated = C.ENQUEUE in ssn.config.actions
    # Each queue's jobs in job order. A job's order key depends only on the job, which nothing changes while it
    # waits, so one stable sort per queue serves the jobs as a heap would, without a heap's comparisons per pop.
    waiting: dict[str, deque] = {}
    for queue, jobs in ssn.queue_jobs.items():
        chosen = [job for job in jobs if job.invalid is None and job.pending and not job.skipped and not (
            gated and job.phase == PENDING and job.podgroup is not None) and wanted(job)]
        if chosen:
            waiting[queue] = deque(sorted(chosen, key=ssn.job_order_key))
    while waiting:
        queue = ssn.queue_order(list(waiting))
        if check_overused and ssn.share is not None and ssn.share.overused(queue):
            for job in waiting.pop(queue):
                ssn.fail(job, f"queue {queue} is overused (at or above its deserved share)")
            continue
        jobs = waiting[queue]
        job = jobs.popleft()
        if len(waiting) == 1 and _plain(ssn, job):
            # One queue left: a run of pods without a group is placed in one native call, in job order. It is
            # what one call per pod would do: no other queue's turn comes between them, and the queue's headroom,
            # checked per pod, refuses exactly what an overused queue would.
            run = [job]
            limit = SINGLES_PER_CALL if ssn.between_jobs is None else SINGLES_PER_CALL_INTERLEAVED
            while jobs and len(run) < limit and _plain(ssn, jobs[0]):
                run.append(jobs.popleft())
            ssn.isolated(run, lambda: place_singles(ssn, run))
        else:
            ssn.isolated([job], lambda: place_job(ssn, job))
        ssn.interleave()
        if not jobs:
            del waiting[queue]


def _plain(ssn: Session, job: Job) -> bool:
    """A pod without a group and without a topology placement: kube-scheduler's pod-by-pod case."""
    return job.podgroup is None and len(job.pending) == 1 and ssn.topology.plan(job, job.pending, 1) is None


def place_singles(ssn: Session, jobs: list[Job]) -> None:
    """Pods without a group, in order, with kube-scheduler's per-pod sampling (Engine.schedule). A pod the
    cluster's free totals cannot hold is reported as a gang would be (_fits_in_total) and not tried."""
    jobs = [job for job in jobs if _fits_in_total(ssn, job, job.pending, 1)]
    if not jobs:
        return
    tasks = [job.pending[0] for job in jobs]
    headroom = ssn.share.headroom(jobs[0].queue) if ssn.share is not None else None
    nodes, reasons, gpus, over = ssn.engine.schedule([t.compiled for t in tasks], headroom)
    reason_names, n_nodes = _core.reason_names(ssn.state), ssn.state.n_nodes
    slots = nodes.tolist()
    placed = [i for i, n in enumerate(slots) if n >= 0]
    ssn.allocated_singles([jobs[i] for i in placed], [slots[i] for i in placed], [gpus[i] for i in placed])
    for i in np.flatnonzero(nodes < 0):
        if over[i]:
            ssn.fail(jobs[i], f"queue {jobs[i].queue} has no room left for the pod: {_shortfall(ssn, tasks[i], headroom)}")
        else:
            counts = reason_counts(reasons[i], reason_names, tasks[i].spec, rejection_lookup(ssn.state, tasks[i].key))
            ssn.fail(jobs[i], fit_error_message(n_nodes, counts), counts)


def task_order(job: Job) -> tuple[list, list[int] | None, list[int]]:
    """The job's pending tasks with each role's missing minimum first, each task's role index (None: all of one
    unconstrained role, when the job sets no role minimums), and per role how many placements its minimum still
    needs."""
    if not job.min_task:
        return job.pending, None, [0]
    roles = sorted({t.role for t in job.pending} | set(job.min_task))
    role_need = job.role_need(roles)
    left = dict(zip(roles, role_need))
    first, rest = [], []
    for t in job.pending:
        if left[t.role] > 0:
            left[t.role] -= 1
            first.append(t)
        else:
            rest.append(t)
    index = {r: i for i, r in enumerate(roles)}
    tasks = first + rest
    return tasks, [index[t.role] for t in tasks], role_need


def place_job(ssn: Session, job: Job, allowed: np.ndarray | None = None) -> bool:
    """Place a job's pending tasks, all or nothing up to its minimums; returns whether it is ready."""
    tasks, role_of, role_need = task_order(job)
    need = job.min_member - job.ready_count
    gang = need > 0 or any(n > 0 for n in role_need)
    if gang and not _fits_in_total(ssn, job, tasks, max(need, 0)):
        return False
    conf = ssn.topology.plan(job, tasks, need) if allowed is None else None
    if conf is not None and conf.refusal:
        ssn.fail(job, conf.refusal, conf.reasons)
        return False
    pending = tasks
    if conf is not None and conf.n_tasks is not None:  # the domain holds these; the rest wait
        tasks, role_of = tasks[:conf.n_tasks], None if role_of is None else role_of[:conf.n_tasks]
    headroom = ssn.share.headroom(job.queue) if ssn.share is not None and hasattr(ssn.share, "headroom") else None

    def attempt(allowed, cap=None, bonus=None):
        confined = {} if cap is None and bonus is None else {"cap": cap, "score_bonus": bonus}
        return ssn.engine.place_gang([t.compiled for t in tasks], role_of, role_need, need, headroom, allowed, gang,
                                     **confined)

    if conf is None:
        nodes, outcome, gpus, ready, first_unfit, reasons, _ = attempt(allowed)
    else:
        nodes, outcome, gpus, ready, first_unfit, reasons, _ = attempt(conf.allowed, conf.cap, conf.bonus)
        if not ready and gang and conf.soft:  # soft mode never fails for topology: unconfined, scored by it
            nodes, outcome, gpus, ready, first_unfit, reasons, _ = attempt(None, None, conf.fallback_bonus)
            conf = None
    slots = nodes.tolist()  # gpus: per task its devices, or None when no task took any
    if slots and min(slots) >= 0:  # every task found a node (the usual ready gang)
        placed, chosen, held, unplaced = tasks, slots, gpus, []
    else:
        placed = [t for t, n in zip(tasks, slots) if n >= 0]
        chosen = [n for n in slots if n >= 0]
        held = None if gpus is None else [g for g, n in zip(gpus, slots) if n >= 0]
        unplaced = [t for t, n in zip(tasks, slots) if n < 0]
    if placed:
        if conf is not None and conf.placement is not None:
            job.hypernode = conf.placement.domain
            if len(placed) == len(tasks):
                chosen, held = ssn.topology.arrange(conf, placed, chosen, [()] * len(placed) if held is None else held)
        ssn.allocated(job, placed, chosen, held, unplaced + pending[len(tasks):])
    ready = job.ready
    if not ready:  # what fitted before the gang was undone (Volcano's schedulable task count)
        job.tentative = int((outcome == KPLACED).sum())
    if len(placed) == len(tasks) < len(pending):
        ssn.fail(job, ssn.topology.shortfall(conf, len(pending)))
    elif len(placed) < len(tasks):
        if first_unfit >= 0:
            counts = reason_counts(reasons, _core.reason_names(ssn.state), tasks[first_unfit].spec,
                                   rejection_lookup(ssn.state, tasks[first_unfit].key))
            ssn.fail(job, fit_error_message(ssn.state.n_nodes, counts), counts)
        elif (outcome == KHEADROOM).any():
            ssn.fail(job, f"queue {job.queue} has no room left for the job's tasks (capability or quota reached)")
        else:
            ssn.fail(job, "the gang's minimum could not be met")
    return ready


def _shortfall(ssn: Session, task, headroom) -> str:
    vec = ssn.pod_vector(task)
    return ", ".join(f"{ssn.resources[a]} {int(vec[a])} asked, {int(headroom[a])} left" for a in range(len(vec))
                     if a < len(headroom) and vec[a] > headroom[a]) or "its requests exceed the queue's share"


def _fits_in_total(ssn: Session, job: Job, tasks: list, need: int) -> bool:
    """The cheapest test first: can the cluster's free totals hold the tasks the minimum needs at all? When they
    cannot, the message is kube-scheduler's for the first task if no node fits it, else the gang's shortfall."""
    minimum = ssn.pending_total(job, tasks[:need])
    for m, free in zip(minimum.tolist(), ssn.free.tolist()):  # a handful of axes: plain Python is cheapest
        if m > free:
            break
    else:
        return True
    short = np.flatnonzero(minimum > ssn.free)
    feasible, _, codes = ssn.engine.evaluate(tasks[0].compiled)
    if not feasible.any():
        counts = reason_counts(codes, _core.reason_names(ssn.state), tasks[0].spec,
                               rejection_lookup(ssn.state, tasks[0].key))
        ssn.fail(job, fit_error_message(ssn.state.n_nodes, counts), counts)
        return False
    parts = ", ".join(f"{ssn.resources[a]} {int(minimum[a])} > {max(int(ssn.free[a]), 0)} free"
                      for a in short)
    ssn.fail(job, f"0/{ssn.state.n_nodes} nodes are available for the whole gang: the cluster's free resources "
                  f"cannot hold its minimum ({parts}).")
    return False
