"""The cycle's side of network-topology-aware gang placement: which jobs are constrained, and where
allocate may put them.

A job's constraint is its PodGroup's ``networkTopology`` and ``subGroupPolicy`` (parsed once, when the PodGroup is
added), else the Kueue TAS annotations its pods carry (parsed when each pod is added). For a constrained job
:meth:`TopologyPlanner.plan` runs before the native gang placement:

1. fit: how many of the job's pods fit per node (``Engine.fit_counts``, every filter of the profile). With several
   roles, the minimum over the roles: m pods of mixed roles ask, per resource, at most m times the largest
   request, so a node that holds m of every role holds any m of them. That count misses a domain whose holes fit
   a mix of requests exactly, so a gang of pods with different requests is first tried, as Volcano tries it, with
   the real placement (all or nothing) in the domains an upper bound of the count allows (``Confinement.retry``
   names the next one); the count decides after them.
2. the domain search (:func:`vcore.topology.place_gang`: native, then CP-SAT as the ``network-topology-aware``
   arguments say) for every pending pod, else (hard mode, elastic jobs) for the pods the minimum still needs; the
   job's running pods anchor it (a gang stays in the domain that holds them).
3. the native gang placement confined to the search's nodes, each capped at the search's count: it places exactly
   the search's layout, with the profile's filters, scores and GPU choice. Pods of one label group of a sub-group
   policy (``matchLabelKeys``) are then arranged onto one of the search's groups.

Hard mode: no domain holds the gang -> it stays pending, its pods unschedulable with the search's reason in
kube-scheduler's words. Soft mode never fails for topology: when no domain holds it, or the confined placement
falls short, the gang is placed unconfined, its nodes scored by Volcano's network-topology-aware node score
(LCA tier to its running pods). As in Volcano's session: a highestTierAllowed above the tree's highest tier is the
whole cluster (its virtual top HyperNode); a highestTierName no tier has leaves the job (or the sub-group)
unconstrained, with a warning event. A constraint that cannot apply otherwise (a tier below the tree, sub-groups that
do not nest) makes the job invalid for the cycle (an Unschedulable condition naming the field).

With ``network-topology-aware`` configured, jobs without a constraint get Volcano's HyperNode binpack node score
(``hypernode.binpack.normal-pod.*``): nodes whose HyperNodes are fuller score higher, keeping whole domains free
for constrained gangs. Preempt and reclaim leave hard-constrained jobs alone (Volcano does not preempt for them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from vcore.batch.pods import PodInfo
from vcore.errors import TopologyError
from vcore.topology.args import TopologyPlacementArgs
from vcore.topology.constraint import TopologyConstraint
from vcore.topology.hypernode import label_requirements, labels_match
from vcore.topology.search import GangPlacement, binpack_scores, node_scores, place_gang
from vcore.topology.tree import TopologyView

if TYPE_CHECKING:
    from vcore._native import _core
    from vcore.batch.config import CycleConfig
    from vcore.batch.job import Job
    from vcore.batch.state import BatchState
    from vcore.cluster import Cluster

__all__ = [
    "OPTIMIZE_ANNOTATION",
    "TOPOLOGY_INVALID",
    "TOPOLOGY_REASON",
    "UNKNOWN_TIER_NAME",
    "Confinement",
    "TopologyPlanner",
]

#: A PodGroup annotated "true" is flagged for optimisation: with ``solver: auto`` its placement runs CP-SAT.
OPTIMIZE_ANNOTATION = "vcore.io/topology-optimize"
#: The PodGroup condition reason of a constraint the tree cannot satisfy as written.
TOPOLOGY_INVALID = "InvalidNetworkTopology"
#: The per-node reason of pods left pending by a hard topology constraint.
TOPOLOGY_REASON = "node(s) didn't satisfy the gang's network topology"
#: The event reason of a highestTierName no tier of the tree has (Volcano warns and drops the constraint).
UNKNOWN_TIER_NAME = "UnknownHighestTierName"
#: How many domains a gang of mixed requests is tried in (a real placement each) before the count model decides.
#: Volcano tries every HyperNode of the gradient; the bound keeps a gang that fits nowhere from costing a placement
#: per domain every cycle.
MAX_DOMAIN_TRIALS = 16


@dataclass
class Confinement:
    """What allocate hands the native gang placement for one job. ``n_tasks``: how many of the ordered tasks to
    place (the search's pod count); ``refusal``: why the job cannot be placed (then nothing else is set)."""

    allowed: np.ndarray | None = None  # uint8[n_slots]
    cap: np.ndarray | None = None  # int32[n_slots]
    bonus: np.ndarray | None = None  # float64[n_slots]: Volcano's node score, added to the profile's score
    n_tasks: int | None = None
    soft: bool = False  # retry unconfined (with ``fallback_bonus``) when the confined placement falls short
    fallback_bonus: np.ndarray | None = None
    placement: GangPlacement | None = None
    refusal: str = ""
    reasons: dict[str, int] | None = None
    # A trial domain (a gang of mixed requests): when the placement in it falls short, the confinement to try next.
    retry: Callable[[], Confinement] | None = None


class PlanningSession(Protocol):
    """What the planner reads of its cycle's session (:class:`vcore.batch.session.Session`, which holds the planner
    and so is described here rather than imported)."""

    @property
    def batch(self) -> BatchState: ...
    @property
    def cluster(self) -> Cluster: ...
    @property
    def config(self) -> CycleConfig: ...
    @property
    def engine(self) -> _core.Engine: ...
    @property
    def state(self) -> _core.ClusterState: ...
    @property
    def resources(self) -> list[str]: ...
    def fail(self, job: Job, message: str, reasons: dict[str, int] | None = None) -> None: ...
    def warn(self, job: Job, reason: str, message: str) -> None: ...
    def shape(self, info: PodInfo) -> int: ...


class TopologyPlanner:
    """One cycle's topology decisions (the tree does not change while a session holds the cluster)."""

    def __init__(self, ssn: PlanningSession) -> None:
        self.ssn = ssn
        self.configured = ssn.config.topology is not None
        option = ssn.config.plugin("network-topology-aware")
        # Its node scores (soft mode's, and the HyperNode binpack of jobs without a constraint) are its NodeOrder.
        self.scores = option is not None and option.enabled("enableNodeOrder")
        self.args = ssn.config.topology or TopologyPlacementArgs()
        self._view: TopologyView | None = None
        self._constraints: dict[str, TopologyConstraint | None] = {}
        # No topology configured and no job asking for one (the plain batch cluster): every plan is None.
        batch = ssn.batch
        self.idle = (
            not self.configured
            and not any(pg.topology is not None for pg in batch.podgroups.values())
            and not any(tally.topology for tally in batch.tallies.values())
        )

    @property
    def view(self) -> TopologyView:
        if self._view is None:
            self._view = TopologyView(self.ssn.state)
        return self._view

    # -- which jobs are constrained ------------------------------------------------------------------------
    def constraint(self, job: Job) -> TopologyConstraint | None:
        """The job's constraint with its sub-group layers, None when it has none. A constraint that cannot apply
        to the job's pods makes the job invalid (recorded on the job, TopologyError not raised)."""
        if job.key in self._constraints:
            return self._constraints[job.key]
        c = None
        try:
            c = self._constraint(job)
        except TopologyError as e:
            self._invalid(job, str(e))
        self._constraints[job.key] = c
        return c

    def hard(self, job: Job) -> bool:
        c = self.constraint(job)
        return c is not None and c.mode == "hard"

    def _constraint(self, job: Job) -> TopologyConstraint | None:
        pg = job.podgroup
        if pg is None:  # a pod without a group is on one node: in one domain of every tier
            return None
        if pg.topology is None and (not self._annotated(job) or all(p.topology is None for p in job.pending)):
            return None  # the common case, decided without looking at the running pods
        pods = self._pods(job)
        if pg.topology is not None:
            c = pg.topology.constraint
            if c.limit is not None and not c.limit.known(self.view):  # Volcano: a warning, and no hard constraint
                self.ssn.warn(
                    job,
                    UNKNOWN_TIER_NAME,
                    f"{c.owner}: spec.networkTopology.highestTierName: no tier "
                    f"named {c.limit.name!r}; the job is placed unconstrained",
                )
                c = replace(c, mode="none" if c.mode == "hard" else c.mode, limit=None)
            by_labels = pg.topology.by_labels  # Volcano's SubJob model: allocate places it (vcore.batch.subjobs)
            for policy in pg.topology.policies:
                if policy.limit is None:
                    continue
                if not policy.limit.known(self.view):
                    self.ssn.warn(
                        job,
                        UNKNOWN_TIER_NAME,
                        f"{c.owner}: spec.subGroupPolicy {policy.name}: "
                        f"highestTierName: no tier named {policy.limit.name!r}; the "
                        "sub-group is placed unconstrained",
                    )
                    continue
                if by_labels:
                    continue
                if policy.limit.tier is not None and self.view.tiers and policy.limit.tier > self.view.tiers[-1]:
                    continue  # the whole cluster (Volcano's virtual top HyperNode): no constraint
                selector = label_requirements("labelSelector", policy.label_selector or {}, empty_selects_all=True)
                picked = [p for p in pods if labels_match(selector, p.labels)]
                if not picked:
                    continue
                if len(picked) != len(pods):
                    raise TopologyError(
                        f"{c.owner}: spec.subGroupPolicy {policy.name}: its labelSelector picks {len(picked)} of the "
                        f"job's {len(pods)} pods; vcore places sub-groups that partition all of a job's pods"
                    )
                c = c.with_subgroups(policy)
            if by_labels:
                return c.with_subgroups(*pg.topology.policies)
            return c if c.mode != "none" or c.subgroups else None
        owner = f"PodGroup {job.key}"
        kueue = {replace(p.topology, owner=owner) for p in pods if p.topology is not None}
        if not kueue:
            return None
        if len(kueue) > 1 or any(p.topology is None for p in pods):
            raise TopologyError(
                f"{owner}: its pods carry different Kueue topology annotations "
                "(kueue.x-k8s.io/podset-*); one gang takes one constraint"
            )
        return next(iter(kueue))

    def _annotated(self, job: Job) -> bool:
        """Whether any of the job's pods carries Kueue topology annotations (the group's tally knows)."""
        tally = self.ssn.batch.tallies.get(job.key)
        return tally is None or tally.topology > 0

    def _pods(self, job: Job) -> list[PodInfo]:
        pods = self.ssn.batch.pods
        return list(job.pending) + [pods[k] for k in job.running]

    def _invalid(self, job: Job, message: str) -> None:
        if job.invalid is None:
            job.invalid = (TOPOLOGY_INVALID, message)
            self.ssn.fail(job, message)

    # -- where a job may go ----------------------------------------------------------------------------------
    def plan(self, job: Job, tasks: list[PodInfo], need: int) -> Confinement | None:
        """The confinement of a job whose ordered pending tasks are ``tasks`` and whose minimum still needs
        ``need`` of them; None when the job is placed as any gang."""
        if self.idle:
            return None
        c = self.constraint(job)
        if job.invalid is not None:
            return Confinement(refusal=job.invalid[1])
        if c is None:
            return self._normal_pods(tasks)
        running = self._running(job)
        pg = job.podgroup  # a job with a constraint has its PodGroup
        optimize = pg is not None and str(pg.annotations.get(OPTIMIZE_ANNOTATION, "")).lower() == "true"
        fit, shapes = self._fits(tasks)

        def exact() -> Confinement:
            return self._search(job, c, tasks, need, fit, running, optimize)

        if shapes is not None and need >= len(tasks) and not c.subgroups:
            # Pods of different requests: the count model misses a domain that holds the mix exactly. As Volcano
            # does, the whole gang is tried in the domains the upper bound allows, with the real placement (all or
            # nothing); the count model decides after them.
            try:
                limit_row = c.resolve(self.view, len(tasks)).limit_row
            except TopologyError:
                return exact()  # which reports it
            return self._trial(c, tasks, self._mixed_bound(shapes, limit_row), running, exact, MAX_DOMAIN_TRIALS)
        return exact()

    def _mixed_bound(self, shapes: list[tuple[np.ndarray, int]], limit_row: int) -> np.ndarray:
        """int32[n_slots]: per node, at most how many of a gang of mixed requests it holds (per request shape, the
        pods of it that fit, summed), zero in each domain of the constraint's highest row that cannot hold some
        shape's pods even alone: no domain inside it can hold the gang, so no trial goes there."""
        n_slots = self.ssn.state.n_slots
        if limit_row >= self.view.n_rows:  # the virtual root: the whole cluster
            domain = np.zeros(n_slots, dtype=np.int64)
        else:
            domain = self.view.node_topo[limit_row].astype(np.int64)
            lone = domain < 0  # a node in no domain of the row is one of its own
            domain[lone] = domain.max(initial=0) + 1 + np.flatnonzero(lone)
        holds = np.ones(int(domain.max(initial=0)) + 1, dtype=bool)
        for per_node, n in shapes:
            holds &= np.bincount(domain, weights=per_node, minlength=len(holds)) >= n
        return np.where(holds[domain], sum(per_node for per_node, _ in shapes), 0).astype(np.int32)

    def _search(
        self,
        job: Job,
        c: TopologyConstraint,
        tasks: list[PodInfo],
        need: int,
        fit: np.ndarray,
        running: np.ndarray | None,
        optimize: bool,
    ) -> Confinement:
        """The confinement the domain search finds for the count model ``fit`` (pods of the job per node)."""
        ssn = self.ssn
        strict = c.mode == "hard" or bool(c.subgroups)  # sub-groups (Kueue slices) are required in every mode
        placement: GangPlacement | None = None
        try:
            sizes = [len(tasks)]
            unit = max((size for size, _ in c.resolve(self.view, len(tasks)).layers), default=1)
            minimum = -(-max(need, 0) // unit) * unit  # the minimum in whole (coarsest) groups
            if strict and 0 < minimum < len(tasks):
                sizes.append(minimum)
            for n in sizes:
                placement = place_gang(ssn.cluster, fit, n, c, running=running, args=self.args, optimize=optimize)
                if placement.placed:
                    break
            assert placement is not None, "sizes holds the task count at least"
            if placement.placed and n < len(tasks) and placement.domain is not None:
                # The minimum fits: take as many of the elastic pods as the chosen domain holds too.
                inside = self._inside(placement)
                more = min(len(tasks), int(fit[inside].sum()) // unit * unit)
                if more > n:
                    wider = place_gang(ssn.cluster, fit, more, c, running=running, args=self.args, optimize=optimize)
                    placement = wider if wider.placed else placement
        except TopologyError as e:
            self._invalid(job, str(e))
            return Confinement(refusal=str(e))
        if not placement.placed:
            if not strict:  # soft never fails for topology: the native placement says what does not fit
                return Confinement(bonus=self._soft_bonus(job, running, tasks))
            n_nodes = ssn.state.n_nodes
            reasons = {TOPOLOGY_REASON: n_nodes}
            return Confinement(refusal=f"0/{n_nodes} nodes are available: {placement.message}.", reasons=reasons)
        counts = placement.counts
        out = Confinement(
            allowed=(counts > 0).astype(np.uint8),
            cap=counts,
            n_tasks=int(counts.sum()),
            soft=not strict,
            placement=placement,
        )
        if out.soft:
            out.fallback_bonus = self._soft_bonus(job, running, tasks)
        return out

    def _trial(
        self,
        c: TopologyConstraint,
        tasks: list[PodInfo],
        bound: np.ndarray,
        running: np.ndarray | None,
        then: Callable[[], Confinement],
        trials: int,
    ) -> Confinement:
        """The next domain to try the whole gang in: the one the native domain search picks for the count ``bound``
        (no fewer pods per node than the real placement can put there), its nodes left out of the searches after it;
        ``then`` once no domain is left (or ``trials`` are used up). Only the domain is used, so CP-SAT, which
        refines the layout within one, never runs for a trial (each would cost its time limit)."""
        if trials <= 0 or int(bound.sum()) < len(tasks):  # no domain left that could hold the gang
            return then()
        native = replace(self.args, solver="native")
        try:
            placement = place_gang(self.ssn.cluster, bound, len(tasks), c, running=running, args=native)
        except TopologyError:
            return then()  # the exact search meets the same error, and reports it
        if not placement.placed:
            return then()
        inside = self._inside(placement)
        rest = np.where(inside, 0, bound).astype(np.int32)
        return Confinement(
            allowed=None if placement.domain is None else inside.astype(np.uint8),
            n_tasks=len(tasks),
            placement=placement,
            retry=lambda: self._trial(c, tasks, rest, running, then, trials - 1),
        )

    def _inside(self, placement: GangPlacement) -> np.ndarray:
        """bool[n_slots]: the nodes of the placement's domain (every node when it spans the whole cluster)."""
        if placement.domain is None or placement.row is None:
            return np.ones(self.ssn.state.n_slots, dtype=bool)
        return self.view.node_topo[placement.row] == self.view.domain_index(placement.domain)

    def shortfall(self, conf: Confinement, n_pending: int) -> str:
        """Why pods beyond the confinement stay pending (its domain holds fewer than the job has)."""
        where = (conf.placement.domain if conf.placement is not None else None) or "the cluster"
        return (
            f"0/{self.ssn.state.n_nodes} nodes are available: the gang's domain {where} holds {conf.n_tasks} "
            f"of its {n_pending} pending pods."
        )

    def _fits(self, tasks: list[PodInfo]) -> tuple[np.ndarray, list[tuple[np.ndarray, int]] | None]:
        """How many of the job's pods fit per node: the count model's (the minimum over the roles: m pods of mixed
        roles ask, per resource, at most m times the largest request, so a node that holds m of every role holds
        any m of them), and, when the tasks ask for different requests (None otherwise), per request shape how
        many of its pods a node holds at most (its task count, or the most its roles fit) with its task count."""
        engine = self.ssn.engine
        per_role: dict[str, np.ndarray] = {}
        shapes: dict[int, tuple[set[str], int]] = {}
        for t in tasks:
            if t.role not in per_role:
                assert t.compiled is not None, "the session compiles every pending pod"
                per_role[t.role] = engine.fit_counts(t.compiled)
            roles, n = shapes.get(t.shape, (set(), 0))
            roles.add(t.role)
            shapes[t.shape] = (roles, n + 1)
        fit = np.minimum.reduce(list(per_role.values()))
        if len(shapes) == 1:
            return fit, None
        # Pods of one shape are interchangeable on a node's resources: the most any of its roles fits bounds them.
        most = {shape: np.maximum.reduce([per_role[r] for r in roles]) for shape, (roles, _) in shapes.items()}
        return fit, [(np.minimum(most[shape], n), n) for shape, (_, n) in shapes.items()]

    def _running(self, job: Job) -> np.ndarray | None:
        if not job.running:
            return None
        state = self.ssn.state
        slots = np.fromiter((state.pod_node(k) for k in job.running), np.int64, len(job.running))
        return np.bincount(slots[slots >= 0], minlength=state.n_slots).astype(np.int32)

    def _soft_bonus(self, job: Job, running: np.ndarray | None, tasks: list[PodInfo]) -> np.ndarray | None:
        """Volcano's network-topology-aware node score for the job's next pods (nothing before its first pod, or
        with the plugin's NodeOrder switched off)."""
        if running is None or not self.view.n_rows or (self.configured and not self.scores):
            return None
        weight = float(self.args.node_score_weight)
        return node_scores(self.ssn.cluster, running, job_tasks=len(job.running) + len(tasks), weight=weight)

    # -- pods without a constraint -------------------------------------------------------------------------
    def normal_pod_bonus(self, tasks: list[PodInfo]) -> np.ndarray | None:
        """Volcano's HyperNode binpack node score of pods without a network topology (None: no score)."""
        conf = self._normal_pods(tasks)
        return None if conf is None else conf.bonus

    def _normal_pods(self, tasks: list[PodInfo]) -> Confinement | None:
        """Volcano's HyperNode binpack node score for a job without a constraint (its first pod's requests)."""
        if not (self.configured and self.scores and self.args.normal_pod_binpack and tasks and self.view.n_rows):
            return None
        ssn = self.ssn
        requests = {ssn.resources[axis]: amount for axis, amount in ssn.batch.shapes[ssn.shape(tasks[0])]}
        if not requests:
            return None
        bonus = binpack_scores(
            ssn.cluster,
            requests,
            weights=dict(self.args.binpack_weights),
            fading=self.args.normal_pod_fading,
            weight=self.args.node_score_weight,
        )
        return Confinement(bonus=bonus)
