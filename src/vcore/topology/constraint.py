"""Topology constraints of a gang: one type for Volcano's PodGroup ``networkTopology`` / ``subGroupPolicy`` and
Kueue's TAS pod-template annotations, resolved against the cluster's tree into the native search's arguments.

Mapping (``T`` = the virtual root above the highest tier):

==========================================================  ==========================================================
Volcano PodGroup ``spec.networkTopology``                     constraint
==========================================================  ==========================================================
``{mode: hard, highestTierAllowed: t}``                      hard: one domain of tier <= t, lowest tier first
``{mode: hard, highestTierName: name}``                      the same, the tier named ``name``
``{mode: hard}`` (no tier)                                   none (Volcano's ``IsHardTopologyMode`` is false then)
``{mode: soft}``                                             soft: lowest tier first, never fails for topology
``subGroupPolicy[i]: {subGroupSize: p, networkTopology:``    a sub-group layer: groups of p pods, each in one domain
``{mode: hard, highestTierAllowed: t}}``                     of tier <= t (soft sub-groups are rejected, as Volcano)
==========================================================  ==========================================================

=================================================================  ======================================================
Kueue pod-template annotation (``kueue.x-k8s.io/...``)               constraint
=================================================================  ======================================================
``podset-required-topology: L``                                     hard: one domain of level L exactly (Kueue does not
                                                                    try lower levels first)
``podset-preferred-topology: L``                                    soft: level L first, then higher levels, then
                                                                    several domains
``podset-unconstrained-topology: "true"``                           none
``podset-slice-required-topology: S`` + ``podset-slice-size: p``    a layer: slices of p pods, each in one domain of S
``podset-slice-required-topology-constraints: [{topology, size}]``  nested layers, coarsest first
=================================================================  ======================================================

A level or tier name is a tier's name in the tree: a HyperNode ``tierName`` or, with label levels, the label key.
Errors name the owner (the PodGroup or the pod template) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vcore.errors import TopologyError
from vcore.topology.hypernode import as_mapping, label_requirements
from vcore.topology.tree import TopologyView

__all__ = ["KUEUE_PREFERRED", "KUEUE_REQUIRED", "KUEUE_SLICE_CONSTRAINTS", "KUEUE_SLICE_SIZE", "KUEUE_SLICE_TOPOLOGY",
           "KUEUE_UNCONSTRAINED", "PodGroupTopology", "ResolvedConstraint", "SubGroup", "TierRef",
           "TopologyConstraint", "kueue_constraint", "podgroup_topology"]

KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
KUEUE_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
KUEUE_SLICE_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
KUEUE_SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
KUEUE_SLICE_CONSTRAINTS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"

MODES = ("hard", "soft", "none")
_NETWORK_TOPOLOGY_KEYS = ("mode", "highestTierAllowed", "highestTierName")
_SUBGROUP_KEYS = ("name", "subGroupSize", "minSubGroups", "networkTopology", "labelSelector", "matchLabelKeys")


@dataclass(frozen=True)
class TierRef:
    """A tier given by number (Volcano ``highestTierAllowed``) or by name (``highestTierName``, a Kueue level)."""

    tier: int | None = None
    name: str | None = None

    def row(self, view: TopologyView, owner: str) -> int:
        return view.row_of(self.tier, self.name, owner=owner)

    def __str__(self) -> str:
        return f"tier {self.tier}" if self.name is None else repr(self.name)


@dataclass(frozen=True)
class SubGroup:
    """Groups of ``size`` pods, each inside one domain of tier <= ``limit`` (None: a gang sub-group without a
    topology constraint). ``size`` None means one group of all the pods placed. The selectors are Volcano's (which
    pods form the sub-groups); the search ignores them, the cycle uses them to pick the pods."""

    size: int | None
    limit: TierRef | None
    name: str = ""
    min_sub_groups: int = 0
    label_selector: Mapping[str, Any] | None = None
    match_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResolvedConstraint:
    """The native search's arguments for one gang of ``n_pods`` identical pods."""

    start_row: int
    limit_row: int  # == n_rows: the virtual root
    hard: bool
    layers: tuple[tuple[int, int], ...]  # (size, max_row), finest first
    n_pods: int


@dataclass(frozen=True)
class TopologyConstraint:
    """A gang's topology constraint. ``mode``: ``hard`` (one domain of tier <= ``limit``), ``soft`` (prefer close,
    never fail for topology) or ``none``. ``start`` is the lowest tier the enclosing domain may have (Kueue's level;
    None: the lowest tier). ``subgroups`` are layers every group of the placed pods must respect."""

    mode: str = "soft"
    limit: TierRef | None = None
    start: TierRef | None = None
    subgroups: tuple[SubGroup, ...] = ()
    owner: str = "gang"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise TopologyError(f"{self.owner}: topology mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.mode == "hard" and self.limit is None:
            raise TopologyError(f"{self.owner}: a hard topology constraint needs a tier limit")

    def with_subgroups(self, *subgroups: SubGroup) -> TopologyConstraint:
        return replace(self, subgroups=self.subgroups + tuple(subgroups))

    def resolve(self, view: TopologyView, n_pods: int) -> ResolvedConstraint:
        """The native arguments for ``n_pods`` pods under this cluster's tree; TopologyError naming the owner when
        a tier is above or below the tree, a name is unknown, or the sub-groups do not nest."""
        owner = self.owner
        if isinstance(n_pods, bool) or not isinstance(n_pods, int) or n_pods < 1:
            raise TopologyError(f"{owner}: the number of pods must be a positive integer, got {n_pods!r}")
        top = view.n_rows
        start_row = self.start.row(view, owner) if self.start is not None else 0
        if self.mode == "hard":
            limit_row = self.limit.row(view, owner)
            if start_row > limit_row:
                raise TopologyError(f"{owner}: the level {self.start} is above the limit {self.limit}")
        else:
            limit_row = top
        layers = []
        for sg in self.subgroups:
            if sg.limit is None:
                continue
            where = f"{owner}: sub-group {sg.name}" if sg.name else f"{owner}: slice"
            row = sg.limit.row(view, where)
            size = n_pods if sg.size is None else sg.size
            if self.mode == "hard" and row > limit_row:
                raise TopologyError(f"{where}: its {sg.limit} is above the gang's limit {self.limit}")
            if self.start is not None and row > start_row:
                raise TopologyError(f"{where}: its {sg.limit} is above the gang's level {self.start}")
            layers.append((size, row))
        layers.sort()
        for (size, row), (next_size, next_row) in zip(layers, layers[1:]):
            if next_size % size or next_row < row:
                raise TopologyError(f"{owner}: sub-groups must nest: groups of {size} within tier row {row} do not "
                                    f"divide groups of {next_size} within tier row {next_row}")
        if layers and n_pods % layers[-1][0]:
            raise TopologyError(f"{owner}: {n_pods} pods are not whole groups of {layers[-1][0]}")
        return ResolvedConstraint(start_row, limit_row, self.mode == "hard", tuple(layers), n_pods)


@dataclass(frozen=True)
class PodGroupTopology:
    """A Volcano PodGroup's topology: the gang's constraint, and its ``subGroupPolicy`` entries (each applies to
    the pods its selectors pick: ``constraint.with_subgroups(policy)``)."""

    constraint: TopologyConstraint
    policies: tuple[SubGroup, ...] = field(default_factory=tuple)


# ---------------------------------------------------------------------------------------------------------------
# Volcano PodGroup
# ---------------------------------------------------------------------------------------------------------------
def _int(value: Any, where: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TopologyError(f"{where}: expected an integer, got {value!r}")
    if value < lo:
        raise TopologyError(f"{where}: must be >= {lo}, got {value}")
    return value


def _network_topology(nt: Any, where: str, owner: str) -> tuple[str, TierRef | None]:
    if not isinstance(nt, Mapping):
        raise TopologyError(f"{where}: expected a mapping")
    unknown = set(nt) - set(_NETWORK_TOPOLOGY_KEYS)
    if unknown:
        raise TopologyError(f"{where}.{sorted(unknown)[0]}: unknown field ({', '.join(_NETWORK_TOPOLOGY_KEYS)})")
    mode = nt.get("mode") or "hard"  # the CRD's default
    if mode not in ("hard", "soft"):
        raise TopologyError(f"{where}.mode: must be hard or soft, got {mode!r}")
    tier, name = nt.get("highestTierAllowed"), nt.get("highestTierName")
    if tier is not None and name:
        raise TopologyError(f"{where}: highestTierAllowed and highestTierName cannot be set together")
    if name is not None and (not isinstance(name, str) or not name):
        raise TopologyError(f"{where}.highestTierName: expected a non-empty string")
    if tier is not None:
        return mode, TierRef(tier=_int(tier, f"{where}.highestTierAllowed", 0))
    return mode, TierRef(name=name) if name else None


def podgroup_topology(pg: Any) -> PodGroupTopology:
    """The topology of a ``scheduling.volcano.sh/v1beta1`` PodGroup (dict or client object)."""
    obj = as_mapping(pg, "PodGroup")
    meta = obj.get("metadata") or {}
    owner = f"PodGroup {meta.get('namespace') or 'default'}/{meta.get('name') or '?'}"
    spec = obj.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise TopologyError(f"{owner}: spec: expected a mapping")
    constraint = TopologyConstraint(mode="none", owner=owner)
    nt = spec.get("networkTopology")
    if nt is not None:
        mode, limit = _network_topology(nt, f"{owner}: spec.networkTopology", owner)
        if mode == "soft":
            constraint = TopologyConstraint(mode="soft", owner=owner)
        elif limit is not None:
            constraint = TopologyConstraint(mode="hard", limit=limit, owner=owner)
    policies = []
    raw = spec.get("subGroupPolicy") or []
    if not isinstance(raw, list):
        raise TopologyError(f"{owner}: spec.subGroupPolicy: expected a list")
    for i, p in enumerate(raw):
        where = f"{owner}: spec.subGroupPolicy[{i}]"
        if not isinstance(p, Mapping):
            raise TopologyError(f"{where}: expected a mapping")
        unknown = set(p) - set(_SUBGROUP_KEYS)
        if unknown:
            raise TopologyError(f"{where}.{sorted(unknown)[0]}: unknown field ({', '.join(_SUBGROUP_KEYS)})")
        size = p.get("subGroupSize")
        size = None if size is None else _int(size, f"{where}.subGroupSize", 1)
        limit = None
        if p.get("networkTopology") is not None:
            mode, limit = _network_topology(p["networkTopology"], f"{where}.networkTopology", owner)
            if mode == "soft":
                raise TopologyError(f"{where}.networkTopology.mode: soft is not supported for sub-groups (as Volcano)")
        keys = p.get("matchLabelKeys") or []
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise TopologyError(f"{where}.matchLabelKeys: expected a list of label keys")
        selector = p.get("labelSelector")
        if selector is not None:
            label_requirements(f"{where}.labelSelector", selector, empty_selects_all=True)
        policies.append(SubGroup(size=size, limit=limit, name=str(p.get("name") or f"#{i}"),
                                 min_sub_groups=_int(p.get("minSubGroups") or 0, f"{where}.minSubGroups", 0),
                                 label_selector=selector, match_label_keys=tuple(keys)))
    return PodGroupTopology(constraint, tuple(policies))


# ---------------------------------------------------------------------------------------------------------------
# Kueue TAS annotations
# ---------------------------------------------------------------------------------------------------------------
def _annotations(obj: Any) -> tuple[Mapping[str, Any], str]:
    """(annotations, owner) of a pod / pod template object, or of a plain annotations mapping."""
    if isinstance(obj, Mapping) and "metadata" not in obj and "template" not in obj:
        return obj, "pod template"
    m = as_mapping(obj, "pod template")
    if "template" in m:  # a PodTemplate object or a workload's spec.template
        m = m["template"]
    meta = m.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "?"
    return meta.get("annotations") or {}, f"pod template {name}"


def _slice_size(raw: Any, where: str) -> int:
    try:
        value = int(raw) if isinstance(raw, str) and raw.strip().lstrip("-").isdigit() else raw
    except ValueError:
        value = raw
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TopologyError(f"{where}: expected an integer >= 1, got {raw!r}")
    return value


def kueue_constraint(obj: Any, *, owner: str | None = None) -> TopologyConstraint:
    """The constraint of a pod template carrying Kueue's TAS annotations (or of its annotations mapping)."""
    annotations, default_owner = _annotations(obj)
    owner = owner or default_owner
    required, preferred = annotations.get(KUEUE_REQUIRED), annotations.get(KUEUE_PREFERRED)
    unconstrained = str(annotations.get(KUEUE_UNCONSTRAINED, "")).lower() == "true"
    given = [k for k, v in ((KUEUE_REQUIRED, required), (KUEUE_PREFERRED, preferred),
                            (KUEUE_UNCONSTRAINED, unconstrained or None)) if v]
    if len(given) > 1:
        raise TopologyError(f"{owner}: annotations {' and '.join(given)} are mutually exclusive")
    for key, value in ((KUEUE_REQUIRED, required), (KUEUE_PREFERRED, preferred)):
        if value is not None and (not isinstance(value, str) or not value):
            raise TopologyError(f"{owner}: annotation {key}: expected a topology level (a node label key)")
    slices: list[SubGroup] = []
    slice_topology, slice_size = annotations.get(KUEUE_SLICE_TOPOLOGY), annotations.get(KUEUE_SLICE_SIZE)
    layered = annotations.get(KUEUE_SLICE_CONSTRAINTS)
    if layered is not None:
        if slice_topology is not None or slice_size is not None:
            raise TopologyError(f"{owner}: annotation {KUEUE_SLICE_CONSTRAINTS} excludes {KUEUE_SLICE_TOPOLOGY} and "
                                f"{KUEUE_SLICE_SIZE}")
        slices = _layered_slices(layered, owner)
    elif slice_topology is not None:
        if not isinstance(slice_topology, str) or not slice_topology:
            raise TopologyError(f"{owner}: annotation {KUEUE_SLICE_TOPOLOGY}: expected a topology level")
        if slice_size is None:
            raise TopologyError(f"{owner}: annotation {KUEUE_SLICE_TOPOLOGY} needs {KUEUE_SLICE_SIZE}")
        slices = [SubGroup(size=_slice_size(slice_size, f"{owner}: annotation {KUEUE_SLICE_SIZE}"),
                           limit=TierRef(name=slice_topology))]
    elif slice_size is not None:
        raise TopologyError(f"{owner}: annotation {KUEUE_SLICE_SIZE} needs {KUEUE_SLICE_TOPOLOGY}")
    if required:
        return TopologyConstraint("hard", TierRef(name=required), TierRef(name=required), tuple(slices), owner)
    if preferred:
        return TopologyConstraint("soft", None, TierRef(name=preferred), tuple(slices), owner)
    return TopologyConstraint("none", None, None, tuple(slices), owner)


def _layered_slices(raw: Any, owner: str) -> list[SubGroup]:
    where = f"{owner}: annotation {KUEUE_SLICE_CONSTRAINTS}"
    try:
        entries = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as e:
        raise TopologyError(f"{where}: not valid JSON ({e.msg})") from None
    if not isinstance(entries, list) or not entries:
        raise TopologyError(f"{where}: expected a non-empty JSON list of {{topology, size}}")
    out: list[SubGroup] = []
    seen = set()
    for i, e in enumerate(entries):
        at = f"{where}[{i}]"
        if not isinstance(e, Mapping) or set(e) != {"topology", "size"}:
            raise TopologyError(f"{at}: expected exactly the keys topology and size")
        topology = e["topology"]
        if not isinstance(topology, str) or not topology:
            raise TopologyError(f"{at}.topology: expected a topology level")
        if topology in seen:
            raise TopologyError(f"{at}.topology: {topology!r} listed twice")
        seen.add(topology)
        size = _slice_size(e["size"], f"{at}.size")
        if out and out[-1].size % size:
            raise TopologyError(f"{at}.size: {size} does not divide the coarser layer's {out[-1].size} (coarsest first)")
        out.append(SubGroup(size=size, limit=TierRef(name=topology)))
    return out
