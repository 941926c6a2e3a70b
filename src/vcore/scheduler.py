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
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from vcore._native import _convert, _core
from vcore.batch.config import CycleConfig
from vcore.batch.cycle import run_cycle
from vcore.batch.result import CycleResult
from vcore.batch.session import share_plugin
from vcore.cluster import Cluster, gpu_choice, with_gpu
from vcore.errors import ProfileError
from vcore.profile import Profile
from vcore.reasons import fit_error_message, reason_counts
from vcore.types import GpuChoice, Placement
from vcore.volumes.pods import with_volumes
from vcore.volumes.store import rejection_lookup, volume_binds

if TYPE_CHECKING:
    from vcore._native._convert import PodSpec

T = TypeVar("T")


@contextlib.contextmanager
def _gc_paused(*, promote: bool = False):
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
    def locked(self: "Scheduler", *args: Any, **kwargs: Any) -> T:
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

    def __init__(self, cluster: Cluster, profile: dict | str | os.PathLike | None = None, *,
                 cycle: dict | str | os.PathLike | CycleConfig | None = None, seed: int = 0) -> None:
        if not isinstance(cluster, Cluster):
            raise TypeError(f"Scheduler: cluster must be a vcore.Cluster, not {type(cluster).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"Scheduler: seed must be an int in [0, 2**64), got {seed!r}")
        self.cluster = cluster
        self.cycle = CycleConfig.from_config(cycle)
        if cycle is not None and profile is None:
            profile = self.cycle.node_profile()
        elif cycle is not None and self.cycle.has_node_settings():
            raise ProfileError("cycle: node-level plugin arguments (predicates, nodeorder, binpack) and a profile "
                               "both configure node scoring; give one of them")
        self.profile = Profile.from_config(profile)
        self._share = share_plugin(self.cycle)
        self._state = cluster.state
        self._engine = _core.Engine(self._state, self.profile.native(), seed)
        self._scope: NodeScope | None = None

    @_holding_cluster
    def compile(self, pod: Any) -> _core.CompiledPod:
        """Convert a pod once for repeated evaluation (benchmarks, what-if loops)."""
        if isinstance(pod, _core.CompiledPod):
            return pod
        return self._state.compile_pod(self.cluster.pod_spec(pod))

    @_holding_cluster
    def evaluate(self, pod: Any) -> Evaluation:
        """One fused native pass over all nodes: feasibility mask, final scores, reason counts."""
        spec = None if isinstance(pod, _core.CompiledPod) else self.cluster.pod_spec(pod)
        compiled = pod if spec is None else self._state.compile_pod(spec)
        mask, scores, codes = self._engine.evaluate(compiled)
        noted = rejection_lookup(self._state, compiled.key)
        return Evaluation(mask, scores, reason_counts(codes, _core.reason_names(self._state), spec, noted))

    @_holding_cluster
    def filter(self, pod: Any) -> FilterResult:
        """Feasible node names (index order) and the reasons for the others, over every node."""
        ev = self.evaluate(pod)
        names = self._state.node_names()
        feasible = [names[i] for i in np.flatnonzero(ev.feasible_mask)]
        message = "" if feasible else fit_error_message(self._n_visible(), ev.reasons)
        return FilterResult(feasible, ev.reasons, message)

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
        binds nothing. An unschedulable pod is not an error: its Placement has node None and the reasons.
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
            spec_of: list[PodSpec | None] = [None if compiled else next(remaining) for compiled in given]
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
                placed_spec = spec_of[i]
                binds = volume_binds(self._state, key) if placed_spec is None or "volumes" in placed_spec else None
                placements.append(Placement(key, names[node], {}, "", gpu_choice(gpus[i]), binds))
            else:
                counts = reason_counts(reasons[i], reason_names, spec_of[i], rejection_lookup(self._state, key))
                placements.append(Placement(key, None, counts, fit_error_message(n_nodes, counts)))
        return placements

    @_holding_cluster
    def set_node_scope(self, nodes: Iterable[str] | None, *, soft: bool = False,
                       avoid: Iterable[str] = ()) -> None:
        """Confine this scheduler's decisions to a set of nodes (a shard of the cluster), or prefer them.

        Hard (``soft=False``): schedule() and run_cycle() (and evaluate/filter/score) see only the named nodes, as
        if the others did not exist; a pod that fits none of them is unschedulable and its message counts only
        them. Soft: schedule() and run_cycle() try the named nodes first and place on the others only what fits
        none of them, never on the ``avoid`` nodes (say, other schedulers' shards). Names need not be nodes yet: a
        node added later under a named name joins the scope. None clears the scope. The other nodes still hold
        what is bound to them."""
        if nodes is None:
            self._engine.set_scope(None)
            self._scope = None
            return
        if isinstance(nodes, (str, bytes)) or not isinstance(nodes, Iterable):
            raise TypeError(f"Scheduler.set_node_scope: nodes must be an iterable of node names, not "
                            f"{type(nodes).__name__}")
        names = frozenset(nodes)
        if isinstance(avoid, (str, bytes)) or not isinstance(avoid, Iterable):
            raise TypeError(f"Scheduler.set_node_scope: avoid must be an iterable of node names, not "
                            f"{type(avoid).__name__}")
        avoided = frozenset(avoid)
        bad = next((n for n in names | avoided if not isinstance(n, str)), None)
        if bad is not None:
            raise TypeError(f"Scheduler.set_node_scope: node names must be strings, got {bad!r}")
        if not isinstance(soft, bool):
            raise TypeError(f"Scheduler.set_node_scope: soft must be True or False, got {soft!r}")
        self._engine.set_scope(sorted(names), soft, sorted(avoided - names))
        self._scope = NodeScope(names, soft, avoided - names)

    @property
    def node_scope(self) -> NodeScope | None:
        """The scope set by set_node_scope (None: every node)."""
        return self._scope

    def _n_visible(self) -> int:
        # A hard scope is the scheduler's whole world: "0/3 nodes are available" counts the shard's nodes.
        return self._engine.scope_size if self._scope is not None and not self._scope.soft else self._state.n_nodes

    @_holding_cluster
    def run_cycle(self, *, eligible: Iterable[str] | None = None,
                  between_jobs: Callable[[], None] | None = None) -> CycleResult:
        """One scheduling cycle over the cluster's pending pods, PodGroups and queues: the configured actions
        (enqueue, allocate, backfill, preempt, reclaim) in order. Placements are bound in the cluster when it
        returns; evicted pods stay accounted (Releasing) until ``cluster.remove_pod`` takes them away.

        ``eligible`` (pod keys) limits the jobs tried to those with an eligible pending pod, as a scheduler's
        queue keeps pods that are backing off or waiting for a cluster change out of a cycle; the others keep
        their status and still count in their queues.

        ``between_jobs`` is called after each job's placement (or eviction) is committed or undone (pods without a
        group, placed in runs by one native call, after each run of at most 128), in the calling thread: a caller that must not wait for the whole cycle (an adapter placing latency-sensitive pods with
        ``schedule()`` on the same cluster) does its work there. It may bind and unbind pods; it must not add or
        remove nodes or the cycle's pods and groups. The cycle's later jobs see what it bound."""
        if between_jobs is not None and not callable(between_jobs):
            raise TypeError(f"run_cycle: between_jobs must be callable, not {type(between_jobs).__name__}")
        with _gc_paused(promote=True):
            return run_cycle(self.cluster, self._engine, self.cycle, self._share, eligible, between_jobs)

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
