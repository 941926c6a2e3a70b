"""Typed arguments of topology-aware gang placement: the arguments of Volcano's ``network-topology-aware`` plugin
(in a cycle configuration's tiers) and vcore's solver arguments beside them, validated::

    # Volcano's keys
    weight: 1                 # the plugin's node-score weight (soft mode's LCA-tier score, the HyperNode binpack
                              #   score of pods without a topology constraint); scores are 0..100 * weight
    hypernode.binpack.cpu: 1  # HyperNode binpack: per-resource weights of (used + request) / allocatable
    hypernode.binpack.memory: 1
    hypernode.binpack.resources: nvidia.com/gpu, example.com/foo   # further resources, comma-separated
    hypernode.binpack.resources.nvidia.com/gpu: 2                  # their weights (default 1)
    hypernode.binpack.normal-pod.enable: true   # score nodes of pods without a topology constraint by how full
    hypernode.binpack.normal-pod.fading: 0.8    #   their HyperNodes are; tier t weighs fading ** (t - 1)
    # vcore's keys
    solver: auto              # native | cpsat | auto (native first; CP-SAT when native fails a hard constraint or
                              #   the gang is flagged for optimisation)
    timeLimitSeconds: 1.0     # CP-SAT wall-time limit per gang
    relativeGap: 0.0          # CP-SAT stops when (objective - bound) / objective <= this
    workers: 1                # CP-SAT search workers
    bandwidthWeight: 0        # link state (HyperNode annotations) among equally tight domains of one tier:
    congestionWeight: 0       #   score = bandwidthWeight * bandwidth / max bandwidth - congestionWeight * congestion
    tieSlack: 0               # domains up to this many pods (groups) looser than the tightest count as tied
    objective: lexicographic  # CP-SAT: lexicographic (fewest domains at the highest tier first, ..., then
                              #   partially used nodes and domains, then nodes) or weighted (objectiveWeights)
    objectiveWeights: {tierSpans: [1, 10, 100], nodes: 0, fragmentation: 1}   # weighted only; tierSpans lowest first
    candidateDomains: 8       # CP-SAT considers the tightest this many feasible domains of the native search's row
                              #   (always including the native choice)

A value of one of Volcano's keys that Volcano's plugin cannot use (getPriorityWeight, getNormalPodConfig: a weight
that is not a non-negative integer, an enable that is not a boolean, a negative fading, a resource weight for a
resource not listed) is replaced by Volcano's default with a vcore.ProfileWarning, as Volcano logs and goes on. Any
other unknown key or bad value is a vcore.ProfileError naming the field.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError, ProfileWarning
from vcore.plugins.binpack import volcano_resource_list
from vcore.validation import (
    Boolean,
    Constraint,
    Integer,
    ListOf,
    Number,
    Record,
    String,
    fail,
    go_parse_bool,
    join,
    mapping,
    unknown_key,
)

__all__ = ["OBJECTIVES", "SOLVERS", "TopologyPlacementArgs", "parse_topology_args", "with_volcano_defaults"]

SOLVERS = ("native", "cpsat", "auto")
OBJECTIVES = ("lexicographic", "weighted")
_BINPACK = "hypernode.binpack."
_RESOURCES = _BINPACK + "resources"
_NORMAL_ENABLE, _NORMAL_FADING = _BINPACK + "normal-pod.enable", _BINPACK + "normal-pod.fading"
#: Volcano's defaults (network-topology-aware: DefaultWeight, DefaultNormalPodEnable, DefaultNormalPodFading).
DEFAULT_BINPACK = (("cpu", 1), ("memory", 1))
DEFAULT_FADING = 0.8
_BINPACK_WEIGHT = Integer(0, 10**6)
_OBJECTIVE_WEIGHT = Integer(0, 10**9)
#: What each key must be (besides ``hypernode.binpack.resources.<name>``, a listed resource's weight).
_FIELDS: dict[str, Constraint[Any]] = {
    "solver": String(choices=SOLVERS),
    "timeLimitSeconds": Number(0, 3600, open_lo=True),
    "relativeGap": Number(0, 1),
    "workers": Integer(1, 64),
    "bandwidthWeight": Number(0, 1e6),
    "congestionWeight": Number(0, 1e6),
    "tieSlack": Integer(0, 2**31 - 1),
    "objective": String(choices=OBJECTIVES),
    "objectiveWeights": Record(
        {"tierSpans": ListOf(_OBJECTIVE_WEIGHT), "nodes": _OBJECTIVE_WEIGHT, "fragmentation": _OBJECTIVE_WEIGHT}
    ),
    "candidateDomains": Integer(1, 1 << 20),
    "weight": Integer(0, 10**6),
    _BINPACK + "cpu": _BINPACK_WEIGHT,
    _BINPACK + "memory": _BINPACK_WEIGHT,
    _RESOURCES: String(),
    _NORMAL_ENABLE: Boolean(),
    _NORMAL_FADING: Number(0, 1e6),
}
#: The keys that set one TopologyPlacementArgs field as they are.
_ATTRIBUTES = {
    "solver": "solver",
    "timeLimitSeconds": "time_limit_seconds",
    "relativeGap": "relative_gap",
    "workers": "workers",
    "bandwidthWeight": "bandwidth_weight",
    "congestionWeight": "congestion_weight",
    "tieSlack": "tie_slack",
    "objective": "objective",
    "candidateDomains": "candidate_domains",
    "weight": "node_score_weight",
    _NORMAL_ENABLE: "normal_pod_binpack",
    _NORMAL_FADING: "normal_pod_fading",
}


@dataclass(frozen=True)
class TopologyPlacementArgs:
    solver: str = "auto"
    time_limit_seconds: float = 1.0
    relative_gap: float = 0.0
    workers: int = 1
    bandwidth_weight: float = 0.0
    congestion_weight: float = 0.0
    tie_slack: int = 0
    objective: str = "lexicographic"
    tier_span_weights: tuple[int, ...] = ()  # weighted objective: per tier row, lowest first (missing rows: 1)
    nodes_weight: int = 0
    fragmentation_weight: int = 1
    candidate_domains: int = 8
    node_score_weight: int = 1  # Volcano's weight
    binpack_weights: tuple[tuple[str, int], ...] = DEFAULT_BINPACK  # (resource, weight), cpu and memory first
    normal_pod_binpack: bool = True
    normal_pod_fading: float = DEFAULT_FADING

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "solver": self.solver,
            "timeLimitSeconds": self.time_limit_seconds,
            "relativeGap": self.relative_gap,
            "workers": self.workers,
            "bandwidthWeight": self.bandwidth_weight,
            "congestionWeight": self.congestion_weight,
            "tieSlack": self.tie_slack,
            "objective": self.objective,
            "candidateDomains": self.candidate_domains,
            "weight": self.node_score_weight,
            _NORMAL_ENABLE: self.normal_pod_binpack,
            _NORMAL_FADING: self.normal_pod_fading,
        }
        extra = [name for name, _ in self.binpack_weights if name not in ("cpu", "memory")]
        for name, weight in self.binpack_weights:
            out[_BINPACK + name if name in ("cpu", "memory") else f"{_RESOURCES}.{name}"] = weight
        if extra:
            out[_RESOURCES] = ", ".join(extra)
        if self.objective == "weighted":
            out["objectiveWeights"] = {
                "tierSpans": list(self.tier_span_weights),
                "nodes": self.nodes_weight,
                "fragmentation": self.fragmentation_weight,
            }
        return out


def parse_topology_args(args: Mapping[str, Any] | None, path: str = "args") -> TopologyPlacementArgs:
    """Validate topology placement arguments; ``path`` prefixes the field names in errors (ProfileError) and in
    warnings (ProfileWarning: a value of Volcano's keys replaced by its default, see with_volcano_defaults)."""
    if args is None:
        return TopologyPlacementArgs()
    args, notes = with_volcano_defaults(mapping(args, path, ProfileError), path)
    for note in notes:
        warnings.warn(note, ProfileWarning, stacklevel=2)
    checked: dict[str, Any] = {}
    for key, value in args.items():
        at = join(path, key)
        if key in _FIELDS:
            checked[key] = _FIELDS[key](value, at, ProfileError)
        elif key.startswith(_RESOURCES + "."):  # the weight of a resource listed in hypernode.binpack.resources
            checked[key] = _BINPACK_WEIGHT(value, at, ProfileError)
        else:
            raise unknown_key(at, key, tuple(_FIELDS), ProfileError)
    extra = _binpack_resources(checked.get(_RESOURCES))
    kw: dict[str, Any] = {_ATTRIBUTES[k]: v for k, v in checked.items() if k in _ATTRIBUTES}
    kw["binpack_weights"] = tuple(
        (name, checked.get(f"{_RESOURCES}.{name}" if name in extra else _BINPACK + name, 1))
        for name in ("cpu", "memory", *extra)
    )
    weights = checked.get("objectiveWeights")
    if weights is not None:
        if kw.get("objective", TopologyPlacementArgs.objective) != "weighted":
            raise fail(ProfileError, join(path, "objectiveWeights"), "only with objective: weighted")
        kw["tier_span_weights"] = weights.get("tierSpans", ())
        if "nodes" in weights:
            kw["nodes_weight"] = weights["nodes"]
        if "fragmentation" in weights:
            kw["fragmentation_weight"] = weights["fragmentation"]
    return TopologyPlacementArgs(**kw)


def with_volcano_defaults(args: Mapping[str, Any], path: str) -> tuple[dict[str, Any], list[str]]:
    """The arguments as Volcano's plugin reads its own keys (framework.Arguments' GetInt, GetBool, GetFloat64, then
    getPriorityWeight's and getNormalPodConfig's checks): a value it cannot use is left out, so its default applies,
    with a note saying so. vcore's own keys are left to parse_topology_args."""
    out = dict(args)
    notes: list[str] = []

    def default(key: str, why: str) -> None:
        notes.append(f"{join(path, key)}: {why}; the network-topology-aware plugin uses its default, as Volcano's does")

    def drop(key: str, why: str) -> None:
        default(key, why)
        del out[key]

    def weight(key: str) -> None:
        value = out[key]
        if type(value) is not int:  # GetInt: an int, nothing else (a bool neither)
            drop(key, f"{value!r} is not an integer")
        elif value < 0:
            drop(key, f"{value} is negative")

    for key in ("weight", _BINPACK + "cpu", _BINPACK + "memory"):
        if key in out:
            weight(key)
    listed = volcano_resource_list(
        out,
        _RESOURCES,
        ignored=lambda key, why: notes.append(f"{join(path, key)}: {why}; ignored, as Volcano does"),
        dropped=default,
    )
    for name in listed:
        if f"{_RESOURCES}.{name}" in out:
            weight(f"{_RESOURCES}.{name}")
    if _NORMAL_ENABLE in out:
        enable = out[_NORMAL_ENABLE]
        parsed = go_parse_bool(enable) if isinstance(enable, str) else enable
        if isinstance(parsed, bool):
            out[_NORMAL_ENABLE] = parsed
        else:
            drop(_NORMAL_ENABLE, f"{enable!r} is not a boolean")
    if _NORMAL_FADING in out:
        fading = out[_NORMAL_FADING]
        if isinstance(fading, bool) or not isinstance(fading, (int, float)):  # GetFloat64: a float or an int
            drop(_NORMAL_FADING, f"{fading!r} is not a number")
        elif fading < 0:
            drop(_NORMAL_FADING, f"{fading} is negative")
    return out, notes


def _binpack_resources(raw: str | None) -> list[str]:
    """The resources a ``hypernode.binpack.resources`` string ("a, b") names, in order."""
    return [] if raw is None else [n.strip() for n in raw.split(",") if n.strip()]
