"""Volcano HyperNode objects (``topology.volcano.sh/v1alpha1``) into the native HyperNode specs.

Shape checks live here, declared with :mod:`vcore.validation`, and name the HyperNode and the field
(``HyperNode leaf-0: spec.members[1].selector.regexMatch.pattern: ...``); the semantic checks that need the whole tree
(members that exist and match, one parent, no cycles, tier order, one HyperNode per tier per node) are the native
topology's, which names the HyperNodes involved. The schema followed is Volcano's current API::

    apiVersion: topology.volcano.sh/v1alpha1
    kind: HyperNode
    metadata:
      name: leaf-0                      # a DNS-1123 subdomain, as every Kubernetes object name
      annotations:                      # link state, kept current by any discovery agent (vcore's convention)
        vcore.io/bandwidth-gbps: "400"
        vcore.io/congestion: "0.2"      # 0 (idle) .. 1 (saturated)
    spec:
      tier: 1                           # an integer >= 0 (Volcano before 1.12 wrote it as a string; accepted)
      tierName: leaf                    # optional; one name per tier across the tree
      members:
      - type: Node                      # or HyperNode (selected by exactMatch only, as Volcano)
        selector:
          exactMatch: {name: node-0}    # or regexMatch: {pattern: "^node-[0-9]+$"}
                                        # or labelMatch: {matchLabels: {...}, matchExpressions: [...]}

A regexMatch pattern is RE2 (Go's regexp syntax, which Volcano uses), matched against node names as a search
(unanchored, as Go's ``MatchString``) in time linear in the name; see :mod:`vcore.topology.patterns`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import TopologyError
from vcore.topology.patterns import RE2_PATTERN
from vcore.validation import (
    DNS1123_SUBDOMAIN,
    LABEL_KEY,
    Constraint,
    ErrorType,
    Integer,
    ListOf,
    MapOf,
    NullsAbsent,
    Record,
    String,
    fail,
    join,
    mapping,
    type_name,
)

__all__ = [
    "BANDWIDTH_ANNOTATION",
    "CONGESTION_ANNOTATION",
    "LabelSelector",
    "as_mapping",
    "hypernode_name",
    "hypernode_spec",
    "label_requirements",
    "labels_match",
]

BANDWIDTH_ANNOTATION = "vcore.io/bandwidth-gbps"
CONGESTION_ANNOTATION = "vcore.io/congestion"


_TIER_RANGE = Integer(0, 2**31 - 1)  # the native tree holds tiers as int32


@dataclass(frozen=True)
class _Tier(Constraint[int]):
    """An integer >= 0 (Volcano before 1.12 wrote it as a string of decimal digits)."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> int:
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
            value = int(value)
        return _TIER_RANGE(value, path, error)


_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_SELECTORS = ("exactMatch", "regexMatch", "labelMatch")
_MATCH_EXPRESSION = NullsAbsent(
    Record(
        {"key": LABEL_KEY, "operator": String(choices=_LABEL_OPERATORS), "values": ListOf(String())},
        required=("key", "operator"),
    )
)
_LABEL_SELECTOR_SHAPE = NullsAbsent(
    Record({"matchLabels": MapOf(String(), key=LABEL_KEY), "matchExpressions": ListOf(_MATCH_EXPRESSION)})
)


@dataclass(frozen=True)
class LabelSelector(Constraint[list[tuple[str, str, list[str]]]]):
    """A Kubernetes label selector (matchLabels, matchExpressions) as (key, operator, values) requirements, ANDed.
    An empty selector matches no node in a HyperNode member, every pod in a PodGroup's sub-group policy
    (``empty_selects_all``)."""

    empty_selects_all: bool = False

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> list[tuple[str, str, list[str]]]:
        checked = _LABEL_SELECTOR_SHAPE(value, path, error)
        out: list[tuple[str, str, list[str]]] = [(k, "In", [v]) for k, v in checked.get("matchLabels", {}).items()]
        for i, e in enumerate(checked.get("matchExpressions", ())):
            op, values = e["operator"], list(e.get("values", ()))
            at = join(join(path, "matchExpressions"), i)
            if op in ("In", "NotIn") and not values:
                raise fail(error, join(at, "values"), f"{op} needs at least one value")
            if op in ("Exists", "DoesNotExist") and values:
                raise fail(error, join(at, "values"), f"{op} takes no values")
            out.append((e["key"], op, values))
        if not out and not self.empty_selects_all:
            raise fail(error, path, "an empty label selector matches no node")
        return out


# Volcano before 1.12 also wrote selector.type (Exact / Regex); the match field itself says the same.
_SELECTOR = NullsAbsent(
    Record(
        {
            "exactMatch": NullsAbsent(Record({"name": DNS1123_SUBDOMAIN}, required=("name",))),
            "regexMatch": NullsAbsent(Record({"pattern": RE2_PATTERN}, required=("pattern",))),
            "labelMatch": LabelSelector(),
            "type": String(),
        }
    )
)
_MEMBER = NullsAbsent(
    Record({"type": String(choices=("Node", "HyperNode")), "selector": _SELECTOR}, required=("type", "selector"))
)
_SPEC = NullsAbsent(
    Record(
        {"tier": _Tier(), "tierName": String(max_len=253), "members": ListOf(_MEMBER, min_len=1)},
        required=("tier", "members"),
    )
)


def as_mapping(obj: Any, what: str) -> Mapping[str, Any]:
    """A Kubernetes-shaped object as a mapping: a dict, or a client model's ``to_dict()``."""
    if isinstance(obj, Mapping):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        out = to_dict()
        if isinstance(out, Mapping):
            return out
    raise TypeError(f"{what}: expected a mapping (the object as the API server returns it), got {type(obj).__name__}")


def _shown(name: str) -> str:
    """A name for an error message (a long invalid one cut short)."""
    return name if len(name) <= 80 else f"{name[:60]}... ({len(name)} characters)"


def hypernode_name(hn: Any) -> str:
    """metadata.name of a HyperNode object (a DNS-1123 subdomain), or the string itself."""
    if isinstance(hn, str):
        return hn
    meta = as_mapping(hn, "HyperNode").get("metadata")
    if not isinstance(meta, Mapping):
        raise TopologyError(f"HyperNode: metadata: must be a mapping with name, got {type_name(meta)}")
    name = meta.get("name")
    where = f"HyperNode {_shown(name)}: metadata.name" if isinstance(name, str) and name else "HyperNode: metadata.name"
    return DNS1123_SUBDOMAIN(name, where, TopologyError)


def label_requirements(
    where: str, selector: Any, *, empty_selects_all: bool = False
) -> list[tuple[str, str, list[str]]]:
    """:class:`LabelSelector` with TopologyError naming ``where`` and the field when the selector is malformed."""
    return LabelSelector(empty_selects_all)(selector, where, TopologyError)


def labels_match(requirements: list[tuple[str, str, list[str]]], labels: Mapping[str, str]) -> bool:
    """Whether labels satisfy every requirement of :func:`label_requirements`."""
    for key, op, values in requirements:
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def _member(path: str, member: Mapping[str, Any]) -> tuple[str, str, str, list[tuple[str, str, list[str]]]]:
    """(type, selector, name or pattern, label requirements) of a member checked by _MEMBER."""
    mtype, selector = member["type"], member["selector"]
    spath = join(path, "selector")
    given = [k for k in _SELECTORS if k in selector]
    if len(given) != 1:
        raise fail(
            TopologyError,
            spath,
            f"exactly one of exactMatch, regexMatch, labelMatch is required, got {', '.join(given) or 'none'}",
        )
    kind = given[0]
    if kind == "exactMatch":
        return (mtype, kind, selector[kind]["name"], [])
    if mtype == "HyperNode":
        raise fail(TopologyError, join(spath, kind), "a HyperNode member is selected by exactMatch only (as Volcano)")
    if kind == "regexMatch":
        return (mtype, kind, selector[kind]["pattern"], [])
    return (mtype, kind, "", selector[kind])  # the requirements of LabelSelector


def _annotation_number(path: str, annotations: Mapping[str, Any], key: str, lo: float, hi: float) -> float:
    raw = annotations.get(key)
    if raw is None:
        return -1.0
    at = f"{path}[{key}]"
    if not isinstance(raw, str):
        raise fail(TopologyError, at, f"must be a string holding a number, got {type_name(raw)} {raw!r}")
    try:
        value = float(raw)
    except ValueError:
        raise fail(TopologyError, at, f"must be a number, got {raw!r}") from None
    if not math.isfinite(value) or not lo <= value <= hi:
        raise fail(TopologyError, at, f"must be in [{lo:g}, {hi:g}], got {raw!r}")
    return value


def hypernode_spec(hn: Any) -> dict[str, Any]:
    """The native spec of a HyperNode object (dict, or an object with ``to_dict()``)."""
    obj = as_mapping(hn, "HyperNode")
    name = hypernode_name(obj)
    where = f"HyperNode {name}"
    spec = _SPEC(obj.get("spec"), f"{where}: spec", TopologyError)
    apath = f"{where}: metadata.annotations"
    raw = obj["metadata"].get("annotations")
    annotations = {} if raw is None else mapping(raw, apath, TopologyError)
    return {
        "name": name,
        "tier": spec["tier"],
        "tier_name": spec.get("tierName", ""),
        "members": [_member(f"{where}: spec.members[{i}]", m) for i, m in enumerate(spec["members"])],
        "bandwidth_gbps": _annotation_number(apath, annotations, BANDWIDTH_ANNOTATION, 0.0, math.inf),
        "congestion": _annotation_number(apath, annotations, CONGESTION_ANNOTATION, 0.0, 1.0),
    }
