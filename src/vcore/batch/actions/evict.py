"""preempt and reclaim: evict running pods so that a starving job can run (Volcano's preempt and reclaim actions).

Both serve the admitted, valid jobs the JobStarving plugins call starving (gang: fewer ready and waiting tasks than
minMember), queue by queue in queue order, job by job in job order, each job one Statement: its pending tasks in
task order, while it still starves, each look for a node, and the job's evictions and pipelined tasks are kept only
when the JobPipelined plugins let the job through (its tasks then wait, nominated, for the victims to go and bind
in a later cycle). Jobs with a network topology are left alone (Volcano does not preempt for them); a task whose
own spec.preemptionPolicy is Never does not preempt or reclaim.

preempt takes, on a node, running tasks of other jobs of the same queue (best-effort ones only for a best-effort
preemptor), that are not ``volcano.sh/preemptable: false``, and that every plugin of the deciding tier lets go
(Preemptable: priority - lower job priority; gang - the victim's job keeps minMember and, where role minimums bind,
each role its minimum; conformance - never system-critical pods; drf - by dominant share). With gang voting,
whatever tier decides, no victim takes its gang below those minimums (Volcano lets a later tier decide when gang's
leaves no victim; with gang's switch off, as in Volcano, nothing protects a gang).
Nodes are those whose filters no eviction changes accept the task; those where it already fits the future idle
(idle + releasing - pipelined) come first, then the others by node score. On a node, victims go in victim order
(the victim's queue, then reverse job order, then reverse task order) until the queue may take the task
(Allocatable), it fits the node's future idle and the node's filters accept it: a node stops giving victims as soon
as the task fits, and a node that cannot make it fit gives none. Then each starving job's lower-priority tasks may
yield to its own pending ones (Volcano's intra-job preemption). With ``enableTopologyAwarePreemption`` the node is
chosen as Volcano's DryRunPreemption chooses it: from a random node on, the fewest victims per node (the filters
checked with them gone), then the least important victims; when the predicates plugin's enablePreemptable and
enabledAllocatable are both off, Volcano's dry run never tells InterPodAffinity that a victim left, so a node where
the task's inter-pod (anti-)affinity fails before any eviction gives no victims.

reclaim serves queues that are not overused, for tasks whose queue may reclaim (Preemptive); it takes running,
preemptable tasks of other, reclaimable queues that the Reclaimable plugins let go (proportion and capacity: queues
above their deserved share), on the first node (in node order) where, with them gone, the task fits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from vcore.batch import config as C
from vcore.batch.job import Job
from vcore.batch.plugins.base import Candidate, Preemptor
from vcore.batch.podgroup import PENDING
from vcore.batch.pods import PodInfo
from vcore.batch.session import Session
from vcore.batch.statement import Statement

PREEMPT_REASON, RECLAIM_REASON = "preempt", "reclaim"
#: Per task, which running tasks it may consider as victims, before the plugins vote.
VictimFilter = Callable[[Preemptor, Candidate], bool]


def preempt(ssn: Session) -> None:
    seeker = VictimSeeker(ssn, PREEMPT_REASON)
    starving = _starving(ssn)
    for queue in _queue_sequence(ssn, starving):
        for job in starving[queue]:
            ssn.isolated([job], functools.partial(seeker.serve_job, job, _same_queue_other_job))
            ssn.interleave()
        for job in starving[queue]:  # then each job's lower-priority tasks may yield to its own pending ones
            ssn.isolated([job], functools.partial(seeker.serve_within_job, job))
            ssn.interleave()


def reclaim(ssn: Session) -> None:
    seeker = VictimSeeker(ssn, RECLAIM_REASON)
    fw = ssn.framework
    starving = _starving(ssn)
    left = list(starving)
    while left:
        queue = ssn.queue_order(left)
        left.remove(queue)
        if fw.answers("overused") and fw.overused(queue):
            continue
        for job in starving[queue]:
            ssn.isolated([job], functools.partial(seeker.serve_job, job, _reclaimable_from_other_queue))
            ssn.interleave()


def _starving(ssn: Session) -> dict[str, list[Job]]:
    """Per queue, in job order, the admitted, valid jobs the JobStarving plugins call starving."""
    fw = ssn.framework
    if not fw.answers("job_starving"):
        return {}
    out: dict[str, list[Job]] = {}
    for job in ssn.jobs.values():
        if (
            job.invalid is not None
            or not job.pending
            or job.skipped
            or job.queue not in ssn.batch.queues
            or (job.podgroup is not None and job.phase == PENDING)
        ):
            continue
        if not fw.job_starving(job) or ssn.topology.constraint(job) is not None:
            continue  # Volcano does not preempt for jobs with a network topology
        out.setdefault(job.queue, []).append(job)
    for jobs in out.values():
        jobs.sort(key=ssn.job_order_key)
    return out


def _queue_sequence(ssn: Session, queues: Iterable[str]) -> list[str]:
    out, left = [], list(queues)
    while left:
        q = ssn.queue_order(left)
        out.append(q)
        left.remove(q)
    return out


def _same_queue_other_job(preemptor: Preemptor, c: Candidate) -> bool:
    """preempt's victims: running tasks of another job of the preemptor's queue (a best-effort preemptor takes only
    best-effort ones)."""
    return (
        c.job.queue == preemptor.job.queue
        and c.job is not preemptor.job
        and (not preemptor.info.best_effort or c.info.best_effort)
    )


def _same_job(preemptor: Preemptor, c: Candidate) -> bool:
    return c.job is preemptor.job and (not preemptor.info.best_effort or c.info.best_effort)


def _reclaimable_from_other_queue(preemptor: Preemptor, c: Candidate) -> bool:
    """reclaim's victims: Running tasks of reclaimable queues other than the reclaimer's."""
    return c.info.phase == "Running" and c.job.queue != preemptor.job.queue and c.reclaimable_queue


class VictimSeeker:
    """One action's search for victims over the cycle's running tasks."""

    def __init__(self, ssn: Session, reason: str) -> None:
        self.ssn = ssn
        self.reason = reason
        self.fw = ssn.framework
        self.room = ssn.room
        self.topology_aware = reason == PREEMPT_REASON and bool(
            ssn.config.action_argument(C.PREEMPT, C.TOPOLOGY_AWARE_PREEMPTION)
        )
        self._by_node: dict[int, list[Candidate]] | None = None

    # -- the running tasks, by node ---------------------------------------------------------------------------
    def by_node(self) -> dict[int, list[Candidate]]:
        """Every running task that may be a victim (not Releasing, preemptable), by node slot (read once)."""
        if self._by_node is None:
            ssn = self.ssn
            state, pods, queues = ssn.state, ssn.batch.pods, ssn.batch.queues
            by_node: dict[int, list[Candidate]] = {}
            for job in ssn.running_jobs():
                reclaimable = job.queue in queues and queues.get(job.queue).reclaimable
                for key in job.running:
                    info = pods[key]
                    if not info.preemptable:
                        continue
                    slot = state.pod_node(key)
                    if slot < 0:
                        continue
                    victim = Candidate(key, info, job, ssn.pod_priority(info), ssn.pod_vector(info), slot, reclaimable)
                    by_node.setdefault(slot, []).append(victim)
            self._by_node = by_node
        return self._by_node

    def _on(self, slot: int, preemptor: Preemptor, wanted: VictimFilter) -> list[Candidate]:
        """The node's running tasks the action may take for the preemptor (evicted ones are detached or
        Releasing)."""
        releasing, state = self.ssn.batch.releasing, self.ssn.state
        return [
            c
            for c in self.by_node().get(slot, ())
            if c.key not in releasing and state.pod_node(c.key) == slot and wanted(preemptor, c)
        ]

    # -- jobs --------------------------------------------------------------------------------------------------
    def serve_job(self, job: Job, wanted: VictimFilter) -> None:
        """Pipeline the job's pending tasks onto nodes made free, while it starves; keep it all only when the
        JobPipelined plugins let the job through."""
        ssn, fw = self.ssn, self.fw
        stmt = Statement(ssn)
        try:
            for task in self._tasks(job):
                if not fw.job_starving(job):
                    break
                if task.never_preempts:
                    continue
                preemptor = self._preemptor(task, job)
                if self.reason == RECLAIM_REASON and not fw.preemptive(job.queue, preemptor.request):
                    continue
                self._place(stmt, preemptor, wanted)
        except BaseException:  # nothing tentative may outlive the job's attempt
            stmt.discard()
            raise
        if fw.job_pipelined(job):
            evictions = stmt.commit()
            if evictions:
                job.fit_error = f"waiting for {len(evictions)} evicted pod(s) to release their resources"
        else:
            stmt.discard()

    def serve_within_job(self, job: Job) -> None:
        """Volcano's intra-job preemption: each pending task, in task order, may take the room of running tasks of
        its own job that the plugins let go (priority: lower task priority), until one finds none."""
        for task in self._tasks(job):
            if task.never_preempts:
                return
            stmt = Statement(self.ssn)  # one per task, committed whatever it found, as Volcano's
            try:
                placed = self._place(stmt, self._preemptor(task, job), _same_job)
            except BaseException:
                stmt.discard()
                raise
            stmt.commit()
            if not placed:
                return

    def _tasks(self, job: Job) -> list[PodInfo]:
        nominated = self.ssn.batch.nominated
        return [t for t in job.pending if t.key not in nominated and self.ssn.state.pod_node(t.key) < 0]

    def _preemptor(self, task: PodInfo, job: Job) -> Preemptor:
        return Preemptor(task, job, self.ssn.pod_priority(task), self.ssn.pod_vector(task))

    # -- one task ----------------------------------------------------------------------------------------------
    def _place(self, stmt: Statement, preemptor: Preemptor, wanted: VictimFilter) -> bool:
        if self.topology_aware:
            return self._place_topology_aware(stmt, preemptor, wanted)
        request = self.room.request(preemptor.info)
        compiled = preemptor.info.compiled
        assert compiled is not None, "the session compiles every pending pod"
        accepted = self.ssn.filter_engine.evaluate(compiled)[0]  # per node, with nothing evicted
        for slot in self._nodes(preemptor, request, accepted, wanted):
            if self._take(stmt, preemptor, request, slot, bool(accepted[slot]), wanted):
                return True
        return False

    def _nodes(
        self, preemptor: Preemptor, request: np.ndarray, accepted: np.ndarray, wanted: VictimFilter
    ) -> list[int]:
        """The nodes to try, in order, among those whose filters no eviction changes accept the task (a soft node
        scope's nodes before the others, never the avoided ones). preempt: where the task fits the future idle (and
        every filter accepts it) first, then where victims may make it fit, each group in node score order;
        reclaim: the nodes with running tasks it may take, in node order (Volcano's reclaim walks them unscored)."""
        ssn = self.ssn
        compiled = preemptor.info.compiled
        assert compiled is not None, "the session compiles every pending pod"
        feasible, scores, _ = ssn.resolvable_engine.evaluate(compiled)
        if self.reason == PREEMPT_REASON:
            fits_now = self.room.fits_everywhere(request) & feasible & accepted
            first = np.flatnonzero(fits_now).tolist()
        else:
            fits_now, first = np.zeros_like(feasible), []
        with_victims = [
            slot
            for slot, running in self.by_node().items()
            if feasible[slot] and not fits_now[slot] and any(wanted(preemptor, c) for c in running)
        ]
        scope = ssn.scope
        outside: set[int] = set()
        if scope is not None and scope[1]:  # soft: the scope's nodes first, never the avoided ones
            names = ssn.names
            outside = {s for s, name in enumerate(names) if name not in scope[0]}
            avoid = {s for s, name in enumerate(names) if name in scope[2]}
            first = [s for s in first if s not in avoid]
            with_victims = [s for s in with_victims if s not in avoid]

        bonus = ssn.node_bonus(preemptor.job.queue)  # Volcano's float node score: the profile's and nodegroup's
        ranked = scores if bonus is None else scores + bonus

        def order(slot: int) -> tuple[Any, ...]:
            if self.reason == RECLAIM_REASON:
                return (slot in outside, slot)
            return (slot in outside, -ranked[slot], slot)

        return sorted(first, key=order) + sorted(with_victims, key=order)

    def _take(
        self,
        stmt: Statement,
        preemptor: Preemptor,
        request: np.ndarray,
        slot: int,
        accepted: bool,
        wanted: VictimFilter,
    ) -> bool:
        """Evict victims on one node, in victim order, until the task may go there; pipeline it. A node that cannot
        make room gives nothing. ``accepted``: whether the node's filters accept the task with nothing evicted (when
        not, a pod it may not run beside must go too)."""
        fw, room, job = self.fw, self.room, preemptor.job
        preempting = self.reason == PREEMPT_REASON

        def admits(evicted: bool) -> bool:  # preempt also keeps the preemptor's queue within what it may have
            return (
                (not preempting or fw.allocatable(job.queue, preemptor.request))
                and room.fits(slot, request)
                and (accepted or (evicted and self._accepts(preemptor, slot)))
            )

        if admits(False):
            stmt.pipeline(preemptor.info, job, slot, preemptor.request)
            return True
        victims = self._victims(preemptor, slot, wanted)
        if not victims:
            return False
        mark = stmt.mark()
        for victim in victims:
            stmt.evict(victim.key, victim.job, victim.request, self.reason, preemptor.info.key)
            if admits(True):
                stmt.pipeline(preemptor.info, job, slot, preemptor.request)
                return True
        stmt.rollback(mark)
        return False

    def _accepts(self, preemptor: Preemptor, slot: int) -> bool:
        """Whether the node's filters (but the resource ones) accept the task now (its victims detached)."""
        compiled = preemptor.info.compiled
        assert compiled is not None, "the session compiles every pending pod"
        return bool(self.ssn.filter_engine.evaluate(compiled)[0][slot])

    def _victims(self, preemptor: Preemptor, slot: int, wanted: VictimFilter) -> list[Candidate]:
        """The plugins' victims on a node in victim order, none taking its gang below its minimums, when with all
        of them gone the task would fit (ValidateVictims); else none."""
        candidates = self._on(slot, preemptor, wanted)
        if not candidates:
            return []
        part = "preemptable" if self.reason == PREEMPT_REASON else "reclaimable"
        victims = self._victim_order(preemptor, getattr(self.fw, part)(preemptor, candidates))
        if self.fw.keeps_gangs(part):
            victims = _keeping_gangs(victims)
        if not victims:
            return []
        freed = np.sum([self.room.request(v.info) for v in victims], axis=0)
        return victims if self.room.fits(slot, self.room.request(preemptor.info), freed) else []

    def _victim_order(self, preemptor: Preemptor, victims: list[Candidate]) -> list[Candidate]:
        """Volcano's victims priority queue: a queue's victims by the victim queue order, a queue's jobs in reverse
        job order, a job's tasks in reverse task order."""
        ssn, fw = self.ssn, self.fw

        def task_key(c: Candidate) -> tuple[Any, ...]:
            return (*fw.task_order_key(c.info), c.info.creation, c.key)

        def compare(a: Candidate, b: Candidate) -> int:
            if a.job is b.job:
                ka, kb = task_key(a), task_key(b)
                return (ka < kb) - (ka > kb)
            if a.job.queue != b.job.queue:
                return fw.victim_queue_compare(a.job.queue, b.job.queue, preemptor.job.queue, ssn.tie)
            ka, kb = ssn.job_order_key(a.job), ssn.job_order_key(b.job)
            return (ka < kb) - (ka > kb)

        return sorted(victims, key=functools.cmp_to_key(compare))

    # -- enableTopologyAwarePreemption -------------------------------------------------------------------------
    def _place_topology_aware(self, stmt: Statement, preemptor: Preemptor, wanted: VictimFilter) -> bool:
        """Volcano's DryRunPreemption: from a random node on, the victims each node needs (the fewest, the filters
        checked with them gone), until enough nodes have some; the node whose victims matter least wins. Only nodes
        InterPodAffinity accepts now when the session's affinity_engine says evictions do not count for it."""
        ssn = self.ssn
        compiled = preemptor.info.compiled
        assert compiled is not None, "the session compiles every pending pod"
        mask = ssn.resolvable_engine.evaluate(compiled)[0]
        if ssn.affinity_engine is not None:  # the dry run's InterPodAffinity sees no victim leave: as it is now
            mask = mask & ssn.affinity_engine.evaluate(compiled)[0]
        feasible = np.flatnonzero(mask).tolist()
        if not feasible:
            return False
        offset = ssn.rng.randrange(len(feasible))
        wanted_candidates = self._n_candidates(len(feasible))
        candidates: list[tuple[int, list[Candidate]]] = []
        for i in range(len(feasible)):
            slot = feasible[(offset + i) % len(feasible)]
            victims = self._dry_run(stmt, preemptor, slot, wanted)
            if victims:
                candidates.append((slot, victims))
                if len(candidates) >= wanted_candidates:
                    break
        if not candidates:
            return False
        slot, victims = min(candidates, key=_importance)
        for victim in victims:
            stmt.evict(victim.key, victim.job, victim.request, self.reason, preemptor.info.key)
        stmt.pipeline(preemptor.info, preemptor.job, slot, preemptor.request)
        return True

    def _n_candidates(self, n_nodes: int) -> int:
        config = self.ssn.config
        n = n_nodes * int(config.action_argument(C.PREEMPT, "minCandidateNodesPercentage")) // 100
        n = max(n, int(config.action_argument(C.PREEMPT, "minCandidateNodesAbsolute")))
        n = min(n, int(config.action_argument(C.PREEMPT, "maxCandidateNodesAbsolute")))
        return max(min(n, n_nodes), 1)

    def _dry_run(self, stmt: Statement, preemptor: Preemptor, slot: int, wanted: VictimFilter) -> list[Candidate]:
        """Volcano's SelectVictimsOnNode: victims in victim order until the task fits (queue, node room and filters),
        then each reprieved, the last taken first, if the task still fits without it. Nothing stays evicted."""
        victims = self._victims(preemptor, slot, wanted)
        if not victims:
            return []
        fw, room, job = self.fw, self.room, preemptor.job
        request = room.request(preemptor.info)

        def fits() -> bool:
            return (
                fw.allocatable(job.queue, preemptor.request)
                and room.fits(slot, request)
                and self._accepts(preemptor, slot)
            )

        mark = stmt.mark()
        taken: list[Candidate] = []
        try:
            for victim in victims:
                stmt.evict(victim.key, victim.job, victim.request, self.reason, preemptor.info.key)
                taken.append(victim)
                if fits():
                    break
            if not fits():
                return []
            chosen: list[Candidate] = []
            for victim in reversed(taken):  # reprieve: the victim that mattered most first
                stmt.restore(victim.key)
                if not fits():
                    stmt.evict(victim.key, victim.job, victim.request, self.reason, preemptor.info.key)
                    chosen.append(victim)
            return chosen
        finally:
            stmt.rollback(mark)


def _keeping_gangs(victims: list[Candidate]) -> list[Candidate]:
    """The victims, in order, that leave each gang at its minMember and, where role minimums bind, each role at its
    minTaskMember. Volcano's gang plugin votes so, but a later tier (drf, proportion) decides when gang's tier
    leaves no victim at all; with gang voting, vcore never lets an eviction break a gang."""
    left: dict[str, int] = {}
    roles: dict[tuple[str, str], int] = {}
    out = []
    for v in victims:
        job, role = v.job, v.info.role
        have = left.get(job.key, job.ready_count)
        if have <= job.min_member:
            continue
        if job.roles_checked and role in job.min_task:
            have_role = roles.get((job.key, role), job.role_ready.get(role, 0))
            if have_role <= job.min_task[role]:
                continue
            roles[(job.key, role)] = have_role - 1
        left[job.key] = have - 1
        out.append(v)
    return out


def _importance(candidate: tuple[int, list[Candidate]]) -> tuple[Any, ...]:
    """kube-scheduler's pickOneNodeForPreemption, smallest first: the highest victim priority, the sum of the
    priorities, the number of victims, then the latest start of the most important victims."""
    slot, victims = candidate
    top = max(v.priority for v in victims)
    # a pod with no start time counts as starting now (the latest)
    started = min(v.info.spec.get("start_time") or float("inf") for v in victims if v.priority == top)
    return top, sum(v.priority for v in victims), len(victims), -started
