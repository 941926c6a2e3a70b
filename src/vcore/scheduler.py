"""Scheduler: one profile's filter and score plugins over a Cluster, run by the native engine.

filter() and score() look at every node (they explain a decision); schedule() decides as kube-scheduler does,
sampling percentageOfNodesToScore of the nodes from a rotating start, and binds each placed pod. Every call
crosses into C++ once, for the whole pod or the whole batch.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from vcore._native import _convert, _core
from vcore.batch.config import CycleConfig
from vcore.batch.cycle import run_cycle
from vcore.batch.plugins import Framework
from vcore.batch.result import CycleResult
from vcore.cluster import Cluster, gpu_choice, with_gpu
from vcore.errors import ProfileError
from vcore.plugins import DEFAULT_PREEMPTION
from vcore.preemption import preempt
from vcore.profile import Profile
from vcore.reasons import AFFINITY_TERMS_CONFLICT, fit_error_message, is_pod_refusal, post_filter_message, reason_counts
from vcore.types import Placement, Preemption
from vcore.volumes.pods import with_volumes
from vcore.volumes.store import rejection_lookup, with_volume_binds

if TYPE_CHECKING:
    from vcore._native._convert import PodSpec

T = TypeVar("T")
_RESOURCE_FILTERS = ("NodeResourcesFit", "GPUDeviceFit")
# What other pods on a node decide (evicting them may change the answer).
_POD_FILTERS = ("NodePorts", "InterPodAffinity", "PodTopologySpread", "VolumeRestrictions", "NodeVolumeLimits")


def _affinity_blind_to_victims(cycle: CycleConfig) -> bool:
    """Whether Volcano's topology-aware preemption judges InterPodAffinity as if no victim left the node.

    Its dry run (preempt.go: SelectVictimsOnNode) checks the preemptor with the predicates plugin's
    SimulatePredicate, InterPodAffinity's Filter over the state its PreFilter computed, and tells the plugin of each
    victim taken or reprieved through SimulateRemoveTask / SimulateAddTask, which the session calls only for a plugin
    whose enablePreemptable or enabledAllocatable switch is on (framework/session_plugins.go). With both off on
    predicates the state keeps every victim: a node where the task's (anti-)affinity fails before the dry run gives
    no victims."""
    predicates = cycle.plugin("predicates")
    return (
        "preempt" in cycle.actions
        and bool(cycle.action_argument("preempt", "enableTopologyAwarePreemption"))
        and predicates is not None
        and predicates.enabled("enablePredicate")
        and not predicates.enabled("enablePreemptable")
        and not predicates.enabled("enabledAllocatable")
    )


@contextlib.contextmanager
def _gc_paused(*, promote: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector for a batch.

    A batch allocates tens of thousands of small acyclic objects (specs, placements) while the caller's pod
    dicts are live; each allocation burst would trigger a collection that traverses all of them, which measured
    as half the cost of converting a pod. Nothing created here forms a cycle, so pausing loses nothing.

    With ``promote`` (a scheduling cycle, about once a second), what the batch made goes straight to the oldest
    generation on the way out (gc.freeze then gc.unfreeze: a list splice, no traversal). It is referenced by the
    result the caller keeps, so the young-generation pass it would otherwise get (8 ms for a 5000-node cycle's
    75,000 placements and statuses) could free nothing. The caller's own young objects are promoted with it, which
    only delays their collection to the next full one; a process that keeps objects frozen itself
    (gc.get_freeze_count()) is left as it is, since unfreezing would undo its freeze.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if promote and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class FilterResult:
    """The nodes a pod fits, and why the others were filtered out (counted per reason, as kube-scheduler does)."""

    feasible: list[str]
    reasons: dict[str, int]
    message: str
    preemption: Preemption | None = None  # when no node fits and DefaultPreemption runs


class NodeScope(NamedTuple):
    """The nodes a scheduler is confined to (soft=False) or prefers (soft=True); see Scheduler.set_node_scope."""

    nodes: frozenset[str]
    soft: bool
    avoid: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Evaluation:
    """Raw result of one native filter+score pass, indexed by node index (Cluster.node_index)."""

    feasible_mask: np.ndarray  # bool[n_slots]
    scores: np.ndarray  # int64[n_slots], 0 where infeasible
    reasons: dict[str, int]


def _holding_cluster(method: Callable[..., T]) -> Callable[..., T]:
    """Run a Scheduler method holding its cluster's lock (Cluster.lock): each call is atomic from any thread."""

    @functools.wraps(method)
    def locked(self: Scheduler, *args: Any, **kwargs: Any) -> T:
        with self.cluster.lock:
            return method(self, *args, **kwargs)

    return locked


class Scheduler:
    """Filter and score pods against a Cluster with a kube-scheduler-shaped profile.

    profile: None (kube-scheduler's defaults for the plugins vcore implements), a dict shaped like one
    KubeSchedulerConfiguration profile, or the path of a YAML file holding one. cycle: the configuration of
    run_cycle() in Volcano's volcano-scheduler.conf shape (dict or YAML path; None: Volcano's default); when it
    is given and ``profile`` is not, its node-level plugins (predicates, nodeorder, binpack) make the profile.
    seed fixes the tie-break among equally scored nodes, so runs are reproducible.
    """

    def __init__(
        self,
        cluster: Cluster,
        profile: dict[str, Any] | str | os.PathLike[str] | None = None,
        *,
        cycle: dict[str, Any] | str | os.PathLike[str] | CycleConfig | None = None,
        seed: int = 0,
    ) -> None:
        if not isinstance(cluster, Cluster):
            raise TypeError(f"Scheduler: cluster must be a vcore.Cluster, not {type(cluster).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"Scheduler: seed must be an int in [0, 2**64), got {seed!r}")
        self.cluster = cluster
        self.cycle = CycleConfig.from_config(cycle)
        if cycle is not None and profile is None:
            profile = self.cycle.node_profile()
        elif cycle is not None and self.cycle.has_node_settings():
            raise ProfileError(
                "cycle: node-level plugin arguments (predicates, nodeorder, binpack) and a profile "
                "both configure node scoring; give one of them"
            )
        self.profile = Profile.from_config(profile)
        self._framework = Framework(self.cycle)
        self._state = cluster.state
        self._engine = _core.Engine(self._state, self.profile.native(), seed)
        self._victim_engines: tuple[_core.Engine, _core.Engine] | None = None
        self._affinity_engine: _core.Engine | None = None  # see _affinity_blind_to_victims
        if {"preempt", "reclaim"} & set(self.cycle.actions):
            # preempt and reclaim look for nodes that fit once victims go (Volcano's PredicateForPreemptAction): the
            # nodes whose filters no eviction can change accept the pod (the profile without its resource filters and
            # those about other pods), and then the node must accept it with its victims gone (without the resource
            # filters: the cycle counts the room itself). Both score as the profile does.
            native = self.profile.native()
            filters = [f for f in native["filters"] if f not in _RESOURCE_FILTERS]
            resolvable = _core.Engine(
                self._state, {**native, "filters": [f for f in filters if f not in _POD_FILTERS]}, seed
            )
            self._victim_engines = (resolvable, _core.Engine(self._state, {**native, "filters": filters}, seed))
            if "InterPodAffinity" in filters and _affinity_blind_to_victims(self.cycle):
                self._affinity_engine = _core.Engine(self._state, {**native, "filters": ["InterPodAffinity"]}, seed)
        self._cycle_rng = random.Random(seed)  # where topology-aware preemption's walk over the nodes starts
        self._scope: NodeScope | None = None
        self._preemption_offsets = random.Random(seed)  # where each preemption's walk starts (kube: at random)

    @_holding_cluster
    def compile(self, pod: Any) -> _core.CompiledPod:
        """Convert a pod once for repeated evaluation (benchmarks, what-if loops)."""
        if isinstance(pod, _core.CompiledPod):
            return pod
        return self._state.compile_pod(self.cluster.pod_spec(pod))

    @_holding_cluster
    def evaluate(self, pod: Any) -> Evaluation:
        """One fused native pass over all nodes: feasibility mask, final scores, reason counts."""
        return self._evaluate(*self._compiled(pod))

    def _compiled(self, pod: Any) -> tuple[_core.CompiledPod, PodSpec | None]:
        """The pod compiled, and its spec (None for a pod the caller compiled)."""
        if isinstance(pod, _core.CompiledPod):
            return pod, None
        spec = self.cluster.pod_spec(pod)
        return self._state.compile_pod(spec), spec

    def _evaluate(self, compiled: _core.CompiledPod, spec: PodSpec | None) -> Evaluation:
        mask, scores, codes = self._engine.evaluate(compiled)
        noted = rejection_lookup(self._state, compiled.key)
        return Evaluation(mask, scores, reason_counts(codes, _core.reason_names(self._state), spec, noted))

    @_holding_cluster
    def filter(self, pod: Any) -> FilterResult:
        """Feasible node names (index order) and the reasons for the others, over every node. When none is feasible
        and the profile runs DefaultPreemption, what preemption would do (its text ends the message, as in
        kube-scheduler's FailedScheduling)."""
        compiled, spec = self._compiled(pod)
        ev = self._evaluate(compiled, spec)
        names = self._state.node_names()
        feasible = [names[i] for i in np.flatnonzero(ev.feasible_mask)]
        if feasible:
            return FilterResult(feasible, ev.reasons, "")
        preemption = self._preemption(compiled, spec, ev.reasons)
        return FilterResult(feasible, ev.reasons, self._failure_message(ev.reasons, preemption), preemption)

    @_holding_cluster
    def preempt(self, pod: Any, *, offset: int | None = None) -> Preemption:
        """kube-scheduler's DefaultPreemption for a pod that fits no node: the node it may have once the returned
        victims are evicted, or None and why not. Decided, not done: nothing is evicted (see Preemption).
        ``offset`` pins where the walk over the nodes preemption could help starts (taken modulo their number;
        None: drawn from the scheduler's seeded random source, as kube-scheduler draws it)."""
        if offset is not None and (isinstance(offset, bool) or not isinstance(offset, int) or offset < 0):
            raise ValueError(f"Scheduler.preempt: offset must be an int >= 0, got {offset!r}")
        compiled, spec = self._compiled(pod)
        return self._preemption(compiled, spec, {}, offset) or Preemption(None)

    def _preemption(
        self, pod: _core.CompiledPod, spec: PodSpec | None, reasons: dict[str, int], offset: int | None = None
    ) -> Preemption | None:
        """DefaultPreemption's dry run when the profile runs it; None when it does not, or for a pod vcore refuses
        outright (its gates or a field vcore does not honor say why, not preemption)."""
        if (
            DEFAULT_PREEMPTION not in self.profile.post_filters
            or any(is_pod_refusal(r) for r in reasons)
            or AFFINITY_TERMS_CONFLICT in reasons  # DynamicResources' PostFilter errs first (reasons.py)
            or self._n_visible() == 0
        ):  # kube-scheduler: "no nodes available", no PostFilter
            return None
        batch = self.cluster.batch
        if offset is None:
            offset = self._preemption_offsets.randrange(2**31)
        return preempt(
            self._engine,
            self._state,
            pod,
            spec,
            args=self.profile.args[DEFAULT_PREEMPTION],
            offset=offset % 2**31,
            n_nodes=self._n_visible(),
            reason_names=_core.reason_names(self._state),
            terminating=lambda key: key in batch.pods and bool(batch.pods[key].spec.get("preempted")),
            nominated=self._nominated(),
        )

    def _nominated(self) -> list[tuple[_core.CompiledPod, str]]:
        """The pending pods the cluster knows (Cluster.add_pod) that carry a nominated node: kube-scheduler's
        nominator, whose pods later preemptions leave room for."""
        return [
            (info.compiled, info.spec["nominated_node"])
            for info in self.cluster.batch.pods.values()
            if info.compiled is not None
            and info.spec.get("nominated_node")
            and not info.terminated
            and not info.spec.get("deleting")
            and self._state.pod_node(info.key) < 0
        ]

    def _failure_message(
        self, reasons: dict[str, int], preemption: Preemption | None, n_nodes: int | None = None
    ) -> str:
        """kube-scheduler's FailedScheduling text: the filters' reasons, then what its PostFilter plugins said
        (DynamicResources', then DefaultPreemption's when the profile runs it)."""
        n_nodes = self._n_visible() if n_nodes is None else n_nodes
        words = None if preemption is None else preemption.message
        return fit_error_message(n_nodes, reasons, post_filter_message(reasons, words))

    @_holding_cluster
    def score(self, pod: Any) -> dict[str, int]:
        """{node name: final weighted score} for every feasible node."""
        ev = self.evaluate(pod)
        names = self._state.node_names()
        index = np.flatnonzero(ev.feasible_mask)
        return dict(zip((names[i] for i in index), ev.scores[index].tolist()))

    @_holding_cluster
    def schedule(self, pods: Iterable[Any]) -> list[Placement]:
        """Place pods in order with one native call, binding each placed pod into the cluster.

        The whole batch is validated first (conversion, keys already bound, duplicates): a bad batch raises and
        binds nothing. An unschedulable pod is not an error: its Placement has node None and the reasons, and when
        the profile runs DefaultPreemption, its ``preemption`` (worked out once the batch is placed): the node it
        may have once the victims go, which the caller evicts, or why preemption does not help.
        """
        with _gc_paused():
            return self._schedule(list(pods))

    def _schedule(self, pods: list[Any]) -> list[Placement]:
        given = [isinstance(p, _core.CompiledPod) for p in pods]
        raw = [p for p, compiled in zip(pods, given) if not compiled] if any(given) else pods
        specs = _convert.pod_specs(raw)
        for i in [i for i, spec in enumerate(specs) if "may_use_gpus" in spec]:
            with_gpu(specs[i], raw[i])
        for i in [i for i, spec in enumerate(specs) if "may_use_volumes" in spec]:
            with_volumes(specs[i], raw[i])
        for spec in specs:
            self.cluster.complete_spec(spec)
        if any(given):  # per pod its spec, None for a pod compiled by the caller
            remaining = iter(specs)
            spec_of: Sequence[PodSpec | None] = [None if compiled else next(remaining) for compiled in given]
            keys = [p.key if spec is None else spec["key"] for p, spec in zip(pods, spec_of)]
        else:
            spec_of = specs
            keys = [spec["key"] for spec in specs]
        # Checked before compiling: compiling may add resource rows, and a rejected batch must change nothing.
        bound = self._state.first_bound(keys)
        if bound >= 0:
            self.cluster.check_unbound(keys[bound])
        if len(set(keys)) != len(keys):
            duplicate = next(k for k, n in Counter(keys).items() if n > 1)
            raise ValueError(f"pod {duplicate}: appears more than once in the batch")
        converted = self._state.compile_pods(specs)
        if any(given):
            remaining_pods = iter(converted)
            batch = [p if compiled else next(remaining_pods) for p, compiled in zip(pods, given)]
        else:
            batch = converted
        nodes, reasons, gpus, _ = self._engine.schedule(batch)
        names = self._state.node_names()
        reason_names = _core.reason_names(self._state)
        n_nodes = self._n_visible()
        placements = []
        for i, (key, node) in enumerate(zip(keys, nodes.tolist())):
            if node >= 0:
                placements.append(Placement(key, names[node], {}, "", gpu_choice(gpus[i])))
            else:
                counts = reason_counts(reasons[i], reason_names, spec_of[i], rejection_lookup(self._state, key))
                preemption = self._preemption(batch[i], spec_of[i], counts)
                placements.append(
                    Placement(
                        key, None, counts, self._failure_message(counts, preemption, n_nodes), preemption=preemption
                    )
                )
        with_volume_binds(self._state, placements)  # one look for the few pods VolumeBinding assumed volumes for
        return placements

    @_holding_cluster
    def set_node_scope(self, nodes: Iterable[str] | None, *, soft: bool = False, avoid: Iterable[str] = ()) -> None:
        """Confine this scheduler's decisions to a set of nodes (a shard of the cluster), or prefer them.

        Hard (``soft=False``): schedule() and run_cycle() (and evaluate/filter/score) see only the named nodes, as
        if the others did not exist; a pod that fits none of them is unschedulable and its message counts only
        them. Soft: schedule() and run_cycle() try the named nodes first and place on the others only what fits
        none of them, never on the ``avoid`` nodes (say, other schedulers' shards). Names need not be nodes yet: a
        node added later under a named name joins the scope. None clears the scope. The other nodes still hold
        what is bound to them."""
        if nodes is None:
            self._engine.set_scope(None)
            for engine in self._scoped_engines():
                engine.set_scope(None)
            self._scope = None
            return
        if isinstance(nodes, (str, bytes)) or not isinstance(nodes, Iterable):
            raise TypeError(
                f"Scheduler.set_node_scope: nodes must be an iterable of node names, not {type(nodes).__name__}"
            )
        names = frozenset(nodes)
        if isinstance(avoid, (str, bytes)) or not isinstance(avoid, Iterable):
            raise TypeError(
                f"Scheduler.set_node_scope: avoid must be an iterable of node names, not {type(avoid).__name__}"
            )
        avoided = frozenset(avoid)
        bad = next((n for n in names | avoided if not isinstance(n, str)), None)
        if bad is not None:
            raise TypeError(f"Scheduler.set_node_scope: node names must be strings, got {bad!r}")
        if not isinstance(soft, bool):
            raise TypeError(f"Scheduler.set_node_scope: soft must be True or False, got {soft!r}")
        self._engine.set_scope(sorted(names), soft, sorted(avoided - names))
        for engine in self._scoped_engines():
            engine.set_scope(sorted(names), soft, sorted(avoided - names))
        self._scope = NodeScope(names, soft, avoided - names)

    def _scoped_engines(self) -> list[_core.Engine]:
        """The cycle's engines besides the profile's own (preempt's and reclaim's), which follow its node scope."""
        return [*(self._victim_engines or ()), *([self._affinity_engine] if self._affinity_engine is not None else [])]

    @property
    def node_scope(self) -> NodeScope | None:
        """The scope set by set_node_scope (None: every node)."""
        return self._scope

    def _n_visible(self) -> int:
        # A hard scope is the scheduler's whole world: "0/3 nodes are available" counts the shard's nodes.
        return self._engine.scope_size if self._scope is not None and not self._scope.soft else self._state.n_nodes

    @_holding_cluster
    def run_cycle(
        self, *, eligible: Iterable[str] | None = None, between_jobs: Callable[[], None] | None = None
    ) -> CycleResult:
        """One scheduling cycle over the cluster's pending pods, PodGroups and queues: the configured actions
        (enqueue, allocate, backfill, preempt, reclaim) in order. Placements are bound in the cluster when it
        returns; evicted pods stay accounted (Releasing) until ``cluster.remove_pod`` takes them away.

        ``eligible`` (pod keys) limits the jobs tried to those with an eligible pending pod, as a scheduler's
        queue keeps pods that are backing off or waiting for a cluster change out of a cycle; the others keep
        their status and still count in their queues.

        ``between_jobs`` is called after each job's placement (or eviction) is committed or undone (pods without a
        group, placed in runs by one native call, after each run of at most 128), in the calling thread: a caller
        that must not wait for the whole cycle (an adapter placing latency-sensitive pods with ``schedule()`` on the
        same cluster) does its work there. It may bind and unbind pods; it must not add or
        remove nodes or the cycle's pods and groups. The cycle's later jobs see what it bound."""
        if between_jobs is not None and not callable(between_jobs):
            raise TypeError(f"run_cycle: between_jobs must be callable, not {type(between_jobs).__name__}")
        with _gc_paused(promote=True):
            scope = None if self._scope is None else (self._scope.nodes, self._scope.soft, self._scope.avoid)
            return run_cycle(
                self.cluster,
                self._engine,
                self.cycle,
                self._framework,
                eligible,
                between_jobs,
                scope=scope,
                victim_engines=self._victim_engines,
                affinity_engine=self._affinity_engine,
                rng=self._cycle_rng,
            )

    @_holding_cluster
    def observe(self, pods: Iterable[Any]) -> None:
        """Count pods toward GPUPlacement's learned target workload without placing them (e.g. the pods already
        running when a scheduler starts). Pods may be objects or compiled pods."""
        self._engine.observe([self.compile(p) for p in pods])

    @_holding_cluster
    def gpu_target(self) -> dict[str, np.ndarray]:
        """GPUPlacement's target workload as it stands: per spec ``cpu_milli``, ``gpu_milli`` (per GPU),
        ``num_gpu``, ``model_mask`` (bits over ``Cluster.gpu_devices()["model_names"]``; 0 = any) and
        ``weight``."""
        return self._engine.gpu_target()
