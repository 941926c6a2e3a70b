"""Volcano HyperNode objects (``topology.volcano.sh/v1alpha1``) into the native HyperNode specs.

Shape checks live here and name the HyperNode and the field; the semantic checks that need the whole tree
(members that exist and match, one parent, no cycles, tier order, one HyperNode per tier per node) are the native
topology's, which names the HyperNodes involved. The schema followed is Volcano's current API::

    apiVersion: topology.volcano.sh/v1alpha1
    kind: HyperNode
    metadata:
      name: leaf-0
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

Regular expressions are matched against node names as a search (unanchored, as Go's ``MatchString``) with
ECMAScript syntax in the native core; the RE2 constructs ECMAScript lacks (``(?i)``, ``(?P<name>...)``) are
rejected with the HyperNode's name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from vcore.errors import TopologyError

__all__ = ["BANDWIDTH_ANNOTATION", "CONGESTION_ANNOTATION", "as_mapping", "hypernode_name", "hypernode_spec"]

BANDWIDTH_ANNOTATION = "vcore.io/bandwidth-gbps"
CONGESTION_ANNOTATION = "vcore.io/congestion"

_MEMBER_TYPES = ("Node", "HyperNode")
_SELECTORS = ("exactMatch", "regexMatch", "labelMatch")
_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
# RE2 syntax the native ECMAScript engine does not read the same way.
_RE2_ONLY = re.compile(r"\(\?[imsU-]+[:)]|\(\?P<|\\[zAQE]|\\p\{|\[\[:")


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


def hypernode_name(hn: Any) -> str:
    """metadata.name of a HyperNode object, or the string itself."""
    if isinstance(hn, str):
        return hn
    meta = as_mapping(hn, "HyperNode").get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        raise TopologyError("HyperNode: metadata.name must be a non-empty string")
    return name


def _string(where: str, obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise TopologyError(f"{where}.{key}: expected a string, got {type(value).__name__}")
    return value


def _tier(where: str, value: Any) -> int:
    if isinstance(value, bool):
        raise TopologyError(f"{where}.spec.tier: expected an integer, got {value!r}")
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if not isinstance(value, int) or value < 0:
        raise TopologyError(f"{where}.spec.tier: expected an integer >= 0, got {value!r}")
    return value


def label_requirements(where: str, selector: Any, *, empty_selects_all: bool = False
                       ) -> list[tuple[str, str, list[str]]]:
    """A Kubernetes label selector (matchLabels, matchExpressions) as (key, operator, values) requirements, ANDed;
    TopologyError naming ``where`` and the field when it is malformed. An empty selector matches no node in a
    HyperNode member, every pod in a PodGroup's sub-group policy (``empty_selects_all``)."""
    if not isinstance(selector, Mapping):
        raise TopologyError(f"{where}: expected a label selector mapping")
    unknown = set(selector) - {"matchLabels", "matchExpressions"}
    if unknown:
        raise TopologyError(f"{where}.{sorted(unknown)[0]}: unknown field (matchLabels, matchExpressions)")
    out: list[tuple[str, str, list[str]]] = []
    labels = selector.get("matchLabels") or {}
    if not isinstance(labels, Mapping):
        raise TopologyError(f"{where}.matchLabels: expected a mapping of label key to value")
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TopologyError(f"{where}.matchLabels: keys and values must be strings")
        out.append((key, "In", [value]))
    expressions = selector.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise TopologyError(f"{where}.matchExpressions: expected a list")
    for i, e in enumerate(expressions):
        at = f"{where}.matchExpressions[{i}]"
        if not isinstance(e, Mapping):
            raise TopologyError(f"{at}: expected a mapping")
        key = _string(at, e, "key")
        op = _string(at, e, "operator")
        if op not in _LABEL_OPERATORS:
            raise TopologyError(f"{at}.operator: unknown operator {op!r} ({', '.join(_LABEL_OPERATORS)})")
        values = e.get("values") or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise TopologyError(f"{at}.values: expected a list of strings")
        out.append((key, op, list(values)))
    if not out and not empty_selects_all:
        raise TopologyError(f"{where}: an empty label selector matches no node")
    return out


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


def _member(where: str, member: Any) -> tuple[str, str, str, list]:
    if not isinstance(member, Mapping):
        raise TopologyError(f"{where}: expected a mapping")
    mtype = member.get("type")
    if mtype not in _MEMBER_TYPES:
        raise TopologyError(f"{where}.type: unknown member type {mtype!r} (Node, HyperNode)")
    selector = member.get("selector")
    if not isinstance(selector, Mapping):
        raise TopologyError(f"{where}.selector: required")
    # Volcano before 1.12 also wrote selector.type (Exact / Regex); the match field itself says the same.
    given = [k for k in _SELECTORS if selector.get(k) is not None]
    unknown = set(selector) - set(_SELECTORS) - {"type"}
    if unknown:
        raise TopologyError(f"{where}.selector.{sorted(unknown)[0]}: unknown field ({', '.join(_SELECTORS)})")
    if len(given) != 1:
        raise TopologyError(f"{where}.selector: exactly one of exactMatch, regexMatch, labelMatch is required, got "
                            f"{given or 'none'}")
    kind = given[0]
    body = selector[kind]
    at = f"{where}.selector.{kind}"
    if kind == "exactMatch":
        if not isinstance(body, Mapping):
            raise TopologyError(f"{at}: expected a mapping with name")
        name = _string(at, body, "name")
        if not name:
            raise TopologyError(f"{at}.name: must not be empty")
        return (mtype, kind, name, [])
    if mtype == "HyperNode":
        raise TopologyError(f"{at}: a HyperNode member is selected by exactMatch only (as Volcano)")
    if kind == "regexMatch":
        if not isinstance(body, Mapping):
            raise TopologyError(f"{at}: expected a mapping with pattern")
        pattern = _string(at, body, "pattern")
        if not pattern:
            raise TopologyError(f"{at}.pattern: must not be empty")
        try:
            re.compile(pattern)
        except re.error as e:
            raise TopologyError(f"{at}.pattern: {pattern!r} is not a valid regular expression ({e})") from None
        if _RE2_ONLY.search(pattern):
            raise TopologyError(f"{at}.pattern: {pattern!r} uses RE2-only syntax; write it in the common subset "
                                "(no inline flags, named groups as (...), no \\p{...} classes)")
        return (mtype, kind, pattern, [])
    return (mtype, kind, "", label_requirements(at, body))


def _annotation_number(where: str, annotations: Mapping[str, Any], key: str, lo: float, hi: float) -> float:
    raw = annotations.get(key)
    if raw is None:
        return -1.0
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise TopologyError(f"{where}.metadata.annotations[{key}]: expected a number, got {raw!r}") from None
    if not math.isfinite(value) or not lo <= value <= hi:
        raise TopologyError(f"{where}.metadata.annotations[{key}]: must be in [{lo:g}, {hi:g}], got {raw!r}")
    return value


def hypernode_spec(hn: Any) -> dict[str, Any]:
    """The native spec of a HyperNode object (dict, or an object with ``to_dict()``)."""
    obj = as_mapping(hn, "HyperNode")
    name = hypernode_name(obj)
    where = f"HyperNode {name}"
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise TopologyError(f"{where}.spec: required")
    tier = _tier(where, spec.get("tier"))
    tier_name = spec.get("tierName") or ""
    if not isinstance(tier_name, str):
        raise TopologyError(f"{where}.spec.tierName: expected a string")
    members = spec.get("members")
    if not isinstance(members, list) or not members:
        raise TopologyError(f"{where}.spec.members: a non-empty list is required")
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if not isinstance(annotations, Mapping):
        raise TopologyError(f"{where}.metadata.annotations: expected a mapping")
    return {
        "name": name,
        "tier": tier,
        "tier_name": tier_name,
        "members": [_member(f"{where}.spec.members[{i}]", m) for i, m in enumerate(members)],
        "bandwidth_gbps": _annotation_number(where, annotations, BANDWIDTH_ANNOTATION, 0.0, math.inf),
        "congestion": _annotation_number(where, annotations, CONGESTION_ANNOTATION, 0.0, 1.0),
    }
