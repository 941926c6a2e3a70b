"""The exact gang placement model (OR-Tools CP-SAT): improves the native search's placement when there is time.

Variables, for the gang's identical pods over the nodes of the candidate enclosures:

- ``x[s]`` pods on node s (0..fit[s]; with per-resource rows ``x[s] * request[r] <= free[r, s]``), ``u[s]`` node
  used, ``full[s]`` node left without room, ``c[e]`` enclosure e chosen (exactly one), ``y[d]`` domain d used,
  ``g[k, d]`` groups of sub-group layer k in its slice domain d (``load(d) == size_k * g[k, d]``);
- hierarchy: ``y[leaf(s)] >= u[s]``, ``y[parent(d)] >= y[d]``; nodes outside the chosen enclosure take nothing;
- redundant: every tier row's domain loads (plus nodes in no domain of that row) sum to the gang; symmetry
  breaking: among nodes with the same fit and the same domains, loads are non-increasing by slot;
- objective (:mod:`vcore.topology.cost`): lexicographic as one weighted sum whose weights exceed every lower
  term's range (fewest domains at the highest tier, ..., then partially used nodes and domains, then nodes), or
  the profile's weights.

The enclosures are the feasible domains of the lowest feasible tier row (the native search's row), and the nodes in
no domain of that row that hold the whole gang alone (a node in no domain of a row counts as a domain of its own):
for the lexicographic objective the optimum lies in one of them. A gang inside one enclosure of a row spans one
domain (or node) of that row and of every row above, and any placement not inside one spans at least two at that
row. The native placement is given as a complete hint (loads sorted to satisfy the symmetry breaking); the caller
keeps whichever of the two is better.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vcore.topology.constraint import ResolvedConstraint
from vcore.topology.cost import placement_cost
from vcore.topology.tree import TopologyView

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

__all__ = ["CpSatOutcome", "domain_capacity", "enclosures", "solve"]


@dataclass(frozen=True)
class CpSatOutcome:
    status: str  # OPTIMAL, FEASIBLE, INFEASIBLE, UNKNOWN, MODEL_INVALID
    counts: np.ndarray | None  # int32[n_slots] when a placement was found
    objective: int | None
    bound: float | None
    gap: float | None  # (objective - bound) / max(1, objective)
    wall_seconds: float
    row: int | None = None  # the enclosures' tier row (n_rows: the virtual root)


def domain_capacity(
    view: TopologyView, fit: np.ndarray, layers: tuple[tuple[int, int], ...]
) -> tuple[np.ndarray, np.ndarray, int]:
    """(free pods per domain, capacity per domain in groups of the coarsest layer or pods, root capacity)."""
    topo = view.node_topo
    nd = view.n_domains
    fit64 = np.asarray(fit, dtype=np.int64)
    agg = np.zeros(nd, dtype=np.int64)
    for row in topo:
        inside = row >= 0
        agg += np.bincount(row[inside], weights=fit64[inside], minlength=nd).astype(np.int64)
    if not layers:
        return agg, agg, int(fit64.sum())
    k_n = len(layers)
    units = np.zeros((k_n, nd), dtype=np.int64)
    below = np.zeros((k_n, nd), dtype=np.int64)
    root = np.zeros(k_n, dtype=np.int64)
    rows = view.domain_row
    for d in sorted((d for d in range(nd) if rows[d] >= 0), key=lambda d: rows[d]):
        for k, (size, max_row) in enumerate(layers):
            if rows[d] <= max_row:
                units[k, d] = agg[d] // size if k == 0 else units[k - 1, d] // (size // layers[k - 1][0])
            else:
                units[k, d] = below[k, d]
            p = view.domain_parent[d]
            if p >= 0:
                below[k, p] += units[k, d]
            else:
                root[k] += units[k, d]
    return agg, units[-1], int(root[-1])


def enclosures(
    view: TopologyView,
    fit: np.ndarray,
    rc: ResolvedConstraint,
    running: np.ndarray | None,
    limit: int | None = None,
    keep: int | None = None,
) -> tuple[int, list[int]] | None:
    """(row, candidate enclosures) at the lowest feasible row, the ``limit`` tightest of them (always with domain
    ``keep``); ``(n_rows, [])`` for the virtual root; None when nothing can hold the gang. A candidate is a domain, or
    ``_lone(s)`` for a node s in no domain of the row that holds the gang alone. The same rule as the native search,
    without its tie-breaks (and without lone nodes: the native search looks at domains only)."""
    topo = view.node_topo
    _, cap, root_cap = domain_capacity(view, fit, rc.layers)
    need = rc.n_pods // (rc.layers[-1][0] if rc.layers else 1)
    anchor = -2
    if running is not None and np.any(running > 0):
        used = np.flatnonzero(running > 0)
        anchor = -1
        for r in range(view.n_rows):
            col = topo[r, used]
            if col[0] >= 0 and np.all(col == col[0]):
                anchor = int(col[0])
                break
    for r in range(rc.start_row, min(rc.limit_row, view.n_rows - 1) + 1):
        if anchor == -2:
            cands = [int(d) for d in np.flatnonzero(view.domain_row == r)]
        elif anchor >= 0 and view.domain_row[anchor] <= r:
            a = anchor
            while a >= 0 and view.domain_row[a] < r:
                a = int(view.domain_parent[a])
            cands = [a] if a >= 0 and view.domain_row[a] == r else []
        else:
            cands = []
        room = {int(d): int(cap[d]) for d in cands if cap[d] >= need}
        if anchor == -2:
            room.update({_lone(s): int(fit[s]) for s in _lone_nodes(view, fit, rc, r)})
        feasible = sorted(room, key=lambda e: (room[e], e))
        if feasible:
            if limit is not None and len(feasible) > limit:
                head = feasible[:limit]
                if keep is not None and keep in feasible and keep not in head:
                    head[-1] = keep
                feasible = head
            return r, feasible
    if (not rc.hard or rc.limit_row == view.n_rows) and root_cap >= need:
        return view.n_rows, []
    return None


def _lone(slot: int) -> int:
    """The enclosure id of a lone node (negative: domain ids are not; -1 is 'no domain' in node_topo). Its own
    inverse: _lone(_lone(slot)) == slot."""
    return -2 - slot


def _lone_nodes(view: TopologyView, fit: np.ndarray, rc: ResolvedConstraint, row: int) -> list[int]:
    """The nodes in no domain of ``row`` that hold the whole gang alone, where a placement may be on such a node
    (valid_placement: soft mode, the root as limit, or a domain of an allowed row above holding the node). None for
    sub-group layers, whose groups need slice domains."""
    if rc.layers:
        return []
    topo = view.node_topo
    allowed = topo[rc.start_row : min(rc.limit_row, view.n_rows - 1) + 1]
    free_anywhere = not rc.hard or rc.limit_row == view.n_rows
    return [
        int(s)
        for s in np.flatnonzero((topo[row] < 0) & (np.asarray(fit) >= rc.n_pods))
        if free_anywhere or np.any(allowed[:, s] >= 0)
    ]


def solve(
    view: TopologyView,
    fit: np.ndarray,
    rc: ResolvedConstraint,
    *,
    hint: np.ndarray | None = None,
    running: np.ndarray | None = None,
    time_limit: float = 1.0,
    relative_gap: float = 0.0,
    workers: int = 1,
    weights: tuple[tuple[int, ...], int, int] | None = None,
    requests: np.ndarray | None = None,
    free: np.ndarray | None = None,
    seed: int = 0,
    candidate_domains: int | None = None,
) -> CpSatOutcome:
    """Solve the gang placement exactly (within the limits). ``weights``: (tier span weights lowest row first, nodes,
    fragmentation) for the weighted objective; None is lexicographic. ``requests`` (int64[R]) and ``free``
    (int64[R, n_slots]) add the per-resource capacity rows. ``candidate_domains`` bounds the enclosures considered
    (the tightest ones, with the hint's)."""
    from ortools.sat.python import cp_model  # heavy: imported when a model is built

    start = time.perf_counter()
    fit = np.asarray(fit, dtype=np.int64)
    keep = None
    if hint is not None and np.any(hint > 0):
        keep = _enclosing_at_lowest_row(view, hint)
    found = enclosures(view, fit, rc, running, candidate_domains, keep)
    if found is None:
        return CpSatOutcome("INFEASIBLE", None, None, None, None, time.perf_counter() - start)
    row, cands = found
    topo = view.node_topo
    n_rows = view.n_rows
    home: dict[int, int] = {}  # slot -> its candidate enclosure
    if cands:
        col = topo[row]
        for e in cands:
            home.update({int(s): e for s in (np.flatnonzero(col == e) if e >= 0 else [_lone(e)])})
        scope = np.array(sorted(s for s in home if fit[s] > 0), dtype=np.int64)
    else:
        scope = np.flatnonzero(fit > 0)
    m = cp_model.CpModel()
    x = {int(s): m.new_int_var(0, int(fit[s]), f"x{s}") for s in scope}
    u = {s: m.new_bool_var(f"u{s}") for s in x}
    full = {s: m.new_bool_var(f"f{s}") for s in x}
    part = {s: m.new_bool_var(f"p{s}") for s in x}
    m.add(sum(x.values()) == rc.n_pods)
    for s, xs in x.items():
        m.add(xs <= int(fit[s]) * u[s])
        m.add(xs >= u[s])
        m.add(xs >= int(fit[s]) * full[s])
        m.add(part[s] >= u[s] - full[s])
    if requests is not None and free is not None:
        for r, req in enumerate(np.asarray(requests, dtype=np.int64)):
            if req > 0:
                for s, xs in x.items():
                    m.add(xs * int(req) <= int(free[r, s]))
    choose: dict[int, cp_model.IntVar] = {}
    if len(cands) > 1:
        choose = {e: m.new_bool_var(f"c{e}") for e in cands}
        m.add_exactly_one(choose.values())
        for s, xs in x.items():
            m.add(xs <= int(fit[s]) * choose[home[s]])
    # Domains holding scope nodes, their loads and use indicators.
    members: dict[int, list[int]] = {}
    for r in range(n_rows):
        col = topo[r]
        for s in x:
            if col[s] >= 0:
                members.setdefault(int(col[s]), []).append(s)
    free_pods, _, _ = domain_capacity(view, fit, ())
    agg = {d: int(free_pods[d]) for d in members}  # the whole domain's room, in scope or not
    y = {d: m.new_bool_var(f"y{d}") for d in members}
    ydfull = {d: m.new_bool_var(f"F{d}") for d in members}
    ypart = {d: m.new_bool_var(f"P{d}") for d in members}
    load = {d: sum(x[s] for s in nodes) for d, nodes in members.items()}
    for d in members:
        p = int(view.domain_parent[d])
        if p in y:
            m.add(y[p] >= y[d])
        m.add(load[d] >= agg[d] * ydfull[d])
        m.add(ypart[d] >= y[d] - ydfull[d])
    for s in x:
        leaf = int(view.node_leaf[s])
        if leaf in y:
            m.add(y[leaf] >= u[s])
    # Redundant: each row's loads (and what lies outside that row's domains) add up to the gang.
    for r in range(n_rows):
        col = topo[r]
        row_domains = [d for d in members if view.domain_row[d] == r]
        outside = [x[s] for s in x if col[s] < 0]
        if row_domains:
            m.add(sum(load[d] for d in row_domains) + sum(outside) == rc.n_pods)
    # Sub-group layers: every slice domain holds whole groups; nodes without one take nothing.
    slices: list[tuple[cp_model.IntVar, list[int], int]] = []
    for k, (size, max_row) in enumerate(rc.layers):
        slice_of: dict[int, list[int]] = {}
        for s in x:
            d = -1
            for r in range(max_row, -1, -1):
                if topo[r, s] >= 0:
                    d = int(topo[r, s])
                    break
            if d < 0:
                m.add(x[s] == 0)
            else:
                slice_of.setdefault(d, []).append(s)
        for d, nodes in slice_of.items():
            g = m.new_int_var(0, int(fit[nodes].sum()) // size, f"g{k}_{d}")
            m.add(sum(x[s] for s in nodes) == size * g)
            slices.append((g, nodes, size))
    # Symmetry: nodes with equal fit and equal domains are interchangeable; order their loads.
    groups: dict[tuple[int, ...], list[int]] = {}
    for s in x:
        groups.setdefault((int(fit[s]), *(int(v) for v in topo[:, s])), []).append(s)
    for nodes in groups.values():
        for a, b in zip(nodes, nodes[1:]):
            m.add(x[a] >= x[b])
            m.add(u[a] >= u[b])
    # Objective.
    span_terms = [
        [y[d] for d in members if view.domain_row[d] == r] + [u[s] for s in x if topo[r, s] < 0] for r in range(n_rows)
    ]
    node_term = list(u.values())
    part_term = list(part.values()) + list(ypart.values())
    if weights is None:
        w_nodes = 1
        w_part = len(node_term) + 1
        w = w_part * (len(part_term) + 1)
        span_w = []
        for r in range(n_rows):
            span_w.append(w)
            w *= len(span_terms[r]) + 1
    else:
        tier_w, w_nodes, w_part = weights
        span_w = [tier_w[r] if r < len(tier_w) else 1 for r in range(n_rows)]
    objective = (
        sum(span_w[r] * sum(span_terms[r]) for r in range(n_rows)) + w_nodes * sum(node_term) + w_part * sum(part_term)
    )
    m.minimize(objective)
    if hint is not None:
        _add_hint(m, hint, fit, x, u, full, part, y, ydfull, ypart, members, agg, groups, choose, slices, home)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.relative_gap_limit = float(relative_gap)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    status = solver.solve(m)
    name = solver.status_name(status)
    wall = time.perf_counter() - start
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        if hint is None or status == cp_model.INFEASIBLE:
            return CpSatOutcome(name, None, None, None, None, wall, row)
        # Out of time before any solution: the hint's value is the objective to report, with the bound reached.
        cost = placement_cost(topo, hint, fit)
        obj = sum(span_w[r] * cost.spans[r] for r in range(n_rows)) + w_nodes * cost.nodes + w_part * cost.partial
        return CpSatOutcome(name, None, obj, *_bound_and_gap(solver, obj, proven=False), wall, row)
    counts = np.zeros(topo.shape[1], dtype=np.int32)
    for s, xs in x.items():
        counts[s] = solver.value(xs)
    obj = int(round(solver.objective_value))
    return CpSatOutcome(name, counts, obj, *_bound_and_gap(solver, obj, proven=status == cp_model.OPTIMAL), wall, row)


def _bound_and_gap(solver: cp_model.CpSolver, obj: float, *, proven: bool) -> tuple[float, float]:
    """The bound to report and the relative gap. A minimisation's bound never exceeds its objective and equals it once
    proven optimal; CP-SAT's float bound can land a rounding error above it (a gap of -1.7e-16)."""
    bound = float(obj) if proven else min(float(solver.best_objective_bound), float(obj))
    return bound, (obj - bound) / max(1.0, abs(obj))


def _enclosing_at_lowest_row(view: TopologyView, counts: np.ndarray) -> int | None:
    used = np.flatnonzero(counts > 0)
    for row in view.node_topo:
        col = row[used]
        if col[0] >= 0 and np.all(col == col[0]):
            return int(col[0])
    return None


def _add_hint(
    m: cp_model.CpModel,
    hint: np.ndarray,
    fit: np.ndarray,
    x: dict[int, cp_model.IntVar],
    u: dict[int, cp_model.IntVar],
    full: dict[int, cp_model.IntVar],
    part: dict[int, cp_model.IntVar],
    y: dict[int, cp_model.IntVar],
    ydfull: dict[int, cp_model.IntVar],
    ypart: dict[int, cp_model.IntVar],
    members: dict[int, list[int]],
    agg: dict[int, int],
    groups: dict[tuple[int, ...], list[int]],
    choose: dict[int, cp_model.IntVar],
    slices: list[tuple[cp_model.IntVar, list[int], int]],
    home: dict[int, int],
) -> None:
    """The native placement as a complete hint, its loads sorted within each symmetry group."""
    h = np.asarray(hint, dtype=np.int64).copy()
    for nodes in groups.values():
        h[nodes] = np.sort(h[nodes])[::-1]
    for s in x:
        v = int(h[s])
        m.add_hint(x[s], v)
        m.add_hint(u[s], int(v > 0))
        m.add_hint(full[s], int(v >= fit[s]))
        m.add_hint(part[s], int(0 < v < fit[s]))
    for d, nodes in members.items():
        ld = int(h[nodes].sum())
        m.add_hint(y[d], int(ld > 0))
        m.add_hint(ydfull[d], int(ld >= agg[d]))
        m.add_hint(ypart[d], int(0 < ld < agg[d]))
    for g, nodes, size in slices:
        m.add_hint(g, int(h[nodes].sum()) // size)
    if choose:
        used = {home[s] for s in x if h[s] > 0}
        for e, var in choose.items():
            m.add_hint(var, int(e in used))
