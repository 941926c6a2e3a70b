"""allocate and backfill: place admitted jobs (allocate: each in one native all-or-nothing call).

allocate serves queues in the plugins' queue order (a queue a plugin says is overused is left for this cycle),
and in each queue jobs by the plugins' job order (priority, gang readiness, DRF share, sla deadline, creation). A
job's tasks that request something go to the native gang placement with its minimums, within what the allocatable
plugins leave its queue (headroom); the tasks that complete each role's minimum come first. With a JobReady plugin
(gang), a job whose minimum cannot be met holds nothing afterwards; with none, whatever fits is kept, as Volcano
commits it. A quick check of the cluster's free totals skips jobs that cannot fit anywhere before any per-node work.
A job with a network topology constraint is confined to the nodes and per-node counts the domain search chose
(vcore.batch.topology_planner). Without an enqueue action, allocate admits Pending jobs itself, as Volcano's does.

backfill then places the best-effort tasks (no requests) of every admitted job, which allocate leaves alone, one by
one: queue by queue, job by job, task by task in their orders (Volcano's backfill).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Sequence

import numpy as np

from vcore._native import _core
from vcore.batch import config as C
from vcore.batch.job import Job
from vcore.batch.podgroup import INQUEUE, PENDING
from vcore.batch.pods import PodInfo, compiled_pods
from vcore.batch.session import Session
from vcore.batch.subjobs import place_with_subjobs, uses_subjobs
from vcore.reasons import fit_error_message, reason_counts
from vcore.types import HeldGpus
from vcore.volumes.store import rejection_lookup

KPLACED, KNOFIT, KHEADROOM = 1, 2, 3  # native TaskOutcome
SINGLES_PER_CALL = 4096  # pods without a group per native call (bounds one call's hold on the cluster's lock)
# With a caller waiting between jobs (a fast path), a run holds the cycle for a few milliseconds at most.
SINGLES_PER_CALL_INTERLEAVED = 128


def allocate(ssn: Session) -> None:
    gated = C.ENQUEUE in ssn.config.actions
    waiting: dict[str, list[Job]] = {}
    for queue, queued in ssn.queue_jobs.items():
        chosen = []
        for job in queued:
            if job.podgroup is not None and job.phase == PENDING:
                if gated:
                    continue
                job.phase = INQUEUE  # no enqueue action: allocate admits the job (Volcano's allocate does)
            if job.invalid is None and job.pending and not job.skipped and len(job.pending) > job.pending_best_effort:
                chosen.append(job)
        if chosen:
            waiting[queue] = chosen
    _serve(ssn, waiting)


def backfill(ssn: Session) -> None:
    """Volcano's backfill: every best-effort pending task of an admitted, valid job, placed on its own (it takes
    no share: no queue question is asked)."""
    by_queue: dict[str, list[Job]] = {}
    for queue, queued in ssn.queue_jobs.items():
        for job in queued:
            if (
                job.pending_best_effort
                and job.invalid is None
                and not job.skipped
                and not (job.podgroup is not None and job.phase == PENDING)
            ):
                by_queue.setdefault(queue, []).append(job)
    left = list(by_queue)
    while left:
        queue = ssn.queue_order(left)
        left.remove(queue)
        for job in sorted(by_queue[queue], key=ssn.job_order_key):
            tasks = [t for t in job.pending if t.best_effort]
            ssn.isolated([job], functools.partial(place_best_effort, ssn, job, tasks))
            ssn.interleave()


def place_best_effort(ssn: Session, job: Job, tasks: list[PodInfo]) -> None:
    """A job's best-effort tasks, each placed where it fits (kube-scheduler's per-pod rule), none waiting for
    another."""
    nodes, reasons, gpus, _ = ssn.engine.schedule(compiled_pods(tasks), None)
    slots = nodes.tolist()
    placed = [i for i, n in enumerate(slots) if n >= 0]
    if placed:
        bound = {tasks[i].key for i in placed}
        ssn.allocated(
            job,
            [tasks[i] for i in placed],
            [slots[i] for i in placed],
            [gpus[i] for i in placed],
            [t for t in job.pending if t.key not in bound],
        )
    missed = [i for i, n in enumerate(slots) if n < 0]
    if missed:
        i = missed[0]
        counts = reason_counts(
            reasons[i], _core.reason_names(ssn.state), tasks[i].spec, rejection_lookup(ssn.state, tasks[i].key)
        )
        ssn.fail(job, fit_error_message(ssn.state.n_nodes, counts), counts)


def _serve(ssn: Session, queued: dict[str, list[Job]]) -> None:
    fw = ssn.framework
    # Each queue's jobs in job order. A job's order key depends only on the job, which nothing changes while it
    # waits, so one stable sort per queue serves the jobs as a heap would, without a heap's comparisons per pop.
    waiting: dict[str, deque[Job]] = {
        queue: deque(sorted(jobs, key=ssn.job_order_key)) for queue, jobs in queued.items()
    }
    check_overused = fw.answers("overused")
    while waiting:
        queue = ssn.queue_order(list(waiting))
        if check_overused and fw.overused(queue):
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
            ssn.isolated(run, functools.partial(place_singles, ssn, run))
        else:
            ssn.isolated([job], functools.partial(place_job, ssn, job))
        ssn.interleave()
        if not jobs:
            del waiting[queue]


def _plain(ssn: Session, job: Job) -> bool:
    """A pod without a group and without a topology placement: kube-scheduler's pod-by-pod case."""
    return (
        job.podgroup is None
        and len(job.pending) == 1
        and not job.pending_best_effort
        and ssn.topology.plan(job, job.pending, 1) is None
    )


def place_singles(ssn: Session, jobs: list[Job]) -> None:
    """Pods without a group, in order, with kube-scheduler's per-pod sampling (Engine.schedule). A pod the
    cluster's free totals cannot hold is reported as a gang would be (_fits_in_total) and not tried."""
    jobs = [job for job in jobs if _fits_in_total(ssn, job, job.pending, 1)]
    if not jobs:
        return
    tasks = [job.pending[0] for job in jobs]
    headroom = ssn.framework.headroom(jobs[0].queue)
    nodes, reasons, gpus, over = ssn.engine.schedule(compiled_pods(tasks), headroom)
    reason_names, n_nodes = _core.reason_names(ssn.state), ssn.state.n_nodes
    slots = nodes.tolist()
    placed = [i for i, n in enumerate(slots) if n >= 0]
    ssn.allocated_singles([jobs[i] for i in placed], [slots[i] for i in placed], [gpus[i] for i in placed])
    for i in np.flatnonzero(nodes < 0):
        if over[i] and headroom is not None and not _fits_no_node(ssn, jobs[i], tasks[i]):
            # only a queue's headroom refuses a pod untried (a pod no node holds is told so, as kube-scheduler would)
            shortfall = _shortfall(ssn, tasks[i], headroom)
            ssn.fail(jobs[i], f"queue {jobs[i].queue} has no room left for the pod: {shortfall}")
        elif not over[i] or headroom is None:
            counts = reason_counts(reasons[i], reason_names, tasks[i].spec, rejection_lookup(ssn.state, tasks[i].key))
            ssn.fail(jobs[i], fit_error_message(n_nodes, counts), counts)


def task_order(job: Job, pending: list[PodInfo] | None = None) -> tuple[list[PodInfo], list[int] | None, list[int]]:
    """The job's pending tasks that request something (or ``pending``) with each role's missing minimum first, each
    task's role index (None: all of one unconstrained role, when no role minimum binds the job), and per role how
    many placements its minimum still needs."""
    if pending is None:
        pending = job.regular_pending()
    if not job.roles_checked:
        return pending, None, [0]
    roles = sorted({t.role for t in pending} | set(job.min_task))
    role_need = job.role_need(roles)
    left = dict(zip(roles, role_need))
    first: list[PodInfo] = []
    rest: list[PodInfo] = []
    for t in pending:
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
    if allowed is None and uses_subjobs(job):
        return place_with_subjobs(ssn, job)
    tasks, role_of, role_need = task_order(job)
    need = job.min_member - job.ready_count - job.pending_best_effort  # best-effort tasks count (IsReady)
    if not ssn.framework.answers("job_ready"):  # no JobReady plugin: whatever fits is committed
        need, role_need = 0, [0] * len(role_need)
    gang = need > 0 or any(n > 0 for n in role_need)
    if gang and not _fits_in_total(ssn, job, tasks, max(need, 0)):
        return False
    conf = ssn.topology.plan(job, tasks, need) if allowed is None else None
    pending, pending_roles = tasks, role_of
    headroom = ssn.framework.headroom(job.queue)

    def attempt(
        allowed: np.ndarray | None, cap: np.ndarray | None = None, bonus: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, list[HeldGpus] | None, bool, int, np.ndarray, int]:
        # all positional: pybind11 reads keyword arguments about a microsecond slower a call
        compiled = compiled_pods(tasks)
        return ssn.engine.place_gang(compiled, role_of, role_need, need, headroom, allowed, gang, cap, bonus)

    while True:
        if conf is not None and conf.refusal:
            ssn.fail(job, conf.refusal, conf.reasons)
            return False
        if conf is not None and conf.n_tasks is not None:  # the domain holds these; the rest wait
            n = conf.n_tasks
            tasks, role_of = pending[:n], None if pending_roles is None else pending_roles[:n]
        if conf is None:
            nodes, outcome, gpus, ready, first_unfit, reasons, _ = attempt(allowed, None, ssn.node_bonus(job.queue))
        else:
            bonus = ssn.node_bonus(job.queue, conf.bonus)
            nodes, outcome, gpus, ready, first_unfit, reasons, _ = attempt(conf.allowed, conf.cap, bonus)
        if ready or conf is None or conf.retry is None:
            break
        conf = conf.retry()  # the gang fell short in a trial domain (all undone): the planner's next choice
    planned = conf  # the confinement the tasks were cut to, kept when a soft one falls back to no confinement
    if conf is not None and not ready and gang and conf.soft:  # soft mode never fails for topology: unconfined
        bonus = ssn.node_bonus(job.queue, conf.fallback_bonus)
        nodes, outcome, gpus, ready, first_unfit, reasons, _ = attempt(None, None, bonus)
        conf = None
    slots = nodes.tolist()  # gpus: per task its devices, or None when no task took any
    held: Sequence[HeldGpus] | None
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
        others = [t for t in job.pending if t.best_effort] if job.pending_best_effort else []
        ssn.allocated(job, placed, chosen, held, unplaced + pending[len(tasks) :] + others)
    ready = job.ready
    if not ready:  # what fitted before the gang was undone (Volcano's schedulable task count)
        job.tentative = int((outcome == KPLACED).sum())
    if planned is not None and len(placed) == len(tasks) < len(pending):  # only a confinement cuts the tasks
        ssn.fail(job, ssn.topology.shortfall(planned, len(pending)))
    elif len(placed) < len(tasks):
        if first_unfit >= 0:
            counts = reason_counts(
                reasons,
                _core.reason_names(ssn.state),
                tasks[first_unfit].spec,
                rejection_lookup(ssn.state, tasks[first_unfit].key),
            )
            ssn.fail(job, fit_error_message(ssn.state.n_nodes, counts), counts)
        elif (outcome == KHEADROOM).any():
            refused = tasks[int(np.flatnonzero(outcome == KHEADROOM)[0])]
            if not _fits_no_node(ssn, job, refused):  # else the fit message is given: the cluster is simply full
                ssn.fail(job, f"queue {job.queue} has no room left for the job's tasks (capability or quota reached)")
        else:
            ssn.fail(job, "the gang's minimum could not be met")
    return ready


def _fits_no_node(ssn: Session, job: Job, task: PodInfo) -> bool:
    """When a task the queue's headroom refused fits no node at all, fail the job with kube-scheduler's message
    (what is short on the nodes) and say True: a full cluster is not the queue's limit."""
    pod = compiled_pods([task])[0]
    if ssn.engine.fits_somewhere(pod):
        return False
    _, _, codes = ssn.engine.evaluate(pod)  # every node's reasons, for the message
    counts = reason_counts(codes, _core.reason_names(ssn.state), task.spec, rejection_lookup(ssn.state, task.key))
    ssn.fail(job, fit_error_message(ssn.state.n_nodes, counts), counts)
    return True


def _shortfall(ssn: Session, task: PodInfo, headroom: np.ndarray) -> str:
    vec = ssn.pod_vector(task)
    return (
        ", ".join(
            f"{ssn.resources[a]} {int(vec[a])} asked, {int(headroom[a])} left"
            for a in range(len(vec))
            if a < len(headroom) and vec[a] > headroom[a]
        )
        or "its requests exceed the queue's share"
    )


def _fits_in_total(ssn: Session, job: Job, tasks: list[PodInfo], need: int) -> bool:
    """The cheapest test first: can the cluster's free totals hold the tasks the minimum needs at all? When they
    cannot, the message is kube-scheduler's for the first task if no node fits it, else the gang's shortfall."""
    minimum = ssn.pending_total(job, tasks if need >= len(tasks) else tasks[:need])
    for m, free in zip(minimum.tolist(), ssn.free.tolist()):  # a handful of axes: plain Python is cheapest
        if m > free:
            break
    else:
        return True
    short = np.flatnonzero(minimum > ssn.free)
    first = compiled_pods(tasks[:1])[0]
    if not ssn.engine.fits_somewhere(first):
        _, _, codes = ssn.engine.evaluate(first)  # every node's reasons, for the message
        counts = reason_counts(
            codes, _core.reason_names(ssn.state), tasks[0].spec, rejection_lookup(ssn.state, tasks[0].key)
        )
        ssn.fail(job, fit_error_message(ssn.state.n_nodes, counts), counts)
        return False
    parts = ", ".join(f"{ssn.resources[a]} {int(minimum[a])} > {max(int(ssn.free[a]), 0)} free" for a in short)
    ssn.fail(
        job,
        f"0/{ssn.state.n_nodes} nodes are available for the whole gang: the cluster's free resources "
        f"cannot hold its minimum ({parts}).",
    )
    return False
