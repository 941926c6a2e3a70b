"""Topology-aware gang placement: the seam the scheduling cycle calls.

    fit = <pods of the gang's identical pod that fit per node slot>        # the cycle's own kernel; fit_counts()
    placement = place_gang(cluster, fit, n_pods, constraint, running=..., args=..., optimize=...)
    placement.counts      # int32[n_slots]: pods to place per node slot (all zero when not placed)
    placement.groups()    # the sub-group partition of those pods, when the constraint has sub-groups

    scores = node_scores(cluster, job_pods, job_tasks=...)   # soft mode: Volcano's network-topology node score
    scores = binpack_scores(cluster, requests, weights=..., fading=..., weight=...)   # pods without a constraint

``place_gang`` runs the native search (GIL released) and, as the profile arguments say, the CP-SAT model seeded
with the native placement; the result is always valid, the solver's placement only when strictly better.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from vcore._native import _convert, _core
from vcore.cluster import Cluster
from vcore.errors import TopologyError
from vcore.topology import cpsat
from vcore.topology.args import TopologyPlacementArgs
from vcore.topology.constraint import ResolvedConstraint, TopologyConstraint
from vcore.topology.cost import PlacementCost, placement_cost
from vcore.topology.tree import TopologyView

if TYPE_CHECKING:
    from vcore._native._core import _GangResult

Weights = tuple[tuple[int, ...], int, int]  # the weighted objective: (tier span weights, nodes, fragmentation)

__all__ = ["GangPlacement", "binpack_scores", "fit_counts", "node_scores", "place_gang", "valid_placement"]

_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class GangPlacement:
    """Where a gang goes. ``counts[slot]`` pods per node slot; ``domain``/``tier`` the enclosing domain (None when
    the gang spans the virtual root, or is not placed); ``reason``/``message`` why not. ``solver`` says whose
    placement this is; ``objective``, ``bound`` and ``gap`` are CP-SAT's when it ran (the native placement's value
    when CP-SAT found nothing better). ``cost`` and ``native_cost`` (:mod:`vcore.topology.cost`) are computed on
    first use."""

    placed: bool
    counts: np.ndarray
    domain: str | None
    tier: int | None
    row: int | None
    reason: str
    message: str
    solver: str
    objective: int | None = None
    bound: float | None = None
    gap: float | None = None
    layers: tuple[tuple[int, int], ...] = ()
    _fit: np.ndarray | None = None  # the fit, the tree's node_topo and the native placement it was made with
    _node_topo: np.ndarray | None = None
    _native_counts: np.ndarray | None = None

    @cached_property
    def cost(self) -> PlacementCost | None:
        if not self.placed or self._node_topo is None or self._fit is None:
            return None
        return placement_cost(self._node_topo, self.counts, self._fit)

    @cached_property
    def native_cost(self) -> PlacementCost | None:
        if self._native_counts is None or self._node_topo is None or self._fit is None:
            return None
        return placement_cost(self._node_topo, self._native_counts, self._fit)

    def nodes(self, cluster: Cluster) -> dict[str, int]:
        """{node name: pods} of the placement."""
        names = cluster.state.node_names()
        return {names[s]: int(self.counts[s]) for s in np.flatnonzero(self.counts)}

    def groups(self) -> list[dict[int, int]]:
        """The finest sub-group layer's groups as {slot: pods}, ordered so that consecutive runs of
        ``size_k / size_0`` groups form the groups of every coarser layer k (each inside one domain of its tier).
        Without sub-groups: one group of every pod."""
        if not self.placed:
            return []
        if not self.layers:
            return [{int(s): int(self.counts[s]) for s in np.flatnonzero(self.counts)}]
        topo = self._node_topo
        assert topo is not None, "a placement with sub-group layers is made with the tree's node_topo"
        size = self.layers[0][0]
        slots = np.flatnonzero(self.counts)
        keys = []
        for s in slots:
            key = []
            for _, max_row in reversed(self.layers):  # coarsest layer first
                col = topo[: max_row + 1, s]
                key.append(int(col[np.flatnonzero(col >= 0)[-1]]))
            keys.append((tuple(key), int(s)))
        keys.sort()
        out: list[dict[int, int]] = []
        current: dict[int, int] = {}
        filled = 0
        for _, slot in keys:
            left = int(self.counts[slot])
            while left:
                take = min(left, size - filled)
                current[slot] = current.get(slot, 0) + take
                left -= take
                filled += take
                if filled == size:
                    out.append(current)
                    current, filled = {}, 0
        return out


def fit_counts(cluster: Cluster, pod: Any) -> np.ndarray:
    """int32[n_slots]: how many copies of ``pod`` fit on each node by its resource requests (allocatable minus
    requested, and the pods count), 0 on free slots. Resource-level only: the cycle's own kernel also applies
    filters and device fit."""
    state = cluster.state
    requests = _convert.pod_spec(pod)["requests"]
    free = state.allocatable - state.requested
    pods_axis = state.find_resource_axis("pods")
    fit = free[pods_axis].copy()
    for name, amount in requests.items():
        if amount <= 0 or name == "pods":
            continue
        axis = state.find_resource_axis(name)
        if axis < 0:
            return np.zeros(state.n_slots, dtype=np.int32)
        np.minimum(fit, free[axis] // amount, out=fit)
    fit = np.clip(fit, 0, _INT32_MAX).astype(np.int32)
    fit[~state.live_mask] = 0
    return fit


def _check_array(name: str, a: Any, n: int) -> np.ndarray:
    if not isinstance(a, np.ndarray) or a.dtype != np.int32 or a.shape != (n,):
        got = f"{type(a).__name__} {getattr(a, 'dtype', '')} {getattr(a, 'shape', '')}".strip()
        raise TypeError(f"{name}: expected a numpy int32 array of shape ({n},) (n_slots), got {got}")
    return a


def valid_placement(
    view: TopologyView, fit: np.ndarray, rc: ResolvedConstraint, counts: np.ndarray, running: np.ndarray | None = None
) -> bool:
    """Whether ``counts`` places the gang within ``fit``, inside one enclosing domain of the allowed rows (also
    holding the running pods), with every sub-group layer's slice domains holding whole groups."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != fit.shape or counts.min(initial=0) < 0 or np.any(counts > fit) or counts.sum() != rc.n_pods:
        return False
    topo = view.node_topo
    used = np.flatnonzero(counts > 0)
    if running is not None:
        used = np.union1d(used, np.flatnonzero(running > 0))
    enclosed = False
    for r in range(rc.start_row, min(rc.limit_row, view.n_rows - 1) + 1):
        col = topo[r, used]
        if len(col) and col[0] >= 0 and np.all(col == col[0]):
            enclosed = True
            break
    if not enclosed and not (not rc.hard or rc.limit_row == view.n_rows):
        return False
    for size, max_row in rc.layers:
        load: dict[int, int] = {}
        for s in np.flatnonzero(counts > 0):
            col = topo[: max_row + 1, s]
            inside = np.flatnonzero(col >= 0)
            if not len(inside):
                return False
            d = int(col[inside[-1]])
            load[d] = load.get(d, 0) + int(counts[s])
        if any(v % size for v in load.values()):
            return False
    return True


def place_gang(
    cluster: Cluster,
    fit: np.ndarray,
    n_pods: int,
    constraint: TopologyConstraint | None = None,
    *,
    running: np.ndarray | None = None,
    args: TopologyPlacementArgs | None = None,
    optimize: bool = False,
) -> GangPlacement:
    """Place ``n_pods`` identical pods of a gang (see the module docstring).

    ``fit``: int32[n_slots], pods that fit per node slot. ``constraint``: None places compactly without
    constraint (soft). ``running``: int32[n_slots], the gang's pods already running per slot: later pods stay in a
    domain that contains them. ``optimize``: the gang is flagged for optimisation (``solver: auto`` then runs
    CP-SAT). A constraint that does not fit the tree raises TopologyError naming its owner; a gang that does not
    fit is not an error (``placed`` False, with the reason).
    """
    state = cluster.state
    args = args or TopologyPlacementArgs()
    n = state.n_slots
    fit = _check_array("fit", fit, n)
    if running is not None:
        running = _check_array("running", running, n)
    view = TopologyView(state)
    rc = (constraint or TopologyConstraint(mode="soft")).resolve(view, n_pods)
    try:
        native = _core.topology.place_gang(
            state,
            fit,
            rc.n_pods,
            rc.start_row,
            rc.limit_row,
            rc.hard,
            list(rc.layers),
            running,
            args.bandwidth_weight,
            args.congestion_weight,
            args.tie_slack,
        )
    except ValueError as e:
        raise TopologyError(str(e)) from None
    topo = view.node_topo
    result = _from_native(view, native, fit, rc)
    run_cpsat = args.solver == "cpsat" or (args.solver == "auto" and (optimize or (not native["placed"] and rc.hard)))
    if not run_cpsat:
        return result
    weights: Weights | None = None
    if args.objective == "weighted":
        weights = (args.tier_span_weights, args.nodes_weight, args.fragmentation_weight)
    out = cpsat.solve(
        view,
        fit,
        rc,
        hint=native["counts"] if native["placed"] else None,
        running=running,
        time_limit=args.time_limit_seconds,
        relative_gap=args.relative_gap,
        workers=args.workers,
        weights=weights,
        candidate_domains=args.candidate_domains,
    )
    if out.counts is None or not valid_placement(view, fit, rc, out.counts, running):
        return _replace(result, objective=out.objective, bound=out.bound, gap=out.gap)
    cost = placement_cost(topo, out.counts, fit)
    incumbent = result.cost  # None when the native search placed nothing
    if incumbent is not None and not _better(cost, incumbent, weights):
        return _replace(result, objective=out.objective, bound=out.bound, gap=out.gap)
    domain, tier, row = _enclosure(view, out.counts, rc)
    return GangPlacement(
        True,
        out.counts,
        domain,
        tier,
        row,
        "",
        "",
        "cpsat",
        out.objective,
        out.bound,
        out.gap,
        rc.layers,
        fit,
        topo,
        native["counts"] if native["placed"] else None,
    )


def _better(a: PlacementCost, b: PlacementCost, weights: Weights | None) -> bool:
    if weights is None:
        return a.key() < b.key()
    return a.weighted(*weights) < b.weighted(*weights)


def _replace(p: GangPlacement, **kw: Any) -> GangPlacement:
    return GangPlacement(**{**{f.name: getattr(p, f.name) for f in fields(p)}, **kw})


def _from_native(view: TopologyView, native: _GangResult, fit: np.ndarray, rc: ResolvedConstraint) -> GangPlacement:
    placed = bool(native["placed"])
    d, row = native["domain"], native["row"]
    domain = native["domain_name"] if placed and d >= 0 else None
    tier = view.tiers[row] if placed and 0 <= row < view.n_rows else None
    return GangPlacement(
        placed,
        native["counts"],
        domain,
        tier,
        row if placed else None,
        native["reason"],
        native["message"],
        "native",
        layers=rc.layers,
        _fit=fit,
        _node_topo=view.node_topo,
        _native_counts=native["counts"] if placed else None,
    )


def _enclosure(view: TopologyView, counts: np.ndarray, rc: ResolvedConstraint) -> tuple[str | None, int | None, int]:
    used = np.flatnonzero(counts > 0)
    topo = view.node_topo
    for r in range(rc.start_row, view.n_rows):
        col = topo[r, used]
        if col[0] >= 0 and np.all(col == col[0]):
            return view.domain_names[int(col[0])], view.tiers[r], r
    return None, None, view.n_rows


def node_scores(
    cluster: Cluster, job_pods: np.ndarray, *, job_tasks: int, weight: float = 1.0, candidates: np.ndarray | None = None
) -> np.ndarray:
    """float64[n_slots]: Volcano's network-topology-aware score of each node for the next pod of a job whose pods
    run ``job_pods`` per slot (int32[n_slots]); ``job_tasks`` is the job's task count (Volcano's tie-break by the
    share of the job in a node's HyperNode), ``candidates`` (bool[n_slots]) the nodes being scored (default every
    live node). The first pod of a job scores 0 everywhere. As in Volcano, the tier scale runs to the virtual
    cluster-wide HyperNode one tier above the highest: a node meeting the job's HyperNode at tier t scores
    (top - t) / (top - lowest), one meeting it only at the top 0."""
    state = cluster.state
    job_pods = _check_array("job_pods", job_pods, state.n_slots)
    if isinstance(job_tasks, bool) or not isinstance(job_tasks, (int, np.integer)) or job_tasks < 0:
        raise TypeError(f"job_tasks: expected a non-negative integer, got {job_tasks!r}")
    if candidates is not None and (not isinstance(candidates, np.ndarray) or candidates.dtype != np.bool_):
        raise TypeError("candidates: expected a numpy bool array of shape (n_slots,)")
    try:
        return _core.topology.node_scores(state, job_pods, int(job_tasks), float(weight), candidates)
    except ValueError as e:
        raise TopologyError(str(e)) from None


def binpack_scores(
    cluster: Cluster, requests: Mapping[str, int], *, weights: Mapping[str, int], fading: float, weight: float
) -> np.ndarray:
    """float64[n_slots]: Volcano's HyperNode binpack node score of a pod without a network topology (the
    network-topology-aware plugin's normal-pod score), in 0..100 * ``weight``: per tier t, weighted ``fading`` **
    (t - 1), how full the node's HyperNode of that tier would be with the pod, over the resources the pod requests
    that ``weights`` names ({resource: weight}). The tiers run to Volcano's virtual cluster-wide HyperNode one tier
    above the highest, whose fullness is the whole cluster's. A resource no node has counts as nothing."""
    state = cluster.state
    resources = []
    for name, w in weights.items():
        amount = int(requests.get(name, 0))
        axis = state.find_resource_axis(name)
        if axis >= 0 and w > 0 and amount > 0:
            resources.append((axis, amount, int(w)))
    try:
        return _core.topology.binpack_scores(state, resources, float(fading), float(weight))
    except ValueError as e:
        raise TopologyError(str(e)) from None
