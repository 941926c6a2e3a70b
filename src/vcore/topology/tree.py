"""The cluster's network topology from Python: its mutations (HyperNodes or label levels) and a read-only view.

The tree itself is native (see ``vcore/_native/core/include/vcore/topology.h``): rows are the distinct tiers in
ascending order (row 0 = the lowest tier), a virtual root sits above the highest, and ``node_topo[row, slot]`` is
the domain of a node slot at that row (-1: none). :class:`TopologyView` is what ``Cluster.topology`` returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from vcore._native import _core
from vcore.errors import HyperNodeNotFoundError, TopologyError
from vcore.topology.hypernode import hypernode_name, hypernode_spec
from vcore.topology.patterns import retry_stale, with_slots
from vcore.validation import LABEL_KEY, ListOf

if TYPE_CHECKING:
    from vcore._native._core import _TopologyTree

__all__ = ["TopologyView", "add_hypernode", "remove_hypernode", "set_hypernodes", "set_levels", "update_hypernode"]

# Label keys from the highest level to the lowest (Kueue Topology levels).
_LEVELS = ListOf(LABEL_KEY)


def _native(call: Callable[..., None], *args: Any) -> None:
    """Run a native tree mutation, raising vcore's errors (the native message names the HyperNode or node)."""
    try:
        call(*args)
    except KeyError as e:
        raise HyperNodeNotFoundError(e.args[0] if e.args else str(e)) from None
    except ValueError as e:
        raise TopologyError(str(e)) from None


def _write(call: Callable[..., None], state: _core.ClusterState, specs: list[dict[str, Any]], one: bool) -> None:
    """A native HyperNode write with its regexMatch members matched against the nodes (again if they change)."""

    def attempt() -> None:
        native, membership = with_slots(state, specs)
        _native(call, state, native[0] if one else native, membership)

    retry_stale(attempt)


def add_hypernode(state: _core.ClusterState, hn: Any) -> None:
    _write(_core.topology.add_hypernode, state, [hypernode_spec(hn)], True)


def update_hypernode(state: _core.ClusterState, hn: Any) -> None:
    _write(_core.topology.update_hypernode, state, [hypernode_spec(hn)], True)


def remove_hypernode(state: _core.ClusterState, hn: Any) -> None:
    _native(_core.topology.remove_hypernode, state, hypernode_name(hn))


def set_hypernodes(state: _core.ClusterState, hns: Iterable[Any]) -> None:
    if isinstance(hns, (str, bytes)) or not isinstance(hns, Iterable):
        raise TypeError(f"HyperNodes: expected a list of HyperNode objects, got {type(hns).__name__}")
    _write(_core.topology.set_hypernodes, state, [hypernode_spec(h) for h in hns], False)


def set_levels(state: _core.ClusterState, levels: Sequence[str]) -> None:
    if isinstance(levels, str) or not isinstance(levels, Sequence):
        raise TypeError(f"topology levels: expected a list of node label keys, got {type(levels).__name__}")
    _native(_core.topology.set_levels, state, list(_LEVELS(levels, "topology levels", TopologyError)))


class TopologyView:
    """A snapshot of the domain tree, plus the live ``node_topo`` view.

    ``tiers[row]`` is the tier number of a row and ``tier_names[row]`` its name (HyperNode ``tierName``, or the
    label key of a level); domains are indexed by id (``domain_names``, ``domain_row``, ``domain_parent`` -1 at the
    top, ``domain_tier``); a free id has row -1 and an empty name. ``generation`` changes whenever the tree or the
    storage of ``node_topo`` does: take a new view then.
    """

    def __init__(self, state: _core.ClusterState) -> None:
        self._state = state
        t = _core.topology.tiers(state)
        self.tiers: list[int] = t["tiers"]
        self.tier_names: list[str] = t["tier_names"]
        self.levels: list[str] = t["levels"]
        self.generation: int = t["generation"]
        self._index: dict[str, int] | None = None

    @cached_property
    def _tree(self) -> _TopologyTree:  # the domain arrays, copied on first use
        return _core.topology.tree(self._state)

    @property
    def domain_names(self) -> list[str]:
        return self._tree["domain_names"]

    @property
    def domain_row(self) -> np.ndarray:
        return self._tree["domain_row"]

    @property
    def domain_parent(self) -> np.ndarray:
        return self._tree["domain_parent"]

    @property
    def domain_bandwidth_gbps(self) -> np.ndarray:
        return self._tree["domain_bandwidth_gbps"]

    @property
    def domain_congestion(self) -> np.ndarray:
        return self._tree["domain_congestion"]

    @property
    def node_leaf(self) -> np.ndarray:
        """int32 per node slot: its lowest domain, -1 when it is in none."""
        return self._tree["node_leaf"]

    @property
    def node_topo(self) -> np.ndarray:
        """Read-only int32[n_rows, n_slots] sharing memory with the core; -1 where a node has no domain."""
        return _core.topology.node_topo(self._state)

    @property
    def n_rows(self) -> int:
        return len(self.tiers)

    @property
    def n_domains(self) -> int:
        return len(self.domain_names)

    @property
    def domain_tier(self) -> np.ndarray:
        """int64 tier number per domain id (-1 for a free id)."""
        tiers = np.asarray(self.tiers + [-1], dtype=np.int64)
        return tiers[self.domain_row]

    def domain_index(self, name: str) -> int:
        if self._index is None:
            self._index = {n: d for d, n in enumerate(self.domain_names) if n}
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"topology domain {name}: not found") from None

    def row_of(self, tier: int | None = None, tier_name: str | None = None, *, owner: str = "topology") -> int:
        """The highest row whose tier is <= ``tier``, or the row named ``tier_name``; TopologyError naming
        ``owner`` when the tree has no such tier (above the highest, below the lowest, or an unknown name)."""
        if tier_name is not None:
            for row, name in enumerate(self.tier_names):
                if name == tier_name:
                    return row
            known = ", ".join(repr(n) for n in self.tier_names if n) or "none"
            raise TopologyError(f"{owner}: no tier named {tier_name!r} in the topology (tier names: {known})")
        if tier is None:
            raise TopologyError(f"{owner}: a tier or a tier name is required")
        if not self.tiers:
            raise TopologyError(f"{owner}: tier {tier} is above the topology, which has no tiers")
        if tier > self.tiers[-1]:
            raise TopologyError(f"{owner}: tier {tier} is above the topology (highest tier {self.tiers[-1]})")
        if tier < self.tiers[0]:
            raise TopologyError(f"{owner}: tier {tier} is below the topology (lowest tier {self.tiers[0]})")
        return max(row for row, t in enumerate(self.tiers) if t <= tier)

    def __repr__(self) -> str:
        live = sum(1 for n in self.domain_names if n)
        return f"<TopologyView tiers={self.tiers} domains={live}>"
