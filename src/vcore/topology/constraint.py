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
``{mode: hard, highestTierAllowed: t}}``                     of tier <= t
``subGroupPolicy[i].networkTopology: {mode: soft}``          no layer: Volcano v1.14 bounds a soft sub-group by the
                                                             job's tier, or the whole cluster (adjustNetworkTopology-
                                                             Spec), which the job's own constraint already says
==========================================================  ==========================================================

A Volcano ``highestTierAllowed`` above the tree's highest tier is Volcano's virtual cluster-top HyperNode (one tier
above the highest): the whole cluster.

=================================================================  =====================================================
Kueue pod-template annotation (``kueue.x-k8s.io/...``)               constraint
=================================================================  =====================================================
``podset-required-topology: L``                                     hard: one domain of level L exactly (Kueue does not
                                                                    try lower levels first)
``podset-preferred-topology: L``                                    soft: level L first, then higher levels, then
                                                                    several domains
``podset-unconstrained-topology: "true"``                           none
``podset-slice-required-topology: S`` + ``podset-slice-size: p``    a layer: slices of p pods, each in one domain of S
``podset-slice-required-topology-constraints: [{topology, size}]``  nested layers, coarsest first
=================================================================  =====================================================

A level or tier name is a tier's name in the tree: a HyperNode ``tierName`` or, with label levels, the label key.
Errors name the owner (the PodGroup or the pod template) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vcore.errors import TopologyError
from vcore.topology.hypernode import LabelSelector, as_mapping
from vcore.topology.tree import TopologyView
from vcore.validation import (
    LABEL_KEY,
    Constraint,
    ErrorType,
    Integer,
    ListOf,
    NullsAbsent,
    Record,
    String,
    fail,
    mapping,
)

__all__ = [
    "KUEUE_PREFERRED",
    "KUEUE_REQUIRED",
    "KUEUE_SLICE_CONSTRAINTS",
    "KUEUE_SLICE_SIZE",
    "KUEUE_SLICE_TOPOLOGY",
    "KUEUE_UNCONSTRAINED",
    "PodGroupTopology",
    "ResolvedConstraint",
    "SubGroup",
    "TierRef",
    "TopologyConstraint",
    "kueue_constraint",
    "podgroup_topology",
]

KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
KUEUE_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
KUEUE_SLICE_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
KUEUE_SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
KUEUE_SLICE_CONSTRAINTS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"

MODES = ("hard", "soft", "none")
_INT32 = 2**31 - 1  # Volcano's PodGroup counts and tiers are int32
_NETWORK_TOPOLOGY = NullsAbsent(
    Record(
        {
            "mode": String(choices=("hard", "soft")),
            "highestTierAllowed": Integer(0, _INT32),
            "highestTierName": String(nonempty=True),
        }
    )
)
_SUBGROUP = NullsAbsent(
    Record(
        {
            "name": String(),
            "subGroupSize": Integer(1, _INT32),
            "minSubGroups": Integer(0, _INT32),
            "networkTopology": _NETWORK_TOPOLOGY,
            "labelSelector": LabelSelector(empty_selects_all=True),
            "matchLabelKeys": ListOf(LABEL_KEY),
        }
    )
)
_PODGROUP_SPEC = NullsAbsent(Record({"networkTopology": _NETWORK_TOPOLOGY, "subGroupPolicy": ListOf(_SUBGROUP)}))


@dataclass(frozen=True)
class TierRef:
    """A tier given by number (Volcano ``highestTierAllowed``) or by name (``highestTierName``, a Kueue level).
    ``above_is_cluster``: a number above the tree's highest tier means the whole cluster (Volcano's virtual
    cluster-top HyperNode), not an error."""

    tier: int | None = None
    name: str | None = None
    above_is_cluster: bool = False

    def row(self, view: TopologyView, owner: str) -> int:
        if self.above_is_cluster and self.tier is not None and view.tiers and self.tier > view.tiers[-1]:
            return view.n_rows  # the virtual root: one domain holding every node
        return view.row_of(self.tier, self.name, owner=owner)

    def known(self, view: TopologyView) -> bool:
        """Whether a tier name names a tier of the tree (a number always counts as known)."""
        return self.name is None or self.name in view.tier_names

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
    soft: bool = False  # a soft networkTopology (no limit of its own; Volcano's SubJob model bounds it)


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
        if self.mode == "hard" and self.limit is not None:  # __post_init__: a hard constraint has its limit
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
            if row >= top:
                continue  # within the whole cluster: no constraint
            size = n_pods if sg.size is None else sg.size
            if self.mode == "hard" and row > limit_row:
                raise TopologyError(f"{where}: its {sg.limit} is above the gang's limit {self.limit}")
            if self.start is not None and row > start_row:
                raise TopologyError(f"{where}: its {sg.limit} is above the gang's level {self.start}")
            layers.append((size, row))
        layers.sort()
        for (size, row), (next_size, next_row) in zip(layers, layers[1:]):
            if next_size % size or next_row < row:
                raise TopologyError(
                    f"{owner}: sub-groups must nest: groups of {size} within tier row {row} do not "
                    f"divide groups of {next_size} within tier row {next_row}"
                )
        if layers and n_pods % layers[-1][0]:
            raise TopologyError(f"{owner}: {n_pods} pods are not whole groups of {layers[-1][0]}")
        return ResolvedConstraint(start_row, limit_row, self.mode == "hard", tuple(layers), n_pods)


@dataclass(frozen=True)
class PodGroupTopology:
    """A Volcano PodGroup's topology: the gang's constraint, and its ``subGroupPolicy`` entries (each applies to
    the pods its selectors pick: ``constraint.with_subgroups(policy)``)."""

    constraint: TopologyConstraint
    policies: tuple[SubGroup, ...] = field(default_factory=tuple)

    @property
    def by_labels(self) -> bool:
        """Whether a policy names ``matchLabelKeys``: Volcano then splits the pods into SubJobs by those labels."""
        return any(p.match_label_keys for p in self.policies)


# ---------------------------------------------------------------------------------------------------------------
# Volcano PodGroup
# ---------------------------------------------------------------------------------------------------------------
def _network_topology(nt: Mapping[str, Any], where: str) -> tuple[str, TierRef | None]:
    """(mode, tier limit) of a networkTopology checked by _NETWORK_TOPOLOGY."""
    mode = nt.get("mode", "hard")  # the CRD's default
    tier, name = nt.get("highestTierAllowed"), nt.get("highestTierName")
    if tier is not None and name is not None:
        raise fail(TopologyError, where, "highestTierAllowed and highestTierName cannot be set together")
    if tier is not None:
        return mode, TierRef(tier=tier, above_is_cluster=True)
    return mode, TierRef(name=name) if name is not None else None


def podgroup_topology(pg: Any) -> PodGroupTopology:
    """The topology of a ``scheduling.volcano.sh/v1beta1`` PodGroup (dict or client object)."""
    obj = as_mapping(pg, "PodGroup")
    meta = obj.get("metadata") or {}
    meta = meta if isinstance(meta, Mapping) else {}
    namespace, name = meta.get("namespace") or "default", meta.get("name") or "?"
    owner = f"PodGroup {namespace}/{name}"
    raw = obj.get("spec")
    # The PodGroup's other fields are the batch layer's; only the topology ones are checked here.
    spec = mapping({} if raw is None else raw, f"{owner}: spec", TopologyError)
    topology_fields = {k: spec[k] for k in ("networkTopology", "subGroupPolicy") if k in spec}
    checked = _PODGROUP_SPEC(topology_fields, f"{owner}: spec", TopologyError)
    constraint = TopologyConstraint(mode="none", owner=owner)
    if "networkTopology" in checked:
        mode, limit = _network_topology(checked["networkTopology"], f"{owner}: spec.networkTopology")
        if mode == "soft":
            constraint = TopologyConstraint(mode="soft", owner=owner)
        elif limit is not None:
            constraint = TopologyConstraint(mode="hard", limit=limit, owner=owner)
    policies = []
    for i, p in enumerate(checked.get("subGroupPolicy", ())):
        where = f"{owner}: spec.subGroupPolicy[{i}]"
        limit, soft = None, False
        if "networkTopology" in p:
            mode, limit = _network_topology(p["networkTopology"], f"{where}.networkTopology")
            if mode == "soft":
                limit, soft = None, True  # bounded by the job's own constraint, or by nothing (module docstring)
        selector = spec["subGroupPolicy"][i].get("labelSelector")  # as written: the cycle picks pods with it
        policies.append(
            SubGroup(
                size=p.get("subGroupSize"),
                limit=limit,
                name=p.get("name") or f"#{i}",
                min_sub_groups=p.get("minSubGroups", 0),
                label_selector=selector,
                match_label_keys=tuple(p.get("matchLabelKeys", ())),
                soft=soft,
            )
        )
    return PodGroupTopology(constraint, tuple(policies))


# ---------------------------------------------------------------------------------------------------------------
# Kueue TAS annotations
# ---------------------------------------------------------------------------------------------------------------
def _annotations(obj: Any) -> tuple[Mapping[str, Any], str]:
    """(annotations, owner) of a pod / pod template object, or of a plain annotations mapping."""
    if isinstance(obj, Mapping) and "metadata" not in obj and "template" not in obj:
        return mapping(obj, "pod template: annotations", TopologyError), "pod template"
    m = as_mapping(obj, "pod template")
    if "template" in m:  # a PodTemplate object or a workload's spec.template
        m = mapping(m["template"], "pod template: template", TopologyError)
    meta = m.get("metadata") or {}
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name") or meta.get("generateName") or "?"
    owner = f"pod template {name}"
    raw = meta.get("annotations")
    return ({} if raw is None else mapping(raw, f"{owner}: metadata.annotations", TopologyError)), owner


@dataclass(frozen=True)
class _SliceSize(Constraint[int]):
    """A slice size: an integer >= 1, or an annotation's string of decimal digits."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> int:
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value) <= 20:
            value = int(value)
        return Integer(1, _INT32)(value, path, error)


_SLICE_SIZE = _SliceSize()
_SLICE_LAYER = Record({"topology": String(nonempty=True), "size": _SLICE_SIZE}, required=("topology", "size"))
_LEVEL = String(nonempty=True)


def kueue_constraint(obj: Any, *, owner: str | None = None) -> TopologyConstraint:
    """The constraint of a pod template carrying Kueue's TAS annotations (or of its annotations mapping)."""
    annotations, default_owner = _annotations(obj)
    owner = owner or default_owner
    required, preferred = annotations.get(KUEUE_REQUIRED), annotations.get(KUEUE_PREFERRED)
    unconstrained = str(annotations.get(KUEUE_UNCONSTRAINED, "")).lower() == "true"
    given = [
        k
        for k, v in (
            (KUEUE_REQUIRED, required),
            (KUEUE_PREFERRED, preferred),
            (KUEUE_UNCONSTRAINED, unconstrained or None),
        )
        if v
    ]
    if len(given) > 1:
        raise TopologyError(f"{owner}: annotations {' and '.join(given)} are mutually exclusive")
    for key, value in ((KUEUE_REQUIRED, required), (KUEUE_PREFERRED, preferred)):
        if value is not None:
            _LEVEL(value, f"{owner}: annotation {key}", TopologyError)
    slices: list[SubGroup] = []
    slice_topology, slice_size = annotations.get(KUEUE_SLICE_TOPOLOGY), annotations.get(KUEUE_SLICE_SIZE)
    layered = annotations.get(KUEUE_SLICE_CONSTRAINTS)
    if layered is not None:
        if slice_topology is not None or slice_size is not None:
            raise TopologyError(
                f"{owner}: annotation {KUEUE_SLICE_CONSTRAINTS} excludes {KUEUE_SLICE_TOPOLOGY} and {KUEUE_SLICE_SIZE}"
            )
        slices = _layered_slices(layered, owner)
    elif slice_topology is not None:
        _LEVEL(slice_topology, f"{owner}: annotation {KUEUE_SLICE_TOPOLOGY}", TopologyError)
        if slice_size is None:
            raise TopologyError(f"{owner}: annotation {KUEUE_SLICE_TOPOLOGY} needs {KUEUE_SLICE_SIZE}")
        slices = [
            SubGroup(
                size=_SLICE_SIZE(slice_size, f"{owner}: annotation {KUEUE_SLICE_SIZE}", TopologyError),
                limit=TierRef(name=slice_topology),
            )
        ]
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
        raise fail(TopologyError, where, f"not valid JSON ({e.msg})") from None
    except RecursionError:
        raise fail(TopologyError, where, "not valid JSON (nested too deeply)") from None
    layers = ListOf(_SLICE_LAYER, min_len=1)(entries, where, TopologyError)
    out: list[SubGroup] = []
    seen = set()
    for i, layer in enumerate(layers):
        topology, size = layer["topology"], layer["size"]
        if topology in seen:
            raise fail(TopologyError, f"{where}[{i}].topology", f"{topology!r} listed twice")
        seen.add(topology)
        if out and out[-1].size % size:
            raise fail(
                TopologyError,
                f"{where}[{i}].size",
                f"{size} does not divide the coarser layer's {out[-1].size} (coarsest first)",
            )
        out.append(SubGroup(size=size, limit=TierRef(name=topology)))
    return out
