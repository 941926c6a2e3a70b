"""Volcano's SubJob allocation (v1.14), for a PodGroup whose ``subGroupPolicy`` names ``matchLabelKeys``.

Volcano splits such a job's pods into SubJobs: per policy, in spec order, the pods its ``labelSelector`` picks that
carry every one of its ``matchLabelKeys``, one SubJob per distinct set of those labels' values; the other pods form
the job's default SubJob. A SubJob is ready with ``subGroupSize`` of its pods placed or running (the default one with
one); the job with ``minMember`` of its pods, its role minimums and ``minSubGroups`` ready SubJobs of each policy.

Allocate places the job HyperNode by HyperNode. Per gradient (the eligible HyperNodes of one tier, lowest tier
first) it tries the job in each HyperNode, SubJob by SubJob; a SubJob is tried in turn in each eligible HyperNode of
its own limit inside that one, its tasks placed one by one until it is ready, and keeps the HyperNode the
network-topology-aware plugin scores highest. The job goes to the HyperNode whose SubJobs scored highest, and, once
ready, goes on a task at a time while it has tasks left. Volcano 1.14 converts soft constraints to hard ones: a soft
job is tried up to the tier of the cluster-wide HyperNode, a soft SubJob up to its job's limit.

What it follows: Volcano v1.14 ``actions/allocate/allocate.go`` (allocateForJob, allocateForSubJob,
allocateResourcesForTasks), ``api/sub_job_info.go`` and ``api/job_info.go`` (SubJobs and their readiness),
``plugins/gang`` (SubJob order, JobValid's minSubGroups) and ``plugins/network-topology-aware`` (gradients, the
HyperNode binpack score, the node score by the lowest common HyperNode). Every trial is undone in the native state
before the next; only the chosen placement is bound again.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from vcore.batch.pods import PodInfo, compiled_pods
from vcore.topology.constraint import TierRef
from vcore.topology.hypernode import label_requirements, labels_match

if TYPE_CHECKING:
    from vcore.batch.job import Job
    from vcore.batch.session import Session
    from vcore.types import HeldGpus

NO_HYPERNODE = -1
# A HyperNode's allocatable, idle and future idle, per resource axis.
HyperNodeRoom = tuple[np.ndarray, np.ndarray, np.ndarray]
MAX_SCORE = 100  # Kubernetes' MaxNodeScore, which the network-topology-aware plugin scales its scores by


def uses_subjobs(job: Job) -> bool:
    """Whether the job's PodGroup splits its pods into SubJobs by labels (Volcano's SubJob model)."""
    pg = job.podgroup
    return pg is not None and pg.topology is not None and pg.topology.by_labels


@dataclass(eq=False)
class SubJob:
    uid: str
    policy: str | None  # None: the job's default SubJob
    min_available: int
    match_index: int  # the first label value, when it is a number (Volcano orders SubJobs by it)
    limit: int | None  # the highest tier its pods may span; None: no network topology
    tasks: list[PodInfo] = field(default_factory=list)  # every task, running and pending
    slots: list[int] = field(default_factory=list)  # the nodes of its running and placed tasks
    pending: dict[str, PodInfo] = field(default_factory=dict)  # pending and not placed this cycle, by key
    worksheet: list[PodInfo] = field(default_factory=list)  # the pending tasks allocate still tries, in task order
    ready: int = 0  # running, succeeded and placed
    best_effort: int = 0  # pending tasks that request nothing
    hypernode: int = NO_HYPERNODE  # its allocated HyperNode

    @property
    def is_ready(self) -> bool:
        return self.ready + self.best_effort >= self.min_available


class _Tree:
    """The HyperNode tree as Volcano's plugins walk it, with the cluster-wide HyperNode one tier above the top."""

    def __init__(self, ssn: Session) -> None:
        view = ssn.topology.view
        self.names = view.domain_names
        self.rows = view.domain_row
        self.node_topo = view.node_topo
        self.node_leaf = np.asarray(view.node_leaf)
        tiers = view.tiers
        self.top = len(self.names)  # the cluster-wide HyperNode's id
        self.top_tier = tiers[-1] + 1 if tiers else 1
        self.min_tier = tiers[0] if tiers else self.top_tier
        live = [d for d in range(len(self.names)) if self.rows[d] >= 0]
        self.tier = {d: tiers[self.rows[d]] for d in live}
        self.tier[self.top] = self.top_tier
        parents = view.domain_parent
        self.parent = {d: int(parents[d]) if parents[d] >= 0 else self.top for d in live}
        self.children: dict[int, list[int]] = {d: [] for d in [*live, self.top]}
        for d in sorted(live, key=lambda d: self.names[d]):
            self.children[self.parent[d]].append(d)
        self.tier_of_name = {name: tiers[row] for row, name in enumerate(view.tier_names) if name}
        self._segments: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.segment_of: dict[int, int] = {}  # HyperNode -> its run in its row's segments
        self._one_leaf: dict[int, np.ndarray] = {}  # per row, per segment: see one_leaf

    def one_leaf(self, d: int) -> bool:
        """Whether the HyperNode's nodes all share one lowest HyperNode: each of them then scores alike for the
        network-topology-aware plugin, so its tasks can be placed in one native call."""
        if d == self.top:
            return False
        row = int(self.rows[d])
        if row not in self._one_leaf:
            order, starts = self.segments(row)
            leaves = self.node_leaf[order]
            self._one_leaf[row] = (
                np.minimum.reduceat(leaves, starts) == np.maximum.reduceat(leaves, starts)
                if len(order)
                else np.zeros(0, dtype=bool)
            )
        segment = self.segment_of.get(d)
        return segment is not None and bool(self._one_leaf[row][segment])

    def segments(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """The row's node slots grouped by HyperNode (in id order) and where each group starts: per-HyperNode sums
        of a per-slot array are one np.add.reduceat."""
        if row not in self._segments:
            ids = np.asarray(self.node_topo[row])
            inside = np.flatnonzero(ids >= 0)
            order = inside[np.argsort(ids[inside], kind="stable")]
            domains, starts = np.unique(ids[order], return_index=True)
            self.segment_of.update((int(d), i) for i, d in enumerate(domains))
            self._segments[row] = (order, starts)
        return self._segments[row]

    def name(self, d: int) -> str:
        return "" if d == self.top else self.names[d]

    def members(self, d: int) -> np.ndarray | None:
        """bool[n_slots]: the HyperNode's nodes (None: every node)."""
        return None if d == self.top else self.node_topo[self.rows[d]] == d

    def ancestors(self, d: int) -> list[int]:
        """The HyperNode and those above it, up to the cluster-wide one."""
        out = [d]
        while d != self.top:
            d = self.parent[d]
            out.append(d)
        return out

    def lca(self, a: int, b: int) -> int:
        if a == NO_HYPERNODE:
            return b
        if b == NO_HYPERNODE:
            return a
        above_a = set(self.ancestors(a))
        return next(d for d in self.ancestors(b) if d in above_a)

    def lowest_holding(self, slots: list[int]) -> int:
        """The lowest HyperNode holding every one of the nodes (a node in none: none)."""
        leaves = {int(self.node_leaf[s]) for s in slots}
        if not leaves or NO_HYPERNODE in leaves:
            return NO_HYPERNODE
        out = NO_HYPERNODE
        for leaf in leaves:
            out = self.lca(out, leaf)
        return out

    def tier_limit(self, ref: TierRef | None) -> int | None:
        """A tier reference as a tier number (above the tree: the cluster-wide HyperNode's); None when a name
        names no tier (Volcano then places the job unconstrained, as the planner warns)."""
        if ref is None:
            return None
        if ref.name is not None:
            return self.tier_of_name.get(ref.name)
        assert ref.tier is not None
        return min(ref.tier, self.top_tier)


@dataclass
class _Trial:
    """What one try of the job in a HyperNode placed: (task, slot, sub-job) in order, and its SubJob score."""

    placed: list[tuple[PodInfo, int, SubJob]] = field(default_factory=list)
    score: float = 0.0


class SubJobAllocation:
    """One job's allocation under Volcano's SubJob model, for one cycle (see the module docstring)."""

    def __init__(self, ssn: Session, job: Job) -> None:
        self.ssn = ssn
        self.job = job
        self.tree = _Tree(ssn)
        pg = job.podgroup
        assert pg is not None and pg.topology is not None, "uses_subjobs(job)"
        self.args = ssn.topology.args
        c = pg.topology.constraint
        self.job_limit = (
            self.tree.tier_limit(c.limit) if c.mode == "hard" else self.tree.top_tier if c.mode == "soft" else None
        )
        self.min_sub_jobs = {p.name: p.min_sub_groups for p in pg.topology.policies}
        self.subjobs = self._split(job)
        self.job_hypernode = NO_HYPERNODE
        for sj in self.subjobs:
            if sj.limit is not None and sj.slots:
                sj.hypernode = self.tree.lowest_holding(sj.slots)
            self.job_hypernode = self.tree.lca(self.job_hypernode, sj.hypernode)
        self.headroom = ssn.framework.headroom(job.queue)
        self.n_placed = 0
        self.role_placed: Counter[str] = Counter()
        self._tier_tables: dict[int, np.ndarray] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._fixed_rooms: dict[int, tuple[np.ndarray, ...]] = {}  # per tree row, per HyperNode: see _rooms
        self.trial_gpus: dict[str, HeldGpus] = {}  # the devices each task last took, for a trial bound again

    # -- the SubJobs ---------------------------------------------------------------------------------------------
    def _split(self, job: Job) -> list[SubJob]:
        pg = job.podgroup
        assert pg is not None and pg.topology is not None
        tree = self.tree
        policies = []
        for p in pg.topology.policies:
            where = f"PodGroup {job.key}: spec.subGroupPolicy {p.name}: labelSelector"
            selector = label_requirements(where, p.label_selector) if p.label_selector else None
            limit = tree.tier_limit(p.limit) if p.limit is not None else self.job_limit if p.soft else None
            policies.append((p, selector, limit))
        default = SubJob(job.key, None, 1, 0, self.job_limit)
        by_uid: dict[str, SubJob] = {}

        def subjob_of(info: PodInfo) -> SubJob:
            for p, selector, limit in policies:
                if selector is not None and not labels_match(selector, info.labels):
                    continue
                values = [info.labels.get(k, "") for k in p.match_label_keys]
                if not p.match_label_keys or not all(values):
                    continue
                uid = f"{job.key}/{p.name}-{'-'.join(values)}"
                if uid not in by_uid:
                    index = int(values[0]) if values[0].lstrip("-").isdigit() else 0
                    by_uid[uid] = SubJob(uid, p.name, p.size or 1, index, limit)
                return by_uid[uid]
            by_uid.setdefault(default.uid, default)
            return default

        state, pods = self.ssn.state, self.ssn.batch.pods
        for key in job.running:
            info = pods[key]
            sj = subjob_of(info)
            sj.tasks.append(info)
            sj.ready += 1
            slot = state.pod_node(key)
            if slot >= 0:
                sj.slots.append(slot)
        for info in job.pending:
            sj = subjob_of(info)
            sj.tasks.append(info)
            sj.pending[info.key] = info
            if info.best_effort:
                sj.best_effort += 1
            else:
                sj.worksheet.append(info)
        return list(by_uid.values())

    def missing_sub_groups(self) -> str | None:
        """Gang's JobValid: a policy with fewer SubJobs than its minSubGroups makes the job invalid."""
        counts = Counter(sj.policy for sj in self.subjobs)
        for policy, minimum in self.min_sub_jobs.items():
            if counts[policy] < minimum:
                return (
                    f"Not enough valid subGroups of each task for gang-scheduling: subGroupPolicy {policy} has "
                    f"{counts[policy]} of its minSubGroups {minimum}"
                )
        return None

    # -- readiness -------------------------------------------------------------------------------------------------
    def _sub_jobs_meet(self, condition: Callable[[SubJob], bool]) -> bool:
        met = Counter(sj.policy for sj in self.subjobs if condition(sj))
        return all(met[policy] >= minimum for policy, minimum in self.min_sub_jobs.items() if minimum)

    def job_ready(self) -> bool:
        job = self.job
        if job.ready_count + self.n_placed + job.pending_best_effort < job.min_member:
            return False
        if job.min_task and job.roles_checked:
            ready = job.role_ready
            if any(ready.get(r, 0) + self.role_placed[r] < n for r, n in job.min_task.items()):
                return False
        return self._sub_jobs_meet(lambda sj: sj.is_ready)

    def _continue_after_a_miss(self, sj: SubJob) -> bool:
        """Volcano's NeedContinueAllocating for a job with SubJobs."""
        return self.job.min_member != self.job.n_tasks and sj.min_available < len(sj.tasks)

    # -- placing and undoing one task ----------------------------------------------------------------------------
    def _place(self, info: PodInfo, sj: SubJob, allowed: np.ndarray | None, bonus: np.ndarray | None) -> int:
        """Bind the task on its best node among ``allowed`` (every node: None); its slot, or -1."""
        mask = None if allowed is None else allowed.astype(np.uint8)
        bonus = self.ssn.node_bonus(self.job.queue, bonus)
        nodes, _, gpus, *_ = self.ssn.engine.place_gang(
            compiled_pods([info]), None, [0], 0, self.headroom, mask, False, None, bonus
        )
        slot = int(nodes[0])
        if slot >= 0:
            self._record(info, sj, slot, None if gpus is None else gpus[0])
        return slot

    def _vector(self, info: PodInfo) -> np.ndarray:
        vec = self._vectors.get(info.key)
        if vec is None:
            vec = self._vectors[info.key] = self.ssn.pod_vector(info)
        return vec

    def _record(self, info: PodInfo, sj: SubJob, slot: int, gpus: HeldGpus | None) -> None:
        """A task the native placement bound: its devices, the queue's headroom and the counts."""
        if gpus:
            self.trial_gpus[info.key] = gpus
        if self.headroom is not None:
            self.headroom = self.headroom - self._vector(info)
        self._count(info, sj, slot, +1)

    def _unplace(self, info: PodInfo, sj: SubJob, slot: int) -> None:
        self.ssn.state.unbind(info.key)
        if self.headroom is not None:
            self.headroom = self.headroom + self._vector(info)
        self._count(info, sj, slot, -1)

    def _count(self, info: PodInfo, sj: SubJob, slot: int, n: int) -> None:
        self.n_placed += n
        sj.ready += n
        if info.role in self.job.min_task:
            self.role_placed[info.role] += n
        if n > 0:
            sj.slots.append(slot)
            del sj.pending[info.key]
        else:
            sj.slots.remove(slot)
            sj.pending[info.key] = info

    def _undo(self, placed: list[tuple[PodInfo, int, SubJob]]) -> None:
        for info, slot, sj in reversed(placed):
            self._unplace(info, sj, slot)

    def _redo(self, placed: list[tuple[PodInfo, int, SubJob]]) -> None:
        """Bind a trial's placements again, each on the node (and whole GPUs) it had: every trial is undone in
        reverse, so the cluster is as it was when the trial placed them and each still fits."""
        state = self.ssn.state
        for info, slot, sj in placed:
            held = self.trial_gpus.get(info.key, ())
            whole = bool(held) and all(start < 0 for _, start in held)  # MIG slices are re-chosen by the fit rule
            state.bind(compiled_pods([info])[0], slot, [g for g, _ in held] if whole else None)
            self._record(info, sj, slot, state.pod_gpus(info.key) or ())

    # -- HyperNodes --------------------------------------------------------------------------------------------
    def _rooms(self, domains: list[int]) -> dict[int, HyperNodeRoom]:
        """Per HyperNode, (allocatable, idle, future idle) per resource axis, as the cluster is now."""
        room, tree = self.ssn.room, self.tree
        requested_by_row: dict[int, np.ndarray] = {}
        out = {}
        for d in domains:
            if d == tree.top:
                total, requested = room.allocatable.sum(axis=1), room.requested.sum(axis=1)
                freed = (room.releasing - room.nominated).sum(axis=1)
            else:
                row = int(tree.rows[d])
                order, starts = tree.segments(row)
                if row not in self._fixed_rooms:  # what allocate does not change: allocatable, releasing, nominated
                    self._fixed_rooms[row] = tuple(
                        np.add.reduceat(a[:, order], starts, axis=1)
                        for a in (room.allocatable, room.releasing - room.nominated)
                    )
                if row not in requested_by_row:
                    requested_by_row[row] = np.add.reduceat(room.requested[:, order], starts, axis=1)
                segment = tree.segment_of.get(d)
                if segment is None:  # a HyperNode without nodes
                    total = requested = freed = np.zeros(room.allocatable.shape[0], dtype=np.int64)
                else:
                    total, freed = (sums[:, segment] for sums in self._fixed_rooms[row])
                    requested = requested_by_row[row][:, segment]
            idle = total - requested
            out[d] = (total, idle, idle + freed)
        return out

    def _short(self, tasks: list[PodInfo], need: int, room: HyperNodeRoom) -> bool:
        """Whether no ``need`` of the tasks fit in a HyperNode's room (its idle or future idle, whichever is more):
        per resource, the ``need`` smallest requests already exceed it. A pruning only: a trial there would end
        with the job (or SubJob) not ready and be undone."""
        if need <= 0:
            return False
        if len(tasks) < need:
            return True
        _, idle, future = room
        smallest = np.sort(np.stack([self._vector(t) for t in tasks]), axis=0)[:need].sum(axis=0)
        return bool((smallest > np.maximum(idle, future)).any())

    def _gradients(
        self, root: int, limit: int, allocated: int, minimum: np.ndarray
    ) -> tuple[list[list[int]], dict[int, HyperNodeRoom]]:
        """The network-topology-aware plugin's gradients: the eligible HyperNodes under ``root`` (and, once the job
        or SubJob has an allocated HyperNode, under its highest ancestor within ``limit``), per tier, lowest
        first; and the room of each HyperNode looked at, as the cluster is now."""
        tree = self.tree
        search = root
        if allocated != NO_HYPERNODE:
            highest = NO_HYPERNODE
            for d in tree.ancestors(allocated):
                if tree.tier[d] > limit:
                    break
                highest = d
            if highest == NO_HYPERNODE:
                return [], {}
            lca = tree.lca(root, highest)
            if lca == root:
                search = highest
            elif lca != highest:
                return [], {}
        always = np.array([r in ("cpu", "memory") for r in self.ssn.resources], dtype=bool)
        asked = always | (minimum > 0)
        within: list[int] = []
        queue = deque([search])
        while queue:
            d = queue.popleft()
            queue.extend(tree.children[d])
            if tree.tier[d] <= limit:
                within.append(d)
        rooms = self._rooms(within)
        by_tier: dict[int, list[int]] = {}
        for d in within:
            if allocated == NO_HYPERNODE:  # the pre-filter, skipped once the job or SubJob has an allocated one
                _, idle, future = rooms[d]
                if not ((minimum <= idle)[asked].all() or (minimum <= future)[asked].all()):
                    continue
            by_tier.setdefault(tree.tier[d], []).append(d)
        return [by_tier[t] for t in sorted(by_tier)], rooms

    def hypernode_scores(
        self, sj: SubJob, candidates: list[int], rooms: dict[int, HyperNodeRoom] | None = None
    ) -> dict[int, float]:
        """The network-topology-aware HyperNode score of the SubJob's candidates: how full each would be with all
        of the SubJob's tasks (weighted over the binpack resources; 0 where they would not fit), ties at the top
        broken by the share of the SubJob's tasks already there. ``rooms``: their room, when known."""
        ssn = self.ssn
        request = sum(map(self._vector, sj.tasks), np.zeros(ssn.n_resources, dtype=np.int64))
        weights = [
            (ssn.resources.index(name), w)
            for name, w in self.args.binpack_weights
            if name in ssn.resources and request[ssn.resources.index(name)] > 0
        ]
        scores: dict[int, float] = {}
        if rooms is None:
            rooms = self._rooms(candidates)
        for d in candidates:
            allocatable, idle, _ = rooms[d]
            used = allocatable - idle
            total = weight = 0.0
            for axis, w in weights:
                if used[axis] + request[axis] > allocatable[axis]:
                    total, weight = 0.0, 0.0
                    break
                total += w * (used[axis] + request[axis]) / allocatable[axis]
                weight += w
            scores[d] = total / weight if weight > 0 else 0.0
        best = max(scores.values(), default=0.0)
        tops = [d for d, s in scores.items() if s == best]
        if len(tops) > 1 and sj.tasks:
            for d in tops:
                members = self.tree.members(d)
                inside = len(sj.slots) if members is None else sum(1 for s in sj.slots if members[s])
                scores[d] += inside / len(sj.tasks)
        scale = MAX_SCORE * self.args.node_score_weight
        return {d: s * scale for d, s in scores.items()}

    def _node_bonus(self, sj: SubJob, allocated: int, allowed: np.ndarray | None) -> np.ndarray | None:
        """The network-topology-aware node score of the SubJob's next task: by the tier of the lowest HyperNode
        a node shares with the SubJob's allocated one, ties at the top broken by the share of its tasks in the
        node's HyperNode. A SubJob without a network topology gets the binpack score of pods without one."""
        if sj.limit is None:
            return self.ssn.topology.normal_pod_bonus(sj.worksheet[:1])
        if allocated == NO_HYPERNODE:
            return None
        tree = self.tree
        leaf = tree.node_leaf
        score = self._tier_scores(allocated)[leaf]  # a node in no HyperNode: the table's last entry, 0
        candidates = np.ones(len(leaf), dtype=bool) if allowed is None else allowed
        if candidates.any():
            tops = candidates & (score == score[candidates].max())
            if np.count_nonzero(tops) > 1 and sj.tasks:
                share = np.zeros(tree.top + 1, dtype=np.float64)
                for d, n in Counter(int(leaf[s]) for s in sj.slots).items():
                    share[d] = n / len(sj.tasks)
                score = np.where(tops, score + share[leaf], score)
        return score * (MAX_SCORE * self.args.node_score_weight)

    def _tier_scores(self, allocated: int) -> np.ndarray:
        """float64 per HyperNode id (and 0 at the end): the score of a node whose lowest HyperNode it is, by the
        tier of the lowest HyperNode it shares with ``allocated``."""
        table = self._tier_tables.get(allocated)
        if table is None:
            tree = self.tree
            span = tree.top_tier - tree.min_tier
            table = np.zeros(tree.top + 1, dtype=np.float64)
            for d in tree.parent:
                lca_tier = tree.tier[tree.lca(d, allocated)]
                table[d] = 1.0 if d == allocated or span == 0 else (tree.top_tier - lca_tier) / span
            self._tier_tables[allocated] = table
        return table

    # -- allocate ---------------------------------------------------------------------------------------------
    def _tasks_in(self, sj: SubJob, worksheet: list[PodInfo], d: int) -> list[tuple[PodInfo, int, SubJob]] | None:
        """allocateResourcesForTasks: the SubJob's tasks, in order, each on its best node of HyperNode ``d``,
        until it is ready; None (nothing left bound) when it is not. ``worksheet`` loses the tasks tried."""
        allowed = self.tree.members(d)
        if allowed is not None and not allowed.any():
            return None
        if allowed is not None and self.tree.one_leaf(d):
            batched = self._tasks_in_one_leaf(sj, worksheet, allowed)
            if batched is not False:
                return batched
        allocated = sj.hypernode
        placed: list[tuple[PodInfo, int, SubJob]] = []
        failed_roles: set[str] = set()
        while worksheet:
            info = worksheet.pop(0)
            if info.role and info.role in failed_roles:
                continue
            slot = self._place(info, sj, allowed, self._node_bonus(sj, allocated, allowed))
            if slot < 0:
                if info.role:
                    failed_roles.add(info.role)
                if self._continue_after_a_miss(sj):
                    continue
                break
            placed.append((info, slot, sj))
            if sj.limit is not None:
                leaf = int(self.tree.node_leaf[slot])
                if leaf != NO_HYPERNODE:
                    allocated = self.tree.lca(allocated, leaf)
            if sj.is_ready:
                break
        if sj.is_ready:
            return placed
        self._undo(placed)
        return None

    def _tasks_in_one_leaf(
        self, sj: SubJob, worksheet: list[PodInfo], allowed: np.ndarray
    ) -> list[tuple[PodInfo, int, SubJob]] | None | Literal[False]:
        """_tasks_in where every node scores alike for the topology: the tasks go in one native call, and those the
        one-by-one walk would not have placed (past readiness, past the miss it stops at, of a role that missed)
        are undone. False (nothing left bound) when such a task was placed before one the walk keeps: its node
        might have been the kept one's, so only the walk says where that one goes."""
        infos = list(worksheet)
        bonus = self.ssn.node_bonus(self.job.queue)  # the nodegroup score, as _place adds it
        nodes, _, gpus, *_ = self.ssn.engine.place_gang(
            compiled_pods(infos), None, [0], 0, self.headroom, allowed.astype(np.uint8), False, None, bonus
        )
        slots = nodes.tolist()
        kept: list[int] = []
        extra: list[int] = []  # placed by the call, not by the walk
        failed_roles: set[str] = set()
        walked, stopped, ready = 0, False, sj.is_ready
        for i, (info, slot) in enumerate(zip(infos, slots)):
            if stopped or (info.role and info.role in failed_roles):
                if slot >= 0:
                    extra.append(i)
                walked += not stopped
                continue
            walked += 1
            if slot < 0:
                if info.role:
                    failed_roles.add(info.role)
                stopped = not self._continue_after_a_miss(sj)
                continue
            kept.append(i)
            ready = sj.ready + len(kept) + sj.best_effort >= sj.min_available
            stopped = ready
        for i in extra:
            self.ssn.state.unbind(infos[i].key)
        if kept and extra and min(extra) < kept[-1]:
            for i in kept:
                self.ssn.state.unbind(infos[i].key)
            return False
        if not ready:
            for i in kept:
                self.ssn.state.unbind(infos[i].key)
            del worksheet[:walked]
            return None
        del worksheet[:walked]
        placed = []
        for i in kept:
            self._record(infos[i], sj, slots[i], None if gpus is None else gpus[i])
            placed.append((infos[i], slots[i], sj))
        return placed

    def _sub_job_in(self, sj: SubJob, d: int) -> tuple[list[tuple[PodInfo, int, SubJob]], float] | None:
        """allocateForSubJob: the SubJob in the best HyperNode of the first gradient (inside ``d``) where it can
        be made ready; what it placed (left bound) and that HyperNode's score."""
        if sj.limit is None:
            gradients, rooms = [[d]], self._rooms([d])
        else:
            minimum = sum(map(self._vector, sj.pending.values()), np.zeros(self.ssn.n_resources, np.int64))
            gradients, rooms = self._gradients(d, sj.limit, sj.hypernode, minimum)
        need = max(sj.min_available - sj.ready - sj.best_effort, 1)
        for gradient in gradients:
            tried: dict[int, tuple[list[tuple[PodInfo, int, SubJob]], list[PodInfo]]] = {}
            for candidate in gradient:
                if self._short(sj.worksheet, need, rooms[candidate]):
                    continue  # the trial could not make the SubJob ready: its outcome, without it
                worksheet = list(sj.worksheet)
                placed = self._tasks_in(sj, worksheet, candidate)
                if placed:
                    tried[candidate] = (placed, worksheet)
                    self._undo(placed)
            if not tried:
                continue
            scores = self.hypernode_scores(sj, list(tried), rooms)  # every trial undone: the rooms still hold
            best = max(tried, key=lambda c: scores[c])  # the first of equal scores, in gradient order
            placed, worksheet = tried[best]
            self._redo(placed)
            sj.hypernode = self.tree.lca(sj.hypernode, best)
            sj.worksheet = worksheet
            return placed, scores[best]
        return None

    def _order(self, required: set[str]) -> Callable[[SubJob], tuple[bool, bool, int, str]]:
        # the SubJobs a minSubGroups needs first, then gang's order (not ready first), then Volcano's default
        return lambda sj: (sj.uid not in required, sj.is_ready, sj.match_index, sj.uid)

    def _job_in(self, d: int, required: set[str]) -> _Trial:
        """One try of the job in HyperNode ``d``: its SubJobs in order until the job is ready. Left bound."""
        trial = _Trial()
        queue = [sj for sj in self.subjobs if sj.worksheet]
        order = self._order(required)
        while queue:
            sj = min(queue, key=order)
            queue.remove(sj)
            got = self._sub_job_in(sj, d)
            if got is None:
                continue
            placed, score = got
            trial.placed += placed
            trial.score += score
            if sj.worksheet:
                queue.append(sj)
            if self.job_ready():
                break
        return trial

    def _required(self) -> set[str]:
        """The fewest SubJobs not yet ready that the policies' minSubGroups need (organizeJobWorksheet)."""
        count = Counter(sj.policy for sj in self.subjobs if sj.is_ready)
        required = set()
        for sj in sorted((sj for sj in self.subjobs if not sj.is_ready), key=lambda sj: (sj.match_index, sj.uid)):
            if sj.policy is not None and count[sj.policy] < self.min_sub_jobs.get(sj.policy, 0):
                required.add(sj.uid)
                count[sj.policy] += 1
        return required

    def _round(self, required: set[str]) -> list[tuple[PodInfo, int, SubJob]] | None:
        """allocateForJob: the job in the best HyperNode of the first gradient where it can be made ready; what it
        placed, left bound (None: nothing)."""
        tree = self.tree
        if self.job_limit is None:
            gradients, rooms = [[tree.top]], self._rooms([tree.top])
        else:
            minimum = self.job.min_resources
            if minimum is None:
                minimum = np.zeros(self.ssn.n_resources, np.int64)
            gradients, rooms = self._gradients(tree.top, self.job_limit, self.job_hypernode, minimum)
        job = self.job
        need = job.min_member - job.ready_count - self.n_placed - job.pending_best_effort
        pending = [t for sj in self.subjobs for t in sj.worksheet]
        for gradient in gradients:
            found: dict[int, tuple[_Trial, dict[str, tuple[int, list[PodInfo]]]]] = {}
            for d in gradient:
                if self._short(pending, need, rooms[d]):
                    continue  # the trial could not make the job ready: its outcome, without it
                before = {sj.uid: (sj.hypernode, list(sj.worksheet)) for sj in self.subjobs}
                trial = self._job_in(d, required)
                if trial.placed and self.job_ready():
                    found[d] = (trial, {sj.uid: (sj.hypernode, list(sj.worksheet)) for sj in self.subjobs})
                self._undo(trial.placed)
                for sj in self.subjobs:
                    sj.hypernode, sj.worksheet = before[sj.uid]
            if not found:
                continue
            best = max(found, key=lambda d: found[d][0].score)  # the first of equal scores, in gradient order
            trial, after = found[best]
            self._redo(trial.placed)
            for sj in self.subjobs:
                sj.hypernode, sj.worksheet = after[sj.uid]
            self.job_hypernode = tree.lca(self.job_hypernode, best)
            return trial.placed
        return None

    def run(self) -> list[tuple[PodInfo, int]]:
        """Place the job: rounds while it is ready and has tasks left; what stays bound, in order."""
        required = self._required()
        placed: list[tuple[PodInfo, int, SubJob]] = []
        while any(sj.worksheet for sj in self.subjobs):
            got = self._round(required)
            if not got:
                break
            placed += got
        if placed and not self.job_ready():  # a round places only a ready job; a defensive undo all the same
            self._undo(placed)
            placed = []
        return [(info, slot) for info, slot, _ in placed]


def place_with_subjobs(ssn: Session, job: Job) -> bool:
    """Allocate a job of Volcano's SubJob model (see the module docstring); returns whether it is ready."""
    allocation = SubJobAllocation(ssn, job)
    invalid = allocation.missing_sub_groups()
    if invalid is not None:
        ssn.fail(job, invalid)
        return False
    placed = allocation.run()
    if not placed:
        ssn.fail(
            job,
            f"PodGroup {job.key}: its sub-groups (spec.subGroupPolicy) cannot be placed together within the "
            "HyperNodes their network topology allows",
        )
        return False
    keys = {info.key for info, _ in placed}
    held = [ssn.state.pod_gpus(info.key) or () for info, _ in placed]
    ssn.allocated(
        job,
        [info for info, _ in placed],
        [slot for _, slot in placed],
        held if any(held) else None,
        [t for t in job.pending if t.key not in keys],
    )
    if allocation.job_hypernode not in (NO_HYPERNODE, allocation.tree.top):
        job.hypernode = allocation.tree.name(allocation.job_hypernode)
    if job.regular_pending():  # ready, with tasks no HyperNode of the job's holds
        ssn.fail(job, f"PodGroup {job.key}: {len(job.regular_pending())} of its pods fit no node its sub-groups allow")
    return job.ready
