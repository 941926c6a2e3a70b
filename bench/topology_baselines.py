"""The gang search without vcore's native kernel: numpy for the per-domain aggregation, Python for the choice and
the descent (what a competent engineer would write without a compiled core). The rule is the native one (see
topology_search.cpp): first row with a domain that holds the gang, the tightest there (then fewest free pods, then
name), then Kueue's BestFit down the tree. No sub-group layers, running pods or link state: the benchmarks' gangs
use none.
"""

from __future__ import annotations

import numpy as np


class NumpyTree:
    """The tree arrays a numpy implementation would keep (built once, outside the timed region)."""

    def __init__(self, view, node_names: list[str]) -> None:
        self.topo = np.array(view.node_topo)
        self.row = view.domain_row
        self.parent = view.domain_parent
        self.names = view.domain_names
        self.node_names = node_names
        self.rows, self.n = self.topo.shape
        self.nd = len(self.row)
        self.children = [[] for _ in range(self.nd + 1)]  # index nd: the virtual root
        for d in np.argsort(self.row, kind="stable"):
            if self.row[d] >= 0:
                self.children[self.parent[d] if self.parent[d] >= 0 else self.nd].append(int(d))
        self.leaf = np.full(self.n, -1, dtype=np.int64)
        for r in range(self.rows - 1, -1, -1):
            here = self.topo[r] >= 0
            self.leaf[here] = self.topo[r][here]
        rank = np.empty(self.nd, dtype=np.int64)
        rank[np.argsort(np.array(self.names, dtype=object))] = np.arange(self.nd)
        self.name_rank = rank


def numpy_place_gang(t: NumpyTree, fit: np.ndarray, n_pods: int, start_row: int, limit_row: int, hard: bool):
    """(placed, domain id or -1, row, counts int32[n])."""
    fit64 = fit.astype(np.int64)
    agg = np.zeros(t.nd, dtype=np.int64)
    for r in range(t.rows):
        inside = t.topo[r] >= 0
        agg += np.bincount(t.topo[r][inside], weights=fit64[inside], minlength=t.nd).astype(np.int64)
    chosen, chosen_row = -1, -1
    for r in range(start_row, min(limit_row, t.rows - 1) + 1):
        cand = np.flatnonzero((t.row == r) & (agg >= n_pods))
        if cand.size:
            order = np.lexsort((t.name_rank[cand], agg[cand]))  # slack order == agg order for one gang
            chosen, chosen_row = int(cand[order[0]]), r
            break
    if chosen_row < 0 and (not hard or limit_row == t.rows) and fit64.sum() >= n_pods:
        chosen_row = t.rows
    counts = np.zeros(t.n, dtype=np.int32)
    if chosen_row < 0:
        return False, -1, -1, counts
    if chosen_row < t.rows:
        inside = (t.topo[chosen_row] == chosen) & (fit > 0)
    else:
        inside = fit > 0
    slots = np.flatnonzero(inside)
    direct: dict[int, list[int]] = {}
    for s, leaf in zip(slots.tolist(), t.leaf[slots].tolist()):
        direct.setdefault(leaf if leaf >= 0 else t.nd, []).append(s)

    def place(d: int, pods: int) -> None:
        key = d if d >= 0 else t.nd
        ents = [(int(agg[c]), int(agg[c]), t.names[c], c, False) for c in t.children[key] if agg[c] > 0]
        ents += [(int(fit[s]), int(fit[s]), t.node_names[s], s, True) for s in direct.get(key, [])]
        ents.sort(key=lambda e: (-e[0], e[1], e[2]))
        remaining = pods
        i = 0
        while remaining:
            cap = ents[i][0]
            if cap >= remaining:
                j = i
                for k in range(i + 1, len(ents)):
                    if remaining <= ents[k][0] < ents[j][0]:
                        j = k
                e, take = ents[j], remaining
            else:
                e, take = ents[i], cap
            if e[4]:
                counts[e[3]] += take
            else:
                place(e[3], take)
            remaining -= take
            i += 1

    place(chosen if chosen_row < t.rows else -1, n_pods)
    return True, chosen if chosen_row < t.rows else -1, chosen_row, counts
