"""Network-topology-aware gang placement.

- The tree: Volcano HyperNodes (``Cluster.add_hypernode`` / ``update_hypernode`` / ``remove_hypernode`` /
  ``set_hypernodes``) or node labels as levels (``Cluster.set_topology_levels``), held natively as one domain id per
  node slot per tier (``Cluster.topology.node_topo``) and the domain tree (:class:`TopologyView`).
- Constraints: :func:`podgroup_topology` (Volcano PodGroup ``networkTopology`` and ``subGroupPolicy``) and
  :func:`kueue_constraint` (Kueue TAS annotations) give one :class:`TopologyConstraint`.
- Placement: :func:`place_gang` (native search, then the CP-SAT model of :mod:`vcore.topology.cpsat` as the
  :class:`TopologyPlacementArgs` say), :func:`node_scores` (Volcano's network-topology node score) and
  :func:`binpack_scores` (its HyperNode binpack score of pods without a constraint).
"""

from vcore.topology.args import TopologyPlacementArgs, parse_topology_args
from vcore.topology.constraint import (
    PodGroupTopology,
    ResolvedConstraint,
    SubGroup,
    TierRef,
    TopologyConstraint,
    kueue_constraint,
    podgroup_topology,
)
from vcore.topology.cost import PlacementCost, placement_cost
from vcore.topology.search import GangPlacement, binpack_scores, fit_counts, node_scores, place_gang, valid_placement
from vcore.topology.tree import TopologyView

__all__ = [
    "GangPlacement",
    "PlacementCost",
    "PodGroupTopology",
    "ResolvedConstraint",
    "SubGroup",
    "TierRef",
    "TopologyConstraint",
    "TopologyPlacementArgs",
    "TopologyView",
    "binpack_scores",
    "fit_counts",
    "kueue_constraint",
    "node_scores",
    "parse_topology_args",
    "place_gang",
    "placement_cost",
    "podgroup_topology",
    "valid_placement",
]
