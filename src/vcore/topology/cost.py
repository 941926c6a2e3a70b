"""The quality of a gang placement over the domain tree: what the CP-SAT model minimises and what the benchmarks
and the native-vs-CP-SAT comparison report.

For a placement (pods per node slot) of a gang whose pods fit ``fit`` per slot:

- ``spans[row]``: domains of that tier row holding at least one of the gang's pods (lowest row first); a node in
  no domain of the row counts as a domain of its own (it is no closer to the others);
- ``nodes``: nodes holding at least one pod;
- ``partial``: nodes and domains holding pods yet left with room for another pod of the gang (``0 < load <
  free``): fragments a later gang of the same shape cannot fill whole.

Lexicographic order (``PlacementCost.key``): fewest domains at the highest tier first, down to the lowest tier,
then the least fragmentation (fewest partial nodes and domains), then fewest nodes. A weighted order uses one
weight per term instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PlacementCost", "placement_cost"]


@dataclass(frozen=True)
class PlacementCost:
    spans: tuple[int, ...]
    nodes: int
    partial: int

    def key(self) -> tuple[int, ...]:
        """The lexicographic key: spans from the highest row down, then partial, then nodes."""
        return (*reversed(self.spans), self.partial, self.nodes)

    def weighted(self, tier_spans: tuple[int, ...], nodes: int, fragmentation: int) -> int:
        """sum(weight * term); tier_spans lowest row first, a missing row weighs 1."""
        spans = sum((tier_spans[r] if r < len(tier_spans) else 1) * s for r, s in enumerate(self.spans))
        return spans + nodes * self.nodes + fragmentation * self.partial


def placement_cost(node_topo: np.ndarray, counts: np.ndarray, fit: np.ndarray) -> PlacementCost:
    """The cost of ``counts`` (pods per slot) given ``fit`` (pods of the gang that fitted per slot before it) and the
    tree's ``node_topo`` (int32[rows, n_slots])."""
    counts = np.asarray(counts, dtype=np.int64)
    fit = np.asarray(fit, dtype=np.int64)
    used = counts > 0
    partial = int(np.count_nonzero(used & (counts < fit)))
    spans = []
    for row in node_topo:
        inside = row >= 0
        n = int(row.max()) + 1 if inside.any() else 0
        load = np.bincount(row[inside], weights=counts[inside], minlength=n)
        free = np.bincount(row[inside], weights=fit[inside], minlength=n)
        spans.append(int(np.count_nonzero(load > 0)) + int(np.count_nonzero(used & ~inside)))
        partial += int(np.count_nonzero((load > 0) & (load < free)))
    return PlacementCost(tuple(spans), int(np.count_nonzero(used)), partial)
