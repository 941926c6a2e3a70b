"""One scheduling cycle's view of the cluster: jobs (gangs) with their tasks, queues, the configured job plugins
(:class:`vcore.batch.plugins.Framework`, Volcano's session functions) and what the actions decide (Volcano's
session).

A job is a PodGroup with its pods, or a pod without a group (a gang of one). The session compiles the pending
tasks once, keeps per job what is allocated (telling the plugins, as Volcano's event handlers), and records what
the actions decide; ``close`` turns that into PodGroup phases and conditions the way Volcano's session close does.
A pod with a deletionTimestamp is Releasing: it holds its node's resources until it is gone, does not count toward
its gang, and is never scheduled again.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from vcore._native import _core
from vcore._native._records import placements
from vcore.batch import config as C, nodegroups
from vcore.batch.amounts import summed, vector
from vcore.batch.job import Job
from vcore.batch.plugins import Framework
from vcore.batch.podgroup import DEFAULT_QUEUE, INQUEUE, PENDING, RUNNING, UNKNOWN, PodGroupSpec
from vcore.batch.pods import PodInfo
from vcore.batch.priority import PREEMPT_NEVER
from vcore.batch.result import CycleResult, Event, PodGroupStatus, QueueStatus
from vcore.batch.room import Room
from vcore.batch.shares.base import QueueUsage
from vcore.batch.topology_planner import TopologyPlanner
from vcore.cluster import Cluster, gpu_choice
from vcore.types import GpuChoice, HeldGpus, Placement
from vcore.volumes.store import with_volume_binds

# Volcano's PodGroup condition types and reasons.
UNSCHEDULABLE_TYPE, SCHEDULED_TYPE = "Unschedulable", "Scheduled"
NOT_ENOUGH_RESOURCES, NOT_ENOUGH_PODS, NOT_ENOUGH_PODS_OF_TASK = (
    "NotEnoughResources",
    "NotEnoughPods",
    "NotEnoughPodsOfTask",
)
SCHEDULED_REASON = "tasks in gang are ready to be scheduled"
# Opening and closing a session walk every job: a run_cycle caller waiting between jobs gets a turn this often.
INTERLEAVE_EVERY = 64
# Placements made at close per turn of that caller (about half a millisecond of work).
PLACEMENTS_PER_TURN = 4096
_shape, _role = attrgetter("shape"), attrgetter("role")
_NO_ROLES: Mapping[str, int] = MappingProxyType({})
T = TypeVar("T")


class Session:
    def __init__(
        self,
        cluster: Cluster,
        engine: _core.Engine,
        config: C.CycleConfig,
        framework: Framework,
        eligible: Iterable[str] | None = None,
        between_jobs: Callable[[], None] | None = None,
        *,
        scope: tuple[frozenset[str], bool, frozenset[str]] | None = None,
        victim_engines: tuple[_core.Engine, _core.Engine] | None = None,
        affinity_engine: _core.Engine | None = None,
        rng: random.Random | None = None,
    ) -> None:
        # run_cycle's caller, called after each job's placement or eviction is committed or undone.
        self.between_jobs = between_jobs
        self.cluster = cluster
        self.batch = cluster.batch
        self.state = cluster.state
        self.engine = engine
        # Where victims may make room (the filters no eviction changes), and whether a node takes the pod once its
        # victims are gone (the filters but the resource ones); both score as the profile does.
        self.resolvable_engine, self.filter_engine = victim_engines or (engine, engine)
        # InterPodAffinity alone, when topology-aware preemption judges it as if no victim left the node (Volcano's
        # predicates plugin with enablePreemptable and enabledAllocatable off); None otherwise.
        self.affinity_engine = affinity_engine
        self.scope = scope  # (nodes, soft, avoid): the scheduler's node scope, None when it has none
        self.rng = rng or random.Random(0)  # where topology-aware preemption's walk over the nodes starts
        self.config = config
        self.framework = framework
        self.result = CycleResult()
        self.opened_usage: dict[str, QueueUsage] | None = None  # each queue's usage as the cycle opened
        self._room: Room | None = None
        # The pods the cycle binds, in order: close() makes their Placements together, while the node names are
        # still in cache (made per job, each record's name was a cache miss after the native placement).
        self._bound_pods: list[PodInfo] = []
        self._bound_slots: list[int] = []
        self._bound_gpus: list[GpuChoice | None] = []
        self.started = time.perf_counter()
        self.wall_clock = time.time()
        # What abandon() restores (pods in flight between cycles: a handful).
        self._releasing_at_open = dict(self.batch.releasing)
        self._nominated_at_open = dict(self.batch.nominated)
        self._queue_tie: dict[str, tuple[str, str]] = {}  # see _tie
        self.transition = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.eligible = None if eligible is None else set(eligible)
        self.job_order_key = framework.job_order_key
        framework.attach(self)
        self._open()
        self.topology = TopologyPlanner(self)

    def node_bonus(self, queue: str, bonus: np.ndarray | None = None) -> np.ndarray | None:
        """``bonus`` (a per-slot node score added to the profile's, or None) with the nodegroup plugin's score for
        the queue's tasks."""
        node_groups = self.framework.node_groups
        extra = None if node_groups is None else node_groups.bonus(queue)
        if extra is None or bonus is None:
            return bonus if extra is None else extra
        return bonus + extra

    @property
    def room(self) -> Room:
        """Each node's future idle (made when preempt or reclaim first asks)."""
        if self._room is None:
            self._room = Room(self)
        return self._room

    def interleave_at(self, i: int) -> None:
        """In a walk over many jobs: the caller's turn at every INTERLEAVE_EVERY-th."""
        if i % INTERLEAVE_EVERY == INTERLEAVE_EVERY - 1:
            self.interleave()

    def interleave(self) -> None:
        """Between two jobs: let the caller's `between_jobs` run (e.g. place latency-sensitive pods)."""
        if self.between_jobs is not None:
            self.between_jobs()

    # -- open ----------------------------------------------------------------------------------------------
    def _open(self) -> None:
        batch = self.batch
        state = self.state
        # The pods bound as the session opens, read once: a set lookup per pod instead of a native call, and none
        # at all for a gang none of whose pods is bound.
        self.bound = bound = state.bound_keys()
        state.reserve_pods(len(batch.pods))  # every pod could be bound by the end of the cycle
        # Pods pending again (their node went away) were compiled for nothing yet.
        to_compile = [info for key, info in batch.uncompiled.items() if key not in bound]
        for info, compiled in zip(to_compile, state.compile_pods([info.spec for info in to_compile])):
            batch.set_compiled(info, compiled)
            info.shape = batch.shape_of(compiled.requests)
            del batch.uncompiled[info.key]
        self.resources = state.resource_names()
        self.n_resources = len(self.resources)
        self.names = state.node_names()  # no node changes while the cycle holds the session
        # Totals kept by the native state, which refuses any write that would take one past 2**63-1.
        self.total = state.allocatable_total()
        self.free = self.total - state.requested_total()
        self._classes: dict[str, tuple[int, bool]] = {}
        self._axes: dict[str, int] = {}  # resource name -> axis (-1: no node or pod has it), as looked up
        self.pods_axis = self.resources.index("pods") if "pods" in self.resources else -1
        # Pods Releasing as the cycle opens: evicted by an earlier cycle, or being deleted (a deletionTimestamp).
        self.releasing_pods: Mapping[str, str] = (
            {**batch.releasing, **{k: "" for k in batch.deleting}} if batch.deleting else batch.releasing
        )
        self.jobs: dict[str, Job] = {}
        for i, (key, pg) in enumerate(batch.podgroups.items()):
            members = batch.members.get(key, {})
            try:
                self.jobs[key] = self._job(key, pg, members)
            except Exception as e:  # noqa: BLE001 - a job that cannot be read fails alone, never the cycle
                for k, info in members.items():
                    if not info.terminated and k not in bound:
                        self.result.unschedulable[k] = ({}, f"podgroup {key}: {type(e).__name__}: {e}")
            self.interleave_at(i)  # thousands of groups: the caller's turn in between
        # Pods without a group: the pending ones are jobs; the running ones only count toward their queue's usage
        # (jobs of one are made for them only when preempt or reclaim look for victims).
        self._running_singles: list[PodInfo] = []
        self.single_usage: dict[str, list[int]] = {}
        for key in batch.singles:
            info = batch.pods[key]
            if info.terminated:
                continue
            if key not in bound:
                if not info.deleting:
                    self.jobs[key] = self._job(key, None, {key: info})
            elif key not in self.releasing_pods:
                self._running_singles.append(info)
                usage = self.single_usage.setdefault(info.queue_hint or DEFAULT_QUEUE, [0] * self.n_resources)
                for axis, amount in self.batch.shapes[self.shape(info)]:
                    usage[axis] += amount
        # Pods that name a PodGroup the cluster does not have wait for it.
        for group, members in batch.members.items():
            if group not in batch.podgroups:
                for k, info in members.items():
                    if not info.terminated and k not in bound and not info.deleting:
                        self.result.unschedulable[k] = ({}, f"podgroup {group} not found")
        self.queue_jobs: dict[str, list[Job]] = {}
        nominated = batch.nominated
        for i, job in enumerate(self.jobs.values()):
            self.interleave_at(i)
            if nominated and job.pending:  # waiting for nodes being freed since an earlier cycle
                for t in job.pending:
                    if t.key in nominated:
                        job.count_pipelined(t.role, 1)
            if self.eligible is not None and job.pending:
                job.skipped = not any(t.key in self.eligible for t in job.pending)
            self.queue_jobs.setdefault(job.queue, []).append(job)
        node_groups = self.framework.node_groups
        if node_groups is None:
            nodegroups.release(self)
        else:
            node_groups.open(self)
            for job in self.jobs.values():
                if job.pending:
                    node_groups.constrain(self, job)
        self.framework.open(self)
        for i, job in enumerate(self.jobs.values()):
            self.interleave_at(i)
            self._check_job(job)

    def _job(self, key: str, pg: PodGroupSpec | None, members: dict[str, PodInfo]) -> Job:
        if pg is not None:
            priority, can_preempt = self._class_of(pg.priority_class_name)
            queue, min_member, min_task, creation = pg.queue, pg.min_member, dict(pg.min_task_member), pg.creation
            min_resources = None if pg.min_resources is None else self.vector_of(pg.min_resources)
            phase = self.batch.status[key].phase
        else:
            info = next(iter(members.values()))
            priority = self.pod_priority(info)
            can_preempt = self._class_of(info.priority_class)[1]
            queue, min_member, min_task, creation = info.queue_hint or DEFAULT_QUEUE, 1, {}, info.creation
            min_resources, phase = None, PENDING
        pending: list[PodInfo] = []
        running: list[str] = []
        released: list[PodInfo] = []  # Releasing pods: requested, not held
        succeeded = failed = 0
        # Per role, running and succeeded pods; only the roles with a minimum are ever asked about (none: the job
        # gets the shared read-only empty mapping).
        role_ready: Counter[str] | None = Counter() if min_task else None
        bound, releasing_pods = self.bound, self.releasing_pods
        tally = self.batch.tallies.get(key) if pg is not None else None
        if tally is not None and (tally.ended or tally.deleting or -1 in tally.shapes):
            tally = None  # the tally does not describe every pod
        uniform = True
        best_effort = 0
        pending_shapes: Mapping[int, int]
        held_shapes: Mapping[int, int]
        requested: Mapping[int, int]
        if tally is not None and (not bound or bound.isdisjoint(members)):
            # None of its pods runs or has ended (the usual new gang): what they add up to is kept as they come.
            pending = list(members.values())
            requested = pending_shapes = tally.shapes
            held_shapes = {}
            uniform = len(tally.priorities) <= 1
            shapes = self.batch.shapes
            best_effort = sum(n for shape, n in tally.shapes.items() if not shapes[shape])
        elif (
            tally is not None
            and bound.issuperset(members)
            and (not releasing_pods or releasing_pods.keys().isdisjoint(members))
        ):
            # Every pod runs (the usual admitted gang, every cycle after): the same, without a pass over its pods.
            running = list(members)
            requested = held_shapes = tally.shapes
            pending_shapes = {}
            if role_ready is not None:
                role_ready.update({role: n for role, n in tally.roles.items() if role in min_task})
        else:
            counted_roles = min_task.keys()
            held = []  # running pods: they hold what they request
            for info in members.values():
                phase_of = info.phase
                if phase_of == "Succeeded":
                    succeeded += 1
                    if info.role in counted_roles and role_ready is not None:
                        role_ready[info.role] += 1
                elif phase_of == "Failed":
                    failed += 1
                elif info.key not in bound:
                    if not info.deleting:  # a pod being deleted before it ran is never scheduled
                        pending.append(info)
                        best_effort += info.best_effort
                elif info.key in releasing_pods:
                    released.append(info)
                else:
                    running.append(info.key)
                    held.append(info)
                    if info.role in counted_roles and role_ready is not None:
                        role_ready[info.role] += 1
            # Pods of a PodGroup share a few request shapes: count shapes, sum once per shape.
            pending_counts, held_counts = self.shapes(pending), self.shapes(held)
            requested = pending_counts + held_counts + self.shapes(released)
            pending_shapes, held_shapes = pending_counts, held_counts
            uniform = len({(t.spec_priority, t.priority_class) for t in pending}) <= 1
        # Task order: the task order plugins' (priority), then the order pods arrived.
        if not uniform and len(pending) > 1 and self.framework.orders_tasks:
            pending.sort(key=self.framework.task_order_key)
        request = self.total_of(requested)
        job = Job(
            key,
            pg,
            queue,
            priority,
            can_preempt,
            min_member,
            min_task,
            min_resources,
            creation,
            pending,
            running,
            len(released),
            succeeded,
            failed,
            _NO_ROLES if role_ready is None else role_ready,
            self.total_of(held_shapes),
            request,
            phase,
            len(members),
            bool(min_task) and min_member >= sum(min_task.values()),
        )
        job.pending_request = request if pending_shapes is requested else self.total_of(pending_shapes)
        job.one_shape = len(pending_shapes) == 1
        job.pending_best_effort = best_effort
        job.releasing_scheduled = len(released)
        return job

    def total_of(self, shape_counts: Mapping[int, int]) -> np.ndarray:
        """The sum of request shapes times how many pods have each."""
        if not shape_counts:
            return np.zeros(self.n_resources, np.int64)
        total = [0] * self.n_resources
        shapes = self.batch.shapes
        for shape, count in shape_counts.items():
            for axis, amount in shapes[shape]:
                total[axis] += amount * count
        return vector(total)

    def pending_total(self, job: Job, tasks: list[PodInfo]) -> np.ndarray:
        """The requests of some of a job's pending tasks summed: kept for all of them, counted for a part."""
        if job.pending_request is not None:
            if len(tasks) == len(job.pending):
                return job.pending_request
            if job.one_shape and tasks and tasks[0].shape >= 0:  # k of n alike (an elastic gang's minimum)
                return self.total_of({tasks[0].shape: len(tasks)})
        return self.total_of(self.shapes(tasks))

    def shapes(self, infos: list[PodInfo]) -> Counter[int]:
        counts = Counter(map(_shape, infos))
        if -1 in counts:  # pods that never went through compile: intern their shapes (once; kept on the pod)
            del counts[-1]
            counts.update(self.shape(info) for info in infos if info.shape < 0)
        return counts

    def _class_of(self, name: str) -> tuple[int, bool]:
        """A PriorityClass name's (value, whether it may preempt), looked up once per session."""
        known = self._classes.get(name)
        if known is None:
            classes = self.batch.priority_classes
            known = self._classes[name] = (classes.value_of(name), classes.preemption_policy(name) != PREEMPT_NEVER)
        return known

    def pod_priority(self, info: PodInfo) -> int:
        if info.spec_priority is not None:
            return info.spec_priority
        return self._class_of(info.priority_class)[0]

    def vector_of(self, amounts: Mapping[str, int]) -> np.ndarray:
        """A {resource: amount} map as a vector over the resource axes (resources no axis has are dropped)."""
        vec = [0] * self.n_resources
        axes = self._axes
        for name, amount in amounts.items():
            axis = axes.get(name)
            if axis is None:
                axis = axes[name] = self.state.find_resource_axis(name)
            if axis >= 0:
                vec[axis] += amount
        return vector(vec)

    def shape(self, info: PodInfo) -> int:
        """A pod's request shape, interned on first use (pods that never went through compile)."""
        if info.shape < 0:
            axes = ((self.state.find_resource_axis(n), v) for n, v in info.spec["requests"].items())
            info.shape = self.batch.shape_of((a, v) for a, v in axes if a >= 0)
        return info.shape

    def pod_vector(self, info: PodInfo) -> np.ndarray:
        return self.total_of({self.shape(info): 1})

    def _check_job(self, job: Job) -> None:
        """The plugins' JobValid (gang's), and the queue's existence and state: an invalid job is not scheduled
        (enqueue still admits it, as Volcano's enqueue asks no JobValid)."""
        why = self.framework.job_valid(job)
        if why is not None:
            job.invalid = why
        elif job.queue not in self.batch.queues:
            job.invalid = (NOT_ENOUGH_RESOURCES, f"queue {job.queue} not found")
        elif job.phase == PENDING and not self.batch.queues.get(job.queue).is_open:
            job.invalid = (NOT_ENOUGH_RESOURCES, f"queue {job.queue} is {self.batch.queues.get(job.queue).state}")
        if job.invalid is not None and job.n_tasks:
            self.fail(job, job.invalid[1])

    def running_jobs(self) -> list[Job]:
        """Every job with running pods, the running pods without a group included (made on first use)."""
        if self._running_singles:
            for info in self._running_singles:
                self.jobs[info.key] = job = self._job(info.key, None, {info.key: info})
                self.queue_jobs.setdefault(job.queue, []).append(job)
            self._running_singles = []
            self.single_usage = {}
        return [j for j in self.jobs.values() if j.running]

    # -- orders (the plugins' order functions) ---------------------------------------------------------------
    def queue_order(self, queues: list[str]) -> str:
        """The queue to serve next: the queue order plugins', then Volcano's creation time and name."""
        return self.framework.queue_order(queues, self._tie)

    def tie(self, queue: str) -> tuple[str, str]:
        return self._tie(queue)

    def _tie(self, queue: str) -> tuple[str, str]:
        """Volcano's last queue order: (creation time, name), looked up once per session."""
        tie = self._queue_tie.get(queue)
        if tie is None:
            tie = self._queue_tie[queue] = (self.batch.queues.get(queue).creation_timestamp, queue)
        return tie

    # -- what the actions record ---------------------------------------------------------------------------
    def allocated(
        self,
        job: Job,
        infos: list[PodInfo],
        slots: list[int],
        gpus: Sequence[HeldGpus] | None,
        still_pending: list[PodInfo],
    ) -> None:
        """Tasks of a job bound by the cycle (already bound in the native state, on these node slots); the others
        stay pending."""
        ready = job.role_ready
        if job.min_task and isinstance(ready, Counter):  # a job with role minimums counts its roles in a Counter
            ready.update(info.role for info in infos if info.role in job.min_task)
        self._record_bindings(infos, slots, gpus)
        vec = self.pending_total(job, infos)
        job.allocated += vec
        self.free -= vec
        self.framework.on_allocate(job, vec)  # once per job: the plugins' bookkeeping is per queue, not per task
        job.placed += len(infos)
        job.pending_best_effort -= sum(1 for info in infos if info.best_effort) if job.pending_best_effort else 0
        job.pending, job.pending_request = still_pending, None

    def allocated_singles(self, jobs: list[Job], slots: list[int], gpus: Sequence[HeldGpus]) -> None:
        """Jobs of one pod each (one queue) bound by the cycle: allocated() for many at a time."""
        if not jobs:
            return
        infos = [job.pending[0] for job in jobs]
        self._record_bindings(infos, slots, gpus)
        shapes: Counter[int] = Counter()
        for job, info in zip(jobs, infos):
            shape = info.shape if info.shape >= 0 else self.shape(info)
            shapes[shape] += 1
            job.allocated += self.total_of({shape: 1})
            job.placed, job.pending, job.pending_request = 1, [], None
            job.pending_best_effort = 0
        total = self.total_of(shapes)
        self.free -= total
        self.framework.on_allocate(jobs[0], total)  # the run's jobs are of one queue: their sum, once

    def _record_bindings(self, infos: list[PodInfo], slots: list[int], gpus: Sequence[HeldGpus] | None) -> None:
        """Pods bound on these slots, for the result (no longer waiting for a nominated node). `gpus`: per pod the
        devices it holds, or None when none took any."""
        self._bound_pods += infos
        self._bound_slots += slots
        if gpus is not None and any(gpus):
            self._bound_gpus += [gpu_choice(held) if held else None for held in gpus]
        else:
            self._bound_gpus += [None] * len(infos)
        nominated = self.batch.nominated
        if nominated:
            for info in infos:
                nominated.pop(info.key, None)

    def isolated(self, jobs: list[Job], step: Callable[[], T]) -> T | None:
        """Run one job's step (or one run of pods without a group): an error in it fails those jobs, with the error
        as their reason, and never the cycle. A pod the step bound without recording it is unbound again, so the
        cycle returns every binding it leaves in place."""
        try:
            return step()
        except Exception as e:  # noqa: BLE001 - whatever went wrong is this job's, reported as its reason
            recorded = {info.key for info in self._bound_pods}
            for job in jobs:
                for t in job.pending:
                    if t.key not in recorded and t.key not in self.bound and self.state.pod_node(t.key) >= 0:
                        self.state.unbind(t.key)
                for t in job.pending:  # this reason replaces any the step gave before it failed
                    self.result.unschedulable.pop(t.key, None)
                job.fit_error, job.reported = "", None
                self.fail(job, f"vcore could not schedule the job: {type(e).__name__}: {e}")
            return None

    def fail(self, job: Job, message: str, reasons: dict[str, int] | None = None) -> None:
        """Record why a job's tasks stay pending this cycle."""
        if not job.fit_error:
            job.fit_error = message
        if job.reported is job.pending:  # the first reason given for a pod stands: these pods all have one
            return
        unschedulable = self.result.unschedulable
        entry = (dict(reasons) if reasons else {}, message)  # one per job: its pods failed for the same reason
        for t in job.pending:
            unschedulable.setdefault(t.key, entry)
        job.reported = job.pending

    def warn(self, job: Job, reason: str, message: str) -> None:
        """Record a warning about a job's PodGroup (once a cycle per reason)."""
        event = Event(f"PodGroup {job.key}", "Warning", reason, message)
        if event not in self.result.events:
            self.result.events.append(event)

    def abandon(self) -> None:
        """Undo what the cycle did to the cluster (a cycle that raises returns nothing, so it may leave nothing):
        its bindings are unbound, its evictions and nominations forgotten."""
        state, batch = self.state, self.batch
        for info in self._bound_pods:
            if state.pod_node(info.key) >= 0:
                state.unbind(info.key)
        batch.releasing.clear()
        batch.releasing.update(self._releasing_at_open)
        batch.nominated.clear()
        batch.nominated.update(self._nominated_at_open)

    # -- close ---------------------------------------------------------------------------------------------
    def close(self) -> CycleResult:
        result = self.result
        pods, slots, gpus = self._bound_pods, self._bound_slots, self._bound_gpus
        for start in range(0, len(pods), PLACEMENTS_PER_TURN):
            end = start + PLACEMENTS_PER_TURN
            result.bindings += placements(Placement, pods[start:end], slots[start:end], self.names, gpus[start:end])
            self.interleave()
        with_volume_binds(self.state, result.bindings)
        for i, (key, job) in enumerate(self.jobs.items()):
            self.interleave_at(i)
            ready = job.ready
            if job.pending and not ready and not job.skipped:
                self.fail(job, job.fit_error or self._not_tried_reason(job))
            if job.podgroup is not None:
                result.podgroups[key] = self._group_status(job, ready)
        self._queue_status()
        result.nominated = dict(self.batch.nominated)
        # The planner points back at the session: without this the session's jobs would wait, as cyclic garbage,
        # for the collector to walk everything the cycle made.
        del self.topology
        result.seconds = time.perf_counter() - self.started
        return result

    def _group_status(self, job: Job, ready: bool) -> PodGroupStatus:
        status = self.batch.status[job.key]
        previous = {c.get("type"): c for c in status.conditions}
        conditions = [c for c in status.conditions if c.get("type") not in (UNSCHEDULABLE_TYPE, SCHEDULED_TYPE)]
        message = ""
        unschedulable = False
        if job.skipped and job.invalid is None and not ready:  # not tried this cycle: what it said stands
            kept = previous.get(UNSCHEDULABLE_TYPE)
            unschedulable = kept is not None
            if kept is not None:
                conditions.append(kept)
                message = kept.get("message", "")
        elif not ready and self._releasing_covers(job):
            pass  # its scheduled pods, the Releasing ones included, hold its minimum: nothing to report
        elif job.invalid is not None:
            reason, message = job.invalid
            if job.n_tasks:  # Volcano writes nothing for a PodGroup whose pods do not exist yet
                unschedulable = True
                conditions.append(
                    self._condition(UNSCHEDULABLE_TYPE, reason, message, previous.get(UNSCHEDULABLE_TYPE))
                )
        elif not ready:
            unschedulable = True
            missing = job.min_member - job.ready_count - job.tentative
            fit = job.fit_error or self._not_tried_reason(job)
            message = f"{missing}/{job.n_tasks} tasks in gang unschedulable: {fit}"
            conditions.append(
                self._condition(UNSCHEDULABLE_TYPE, NOT_ENOUGH_RESOURCES, message, previous.get(UNSCHEDULABLE_TYPE))
            )
        else:
            conditions.append(self._condition(SCHEDULED_TYPE, SCHEDULED_REASON, "", previous.get(SCHEDULED_TYPE)))
        # Volcano's jobStatus: running tasks while unschedulable -> Unknown; enough allocated -> Running; else
        # Pending unless it was admitted (Inqueue).
        if job.running and unschedulable and job.invalid is None:
            phase = UNKNOWN
        elif len(job.running) + job.placed + job.succeeded + job.releasing_scheduled >= job.min_member:
            phase = RUNNING
        elif job.phase != INQUEUE:
            phase = PENDING
        else:
            phase = INQUEUE
        status.phase = phase
        status.conditions = conditions
        return PodGroupStatus(
            phase, tuple(conditions), message, len(job.running) + job.placed, job.succeeded, job.failed, job.hypernode
        )

    @staticmethod
    def _releasing_covers(job: Job) -> bool:
        """Volcano's shouldSkipUnschedulableForReleasing: a job short of its minimum only because some of its
        scheduled pods are terminating (nothing pending or waiting) gets no Unschedulable condition."""
        return (
            job.releasing_scheduled > 0
            and not job.pending
            and not job.pipelined
            and len(job.running) + job.succeeded + job.failed + job.releasing_scheduled >= job.min_member
        )

    def _not_tried_reason(self, job: Job) -> str:
        if job.phase == PENDING and C.ENQUEUE in self.config.actions:
            return "the job is Pending: its queue or the cluster cannot admit its minResources yet"
        return "pod group is not ready"

    def _condition(
        self, kind: str, reason: str, message: str, previous: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A PodGroup condition; its lastTransitionTime moves only when the condition changes (Kubernetes'
        convention), so an unchanged status is not rewritten every cycle."""
        since = self.transition
        if previous is not None and (previous.get("status"), previous.get("reason"), previous.get("message")) == (
            "True",
            reason,
            message,
        ):
            since = previous.get("lastTransitionTime") or since
        return {"type": kind, "status": "True", "reason": reason, "message": message, "lastTransitionTime": since}

    def _queue_status(self) -> None:
        names = self.resources
        status = self.framework.share_status()
        podgroups = self.result.podgroups
        for queue in self.batch.queues:
            jobs = self.queue_jobs.get(queue, [])
            singles = vector(self.single_usage.get(queue, [0] * self.n_resources))
            allocated = summed([j.allocated for j in jobs], singles)
            ready = sum(1 for j in jobs if j.ready)
            standing = status.get(queue)
            deserved = standing.deserved if standing is not None else np.zeros(self.n_resources, np.int64)
            share = standing.share if standing is not None else 0.0
            phases = Counter(podgroups[j.key].phase for j in jobs if j.key in podgroups)
            self.result.queues[queue] = QueueStatus(
                {n: int(v) for n, v in zip(names, allocated) if v},
                {n: int(v) for n, v in zip(names, deserved) if v},
                float(share),
                len(jobs) - ready,
                ready,
                self.batch.queues.get(queue).state,
                dict(phases),
            )
