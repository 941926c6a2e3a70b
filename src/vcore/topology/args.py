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

An unknown key or a bad value is a vcore.ProfileError naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.gpu.placement_args import _int, _number  # the profile's number checks, one wording

__all__ = ["OBJECTIVES", "SOLVERS", "TopologyPlacementArgs", "parse_topology_args"]

SOLVERS = ("native", "cpsat", "auto")
OBJECTIVES = ("lexicographic", "weighted")
_BINPACK = "hypernode.binpack."
_RESOURCES = _BINPACK + "resources"
_NORMAL_ENABLE, _NORMAL_FADING = _BINPACK + "normal-pod.enable", _BINPACK + "normal-pod.fading"
_VOLCANO_KEYS = ("weight", _BINPACK + "cpu", _BINPACK + "memory", _RESOURCES, _NORMAL_ENABLE, _NORMAL_FADING)
_KEYS = ("solver", "timeLimitSeconds", "relativeGap", "workers", "bandwidthWeight", "congestionWeight", "tieSlack",
         "objective", "objectiveWeights", "candidateDomains", *_VOLCANO_KEYS)
#: Volcano's defaults (network-topology-aware: DefaultWeight, DefaultNormalPodEnable, DefaultNormalPodFading).
DEFAULT_BINPACK = (("cpu", 1), ("memory", 1))
DEFAULT_FADING = 0.8
_WEIGHT_KEYS = ("tierSpans", "nodes", "fragmentation")


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
            "solver": self.solver, "timeLimitSeconds": self.time_limit_seconds, "relativeGap": self.relative_gap,
            "workers": self.workers, "bandwidthWeight": self.bandwidth_weight,
            "congestionWeight": self.congestion_weight, "tieSlack": self.tie_slack, "objective": self.objective,
            "candidateDomains": self.candidate_domains, "weight": self.node_score_weight,
            _NORMAL_ENABLE: self.normal_pod_binpack, _NORMAL_FADING: self.normal_pod_fading}
        extra = [name for name, _ in self.binpack_weights if name not in ("cpu", "memory")]
        for name, weight in self.binpack_weights:
            out[_BINPACK + name if name in ("cpu", "memory") else f"{_RESOURCES}.{name}"] = weight
        if extra:
            out[_RESOURCES] = ", ".join(extra)
        if self.objective == "weighted":
            out["objectiveWeights"] = {"tierSpans": list(self.tier_span_weights), "nodes": self.nodes_weight,
                                       "fragmentation": self.fragmentation_weight}
        return out


def _choice(value: Any, path: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ProfileError(f"{path}: must be one of {', '.join(choices)}, got {value!r}")
    return value


def parse_topology_args(args: Mapping[str, Any] | None, path: str = "args") -> TopologyPlacementArgs:
    """Validate topology placement arguments; ``path`` prefixes the field names in errors."""
    if args is None:
        return TopologyPlacementArgs()
    if not isinstance(args, Mapping):
        raise ProfileError(f"{path}: expected a mapping, got {type(args).__name__}")
    extra = _binpack_resources(args, path)
    for key in args:
        if key not in _KEYS and not (key.startswith(_RESOURCES + ".") and key[len(_RESOURCES) + 1:] in extra):
            hint = (f" (list the resource in {_RESOURCES} first)" if key.startswith(_RESOURCES + ".")
                    else f" (known: {', '.join(_KEYS)})")
            raise ProfileError(f"{path}.{key}: unknown field{hint}")
    d = TopologyPlacementArgs()
    kw: dict[str, Any] = {}
    if "solver" in args:
        kw["solver"] = _choice(args["solver"], f"{path}.solver", SOLVERS)
    if "timeLimitSeconds" in args:
        kw["time_limit_seconds"] = _number(args["timeLimitSeconds"], f"{path}.timeLimitSeconds", 0, 3600, lo_open=True)
    if "relativeGap" in args:
        kw["relative_gap"] = _number(args["relativeGap"], f"{path}.relativeGap", 0, 1)
    if "workers" in args:
        kw["workers"] = _int(args["workers"], f"{path}.workers", 1, 64)
    if "bandwidthWeight" in args:
        kw["bandwidth_weight"] = _number(args["bandwidthWeight"], f"{path}.bandwidthWeight", 0, 1e6)
    if "congestionWeight" in args:
        kw["congestion_weight"] = _number(args["congestionWeight"], f"{path}.congestionWeight", 0, 1e6)
    if "tieSlack" in args:
        kw["tie_slack"] = _int(args["tieSlack"], f"{path}.tieSlack", 0, 2**31 - 1)
    if "objective" in args:
        kw["objective"] = _choice(args["objective"], f"{path}.objective", OBJECTIVES)
    if "candidateDomains" in args:
        kw["candidate_domains"] = _int(args["candidateDomains"], f"{path}.candidateDomains", 1, 1 << 20)
    if "weight" in args:
        kw["node_score_weight"] = _int(args["weight"], f"{path}.weight", 0, 10**6)
    binpack = [(name, _int(args.get(_BINPACK + name, 1), f"{path}.{_BINPACK}{name}", 0, 10**6))
               for name in ("cpu", "memory")]
    binpack += [(name, _int(args.get(f"{_RESOURCES}.{name}", 1), f"{path}.{_RESOURCES}.{name}", 0, 10**6))
                for name in extra]
    kw["binpack_weights"] = tuple(binpack)
    if _NORMAL_ENABLE in args:
        if not isinstance(args[_NORMAL_ENABLE], bool):
            raise ProfileError(f"{path}.{_NORMAL_ENABLE}: expected true or false, got {args[_NORMAL_ENABLE]!r}")
        kw["normal_pod_binpack"] = args[_NORMAL_ENABLE]
    if _NORMAL_FADING in args:
        kw["normal_pod_fading"] = _number(args[_NORMAL_FADING], f"{path}.{_NORMAL_FADING}", 0, 1e6)
    weights = args.get("objectiveWeights")
    if weights is not None:
        wpath = f"{path}.objectiveWeights"
        if kw.get("objective", d.objective) != "weighted":
            raise ProfileError(f"{wpath}: only with objective: weighted")
        if not isinstance(weights, Mapping):
            raise ProfileError(f"{wpath}: expected a mapping")
        for key in weights:
            if key not in _WEIGHT_KEYS:
                raise ProfileError(f"{wpath}.{key}: unknown field (known: {', '.join(_WEIGHT_KEYS)})")
        spans = weights.get("tierSpans", [])
        if not isinstance(spans, list):
            raise ProfileError(f"{wpath}.tierSpans: expected a list of integers (lowest tier first)")
        kw["tier_span_weights"] = tuple(_int(w, f"{wpath}.tierSpans[{i}]", 0, 10**9) for i, w in enumerate(spans))
        if "nodes" in weights:
            kw["nodes_weight"] = _int(weights["nodes"], f"{wpath}.nodes", 0, 10**9)
        if "fragmentation" in weights:
            kw["fragmentation_weight"] = _int(weights["fragmentation"], f"{wpath}.fragmentation", 0, 10**9)
    return TopologyPlacementArgs(**{**d.__dict__, **kw})


def _binpack_resources(args: Mapping[str, Any], path: str) -> list[str]:
    """The extra resources of ``hypernode.binpack.resources`` ("a, b"), validated."""
    raw = args.get(_RESOURCES)
    if raw is None:
        return []
    if not isinstance(raw, str):
        raise ProfileError(f"{path}.{_RESOURCES}: expected a comma-separated string of resource names, got {raw!r}")
    names = [n.strip() for n in raw.split(",") if n.strip()]
    for name in names:
        if name in ("cpu", "memory"):
            raise ProfileError(f"{path}.{_RESOURCES}: {name} has its own key {_BINPACK}{name}")
    if len(set(names)) != len(names):
        raise ProfileError(f"{path}.{_RESOURCES}: a resource is listed twice")
    return names
