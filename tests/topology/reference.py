"""Pure-Python references of the native topology: the tree from HyperNodes, the gang search, the node score.

Written from the specification (vcore/_native/core/include/vcore/topology.h and the module docstring of
topology_search.cpp: Kueue's BestFit over the domain tree; Volcano's network-topology-aware score), not from the
C++ code, and compared with it by hypothesis. Inputs are plain lists; domains are named, so results compare by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Tree:
    tiers: list[int]  # tier number per row, ascending
    row: dict[str, int]  # domain -> row
    parent: dict[str, str | None]  # domain -> parent domain (None at the top)
    column: dict[str, list[str | None]]  # node -> domain per row
    tier_names: list[str] = field(default_factory=list)
    bandwidth: dict[str, float] = field(default_factory=dict)
    congestion: dict[str, float] = field(default_factory=dict)

    def leaf(self, node: str) -> str | None:
        return next((d for d in self.column.get(node, []) if d is not None), None)

    def children(self, d: str | None) -> list[str]:
        return [c for c, p in self.parent.items() if p == d]

    def lca(self, a: str | None, b: str | None) -> str | None:
        while a is not None and b is not None and a != b:
            ra, rb = self.row[a], self.row[b]
            if ra <= rb:
                a = self.parent[a]
            if rb <= ra:
                b = self.parent[b]
        return a if a == b else None


def _label_match(labels: dict[str, str], selector: list[tuple[str, str, list[str]]]) -> bool:
    for key, op, values in selector:
        v = labels.get(key)
        ok = {
            "In": v is not None and v in values,
            "NotIn": v is None or v not in values,
            "Exists": v is not None,
            "DoesNotExist": v is None,
        }[op]
        if not ok:
            return False
    return True


def tree_from_hypernodes(hypernodes: list[dict], nodes: dict[str, dict[str, str]]) -> Tree:
    """hypernodes: [{"name", "tier", "members": [(type, selector, value, labels)], ...}] as hypernode_spec() gives;
    nodes: {name: labels}. Raises ValueError on what the native topology rejects (not the same words)."""
    tiers = sorted({h["tier"] for h in hypernodes})
    row = {h["name"]: tiers.index(h["tier"]) for h in hypernodes}
    parent: dict[str, str | None] = {h["name"]: None for h in hypernodes}
    direct: dict[str, list[str]] = {n: [] for n in nodes}
    for h in hypernodes:
        listed = set()
        for mtype, selector, value, labels in h["members"]:
            if mtype == "HyperNode":
                if value in listed:  # listing a member twice is listing it once
                    continue
                listed.add(value)
                if value not in parent:  # not there (yet): no error, as Volcano's cache (linked once it is)
                    continue
                if parent[value] is not None or value == h["name"]:
                    raise ValueError(h["name"])
                parent[value] = h["name"]
                continue
            if selector == "exactMatch":
                matched = [value] if value in nodes else []
            elif selector == "regexMatch":
                matched = [n for n in nodes if re.search(value, n)]
            else:
                matched = [n for n, lab in nodes.items() if _label_match(lab, labels)]
            for n in matched:  # none: the HyperNode is kept without nodes (Volcano's member selection)
                direct[n].append(h["name"])
    for name, p in parent.items():
        seen = {name}
        while p is not None:
            if p in seen:
                raise ValueError("cycle")
            seen.add(p)
            p = parent[p]
    tier_of = {h["name"]: h["tier"] for h in hypernodes}
    for name, p in parent.items():
        if p is not None and tier_of[name] >= tier_of[p]:
            raise ValueError(name)
    column: dict[str, list[str | None]] = {}
    for n, ds in direct.items():
        col: list[str | None] = [None] * len(tiers)
        for d in ds:
            a: str | None = d
            while a is not None:
                if col[row[a]] not in (None, a):
                    raise ValueError(n)
                col[row[a]] = a
                a = parent[a]
        low = next((r for r, d in enumerate(col) if d is not None), None)
        if low is not None:
            chain: list[str | None] = [None] * len(tiers)
            a = col[low]
            while a is not None:
                chain[row[a]] = a
                a = parent[a]
            if chain[low:] != col[low:]:
                raise ValueError(n)
        column[n] = col
    names = {}
    for h in hypernodes:
        if h.get("tier_name"):
            names[h["tier"]] = h["tier_name"]
    return Tree(
        tiers,
        row,
        parent,
        column,
        [names.get(t, "") for t in tiers],
        {h["name"]: h.get("bandwidth_gbps", -1) for h in hypernodes},
        {h["name"]: h.get("congestion", -1) for h in hypernodes},
    )


def tree_from_levels(levels: list[str], nodes: dict[str, dict[str, str]]) -> Tree:
    """Kueue-style label levels, highest first; a domain is the path of values (named 'a/b/c')."""
    rows = len(levels)
    row: dict[str, int] = {}
    parent: dict[str, str | None] = {}
    column: dict[str, list[str | None]] = {}
    for n, labels in nodes.items():
        if not all(k in labels for k in levels):
            column[n] = [None] * rows
            continue
        col: list[str | None] = [None] * rows
        up = None
        for i, key in enumerate(levels):
            name = labels[key] if up is None else f"{up}/{labels[key]}"
            r = rows - 1 - i
            row[name] = r
            parent[name] = up
            col[r] = name
            up = name
        column[n] = col
    return Tree(list(range(1, rows + 1)), row, parent, column, list(reversed(levels)))


@dataclass
class Result:
    placed: bool
    domain: str | None
    row: int | None
    counts: dict[str, int]
    reason: str


def place_gang(
    tree: Tree,
    fit: dict[str, int],
    n_pods: int,
    start_row: int,
    limit_row: int,
    hard: bool,
    layers: list[tuple[int, int]],
    running: dict[str, int] | None = None,
    bandwidth_weight: float = 0.0,
    congestion_weight: float = 0.0,
    tie_slack: int = 0,
) -> Result:
    rows = len(tree.tiers)
    nodes = [n for n in fit if fit[n] > 0]
    agg = {d: 0 for d in tree.row}
    for n in nodes:
        for d in tree.column.get(n, []):
            if d is not None:
                agg[d] += fit[n]
    root_agg = sum(fit[n] for n in nodes)

    def units(d: str | None, k: int) -> int:  # groups of layer k a domain (None: the root) can hold
        size, max_row = layers[k]
        r = rows if d is None else tree.row[d]
        if r <= max_row:
            if k == 0:
                return agg[d] // size
            return units(d, k - 1) // (size // layers[k - 1][0])
        return sum(units(c, k) for c in tree.children(d))

    def capacity(d: str | None) -> int:
        if layers:
            return units(d, len(layers) - 1)
        return root_agg if d is None else agg[d]

    top = layers[-1][0] if layers else 1
    need = n_pods // top
    anchor: str | None | bool = False  # False: nothing runs
    used = [n for n, c in (running or {}).items() if c > 0]
    if used:
        anchor = None
        for r in range(rows):
            ds = {tree.column[n][r] for n in used}
            if len(ds) == 1 and None not in ds:
                anchor = ds.pop()
                break

    def link(d: str, max_bw: int) -> float:
        if bandwidth_weight == 0 and congestion_weight == 0:
            return 0.0
        bw = tree.bandwidth.get(d, -1)
        cg = tree.congestion.get(d, -1)
        return bandwidth_weight * (bw / max_bw if bw > 0 and max_bw > 0 else 0.0) - congestion_weight * (
            cg if cg > 0 else 0.0
        )

    chosen: str | None = None
    chosen_row = None
    for r in range(start_row, min(limit_row, rows - 1) + 1):
        if anchor is False:
            cands = sorted(d for d, dr in tree.row.items() if dr == r)
        elif anchor is not None and tree.row[anchor] <= r:
            a = anchor
            while a is not None and tree.row[a] < r:
                a = tree.parent[a]
            cands = [a] if a is not None and tree.row[a] == r else []
        else:
            cands = []
        feasible = [d for d in cands if capacity(d) >= need]
        if not feasible:
            continue
        min_slack = min(capacity(d) - need for d in feasible)
        max_bw = max([tree.bandwidth.get(d, -1) for d in feasible] + [0])
        tied = [d for d in feasible if capacity(d) - need <= min_slack + tie_slack]
        links = {d: link(d, max_bw) for d in tied}
        chosen = min(tied, key=lambda d: (-links[d], capacity(d) - need, agg[d], d))
        chosen_row = r
        break
    if chosen_row is None and (not hard or limit_row == rows) and capacity(None) >= need:
        chosen_row = rows
    if chosen_row is None:
        return Result(
            False,
            None,
            None,
            {},
            "InsufficientCapacity" if (not hard or limit_row == rows) else "TopologyUnsatisfiable",
        )
    counts: dict[str, int] = {}

    def place(d: str | None, pods: int) -> None:
        r = rows if d is None else tree.row[d]
        active = [k for k, (_, mr) in enumerate(layers) if mr < r]
        k = active[-1] if active else -1
        unit = layers[k][0] if k >= 0 else 1
        ents = []
        for c in tree.children(d):
            cap = units(c, k) if k >= 0 else agg[c]
            if cap > 0:
                ents.append((cap, agg[c], c, False))
        if k < 0:
            for n in nodes:
                if tree.leaf(n) == d:
                    ents.append((fit[n], fit[n], n, True))
        ents.sort(key=lambda e: (-e[0], e[1], e[2]))
        remaining = pods // unit
        i = 0
        while remaining > 0:
            cap, _, name, is_node = ents[i]
            if cap >= remaining:
                fits = [e for e in ents[i:] if e[0] >= remaining]
                smallest = min(e[0] for e in fits)
                cap, _, name, is_node = next(e for e in fits if e[0] == smallest)
                take = remaining
            else:
                take = cap
            if is_node:
                counts[name] = counts.get(name, 0) + take
            else:
                place(name, take * unit)
            remaining -= take
            i += 1

    place(None if chosen_row == rows else chosen, n_pods)
    return Result(True, None if chosen_row == rows else chosen, chosen_row, counts, "")


def node_scores(
    tree: Tree, nodes: list[str], job_pods: dict[str, int], job_tasks: int, weight: float
) -> dict[str, float]:
    """Volcano's network-topology-aware node score (see SCORING.md), with its task-count tie-break."""
    out = {n: 0.0 for n in nodes}
    if not tree.tiers:
        return out
    used = [n for n, c in job_pods.items() if c > 0]
    if not used:
        return out
    allocated = None
    for i, n in enumerate(used):
        leaf = tree.leaf(n)
        if leaf is None:
            return out
        allocated = leaf if i == 0 else tree.lca(allocated, leaf)
        if allocated is None:
            return out
    lo, top = tree.tiers[0], tree.tiers[-1] + 1  # Volcano's virtual cluster-wide HyperNode tops the tier scale
    for n in nodes:
        leaf = tree.leaf(n)
        if leaf is None:
            continue
        if leaf == allocated:
            s = 100.0
        else:
            lca = tree.lca(allocated, leaf)
            s = 0.0 if lca is None else 100.0 * (top - tree.tiers[tree.row[lca]]) / (top - lo)
        out[n] = s * weight
    best = max(out.values(), default=0.0)
    top = [n for n in nodes if out[n] == best]
    if len(top) > 1 and job_tasks > 0:
        for n in top:
            leaf = tree.leaf(n)
            if leaf is None:
                continue
            inside = sum(c for m, c in job_pods.items() if leaf in tree.column.get(m, []))
            out[n] += 100.0 * inside / job_tasks * weight
    return out


def binpack_scores(
    tree: Tree,
    nodes: list[str],
    alloc: dict[str, dict[str, int]],
    used: dict[str, dict[str, int]],
    resources: list[tuple[str, int, int]],
    fading: float,
    weight: float,
) -> dict[str, float]:
    """Volcano's HyperNode binpack score of a pod without a network topology (network-topology-aware, normal
    pods): ``resources`` [(name, request, weight)]; ``alloc``/``used`` per node and resource."""
    out = {n: 0.0 for n in nodes}
    weight_sum = sum(w for _, _, w in resources)
    if not tree.tiers or weight_sum == 0:
        return out

    def fullness(members: list[str]) -> float:
        total = 0.0
        for name, request, w in resources:
            a = float(sum(alloc[n].get(name, 0) for n in members))
            u = float(sum(used[n].get(name, 0) for n in members)) + request
            if u > a:
                return 0.0
            if a > 0:
                total += w * u / a
        return total / weight_sum

    full = {d: fullness([n for n in nodes if d in tree.column.get(n, [])]) for d in tree.row}
    top = tree.tiers[-1] + 1  # Volcano's virtual HyperNode of every node, one tier above the highest
    tier_weight = {}
    for tier in range(tree.tiers[0], top + 1):
        tier_weight[tier] = fading ** (tier - 1) if fading > 0 else float(tier == 1)
    tier_sum = sum(tier_weight.values())
    if tier_sum <= 0:
        return out
    absent = sum(w for t, w in tier_weight.items() if t not in tree.tiers and t != top)
    cluster = fullness(nodes)
    for n in nodes:
        total = absent + tier_weight[top] * cluster
        for r, tier in enumerate(tree.tiers):
            d = tree.column.get(n, [None] * len(tree.tiers))[r]
            total += tier_weight[tier] * (full[d] if d is not None else 1.0)
        out[n] = total * (100.0 * weight / tier_sum)
    return out
