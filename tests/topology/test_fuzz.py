"""Fuzz of the topology's inputs: random JSON-shaped HyperNodes (mutations of valid ones), topology level lists and
topology arguments. Every call succeeds or raises a vcore error (or ValueError / TypeError / KeyError whose message
starts with the object and names the field); a refused call leaves the topology as it was; nothing else escapes and
nothing crashes. Deterministic (derandomized)."""

from __future__ import annotations

import copy
import re
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import vcore
from topology.trees import node
from vcore._native import _core
from vcore.topology import parse_topology_args

NODES = {
    "n0": {"rack": "a", "row": "1"},
    "n1": {"rack": "a", "row": "2"},
    "n2": {"rack": "b", "row": "1"},
    "n3": {"rack": "b", "row": "2"},
    "n4": {"rack": "c"},
    "n5": {"rack": "c", "example.com/pool": "gpu"},
}


def _member(kind: str, selector: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "selector": selector}


VALID_HYPERNODES = [
    {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "leaf-a", "annotations": {"vcore.io/bandwidth-gbps": "400", "vcore.io/congestion": "0.2"}},
        "spec": {
            "tier": 1,
            "tierName": "leaf",
            "members": [
                _member("Node", {"exactMatch": {"name": "n0"}}),
                _member("Node", {"exactMatch": {"name": "n1"}}),
            ],
        },
    },
    {
        "metadata": {"name": "leaf-b"},
        "spec": {"tier": 1, "tierName": "leaf", "members": [_member("Node", {"regexMatch": {"pattern": "^n[23]$"}})]},
    },
    {
        "metadata": {"name": "leaf-c"},
        "spec": {
            "tier": "1",
            "members": [
                _member(
                    "Node",
                    {
                        "labelMatch": {
                            "matchLabels": {"rack": "c"},
                            "matchExpressions": [{"key": "example.com/pool", "operator": "In", "values": ["gpu"]}],
                        }
                    },
                )
            ],
        },
    },
    {
        "metadata": {"name": "spine"},
        "spec": {
            "tier": 2,
            "tierName": "spine",
            "members": [
                _member("HyperNode", {"exactMatch": {"name": "leaf-a"}}),
                _member("HyperNode", {"exactMatch": {"name": "leaf-b"}}),
            ],
        },
    },
    {
        "metadata": {"name": "core"},
        "spec": {
            "tier": 3,
            "members": [
                _member("HyperNode", {"exactMatch": {"name": "spine"}}),
                _member("HyperNode", {"exactMatch": {"name": "leaf-c"}}),
                _member("Node", {"regexMatch": {"pattern": "4"}}),
            ],
        },
    },
]
VALID_LEVELS = ["topology.kubernetes.io/zone", "rack", "kubernetes.io/hostname"]
VALID_ARGS = {
    "solver": "auto",
    "timeLimitSeconds": 0.5,
    "relativeGap": 0.01,
    "workers": 2,
    "bandwidthWeight": 1,
    "congestionWeight": 0.5,
    "tieSlack": 1,
    "objective": "weighted",
    "candidateDomains": 4,
    "weight": 10,
    "objectiveWeights": {"tierSpans": [1, 10, 100], "nodes": 0, "fragmentation": 1},
    "hypernode.binpack.cpu": 2,
    "hypernode.binpack.memory": 1,
    "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
    "hypernode.binpack.resources.nvidia.com/gpu": 3,
    "hypernode.binpack.normal-pod.enable": True,
    "hypernode.binpack.normal-pod.fading": 0.8,
}

KEYS = [
    "metadata",
    "name",
    "annotations",
    "spec",
    "tier",
    "tierName",
    "members",
    "type",
    "selector",
    "exactMatch",
    "regexMatch",
    "pattern",
    "labelMatch",
    "matchLabels",
    "matchExpressions",
    "key",
    "operator",
    "values",
    "vcore.io/bandwidth-gbps",
    "vcore.io/congestion",
    "rack",
    *VALID_ARGS,
]
STRINGS = [
    "",
    "n0",
    "n4",
    "leaf-a",
    "spine",
    "core",
    "Node",
    "HyperNode",
    "In",
    "NotIn",
    "Exists",
    "DoesNotExist",
    "^n",
    "(a+)+$",
    "(",
    r"(n)\1",
    "(?=n)",
    "(?i)N1",
    r"\pL",
    "1",
    "-1",
    "²",
    "0.5",
    "nan",
    "1e400",
    "inf",
    "a" * 300,
    "\ud800",
    "not a key!",
    "x/y/z",
    "rack",
    "leaf",
    "weighted",
    "cpsat",
    "cpu",
    "nvidia.com/gpu",
    "Exact",
    "LEAF",
    "leaf_a",
    "é",
]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([0, 1, 2, 3, 2**31, -1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(STRINGS)
    | st.text(max_size=6)
)
# Keys as JSON has them, and the non-string keys YAML also gives (1: 2, null: x, true: y).
KEY = st.sampled_from(KEYS) | st.text(max_size=5) | st.sampled_from([1, -1, None, True, 2.5])
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEY, inner, max_size=3), max_leaves=6
)
# What a mutation puts in: mostly near misses (names, patterns, numbers at the edges), else any JSON.
NEAR = st.sampled_from(STRINGS) | st.sampled_from([0, 1, 2, 3, -1, 2**31 - 1, 2**31, 1.5, float("nan"), True])
REPLACEMENT = st.one_of(NEAR, NEAR, st.text(max_size=8), JSON)
# Kubernetes' IsQualifiedName (a label key), written out independently of vcore.validation.
LABEL_KEY = re.compile(
    r"(?:(?=[^/]{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"(?=[^/]{1,63}$)[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
)


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    """Every place in a JSON value: the paths of its containers' items."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, path + (i,))
    return out


def _mutate(data: st.DataObject, value: Any) -> Any:
    """The value with one random change: a replaced, deleted, added or duplicated item, or a replaced whole."""
    value = copy.deepcopy(value)
    path = data.draw(st.sampled_from(_paths(value)))
    if not path:
        return data.draw(JSON)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    action = data.draw(st.sampled_from(["replace", "replace", "delete", "add", "duplicate"]))
    if action == "replace":
        parent[last] = data.draw(REPLACEMENT)
    elif action == "delete":
        del parent[last]
    elif action == "add" and isinstance(parent, dict):
        parent[data.draw(KEY)] = data.draw(REPLACEMENT)
    elif isinstance(parent, list):
        parent.insert(last, copy.deepcopy(parent[last]))
    else:
        parent[last] = [parent[last]]
    return value


def _mutations(data: st.DataObject, value: Any) -> Any:
    for _ in range(data.draw(st.integers(1, 3))):
        value = _mutate(data, value)
    return value


def _cluster() -> vcore.Cluster:
    c = vcore.Cluster()
    for name, labels in NODES.items():
        c.add_node(node(name, labels=labels))
    return c


def _snapshot(c: vcore.Cluster) -> tuple:
    v = c.topology
    return (
        v.tiers,
        v.tier_names,
        v.levels,
        v.domain_names,
        v.domain_parent.tolist(),
        v.node_topo.tolist(),
        v.node_leaf.tolist(),
        v.domain_bandwidth_gbps.tolist(),
        _core.topology.patterns(c._state)[1],
    )


def _refused_cleanly(error: Exception, *objects: str) -> None:
    """A vcore error, or a built-in one whose message starts with the object it is about and names the field."""
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    assert isinstance(error, vcore.VCoreError) or message.startswith(objects), repr(error)
    assert ": " in message, message


def _attempt(c: vcore.Cluster, call, *objects: str) -> bool:
    before = _snapshot(c)
    try:
        call()
    except (vcore.VCoreError, ValueError, TypeError, KeyError) as e:
        _refused_cleanly(e, *objects)
        assert _snapshot(c) == before
        return False
    return True


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@fuzz(800)
@given(st.data())
def test_hypernode_writes(data):
    c = _cluster()
    installed = data.draw(st.sampled_from([[], ["leaf-a", "leaf-b", "spine"], ["leaf-a", "leaf-b", "leaf-c"]]))
    c.set_hypernodes([h for h in VALID_HYPERNODES if h["metadata"]["name"] in installed])
    call = data.draw(st.sampled_from(["set", "add", "update"]))
    if call == "set":
        hns = [_mutations(data, h) if data.draw(st.booleans()) else h for h in VALID_HYPERNODES]
        hns = data.draw(st.permutations(hns))
        if data.draw(st.integers(0, 9)) == 0:
            hns = _mutations(data, hns)  # the list itself
        ok = _attempt(c, lambda: c.set_hypernodes(hns), "HyperNode")
    else:
        pool = [h for h in VALID_HYPERNODES if (h["metadata"]["name"] in installed) == (call == "update")]
        hn = _mutations(data, data.draw(st.sampled_from(pool or VALID_HYPERNODES)))
        ok = _attempt(c, lambda: getattr(c, f"{call}_hypernode")(hn), "HyperNode")
    # Whatever happened, the tree still follows node writes, and what a node write refuses changes nothing.
    _attempt(c, lambda: c.add_node(node("n40", labels={"rack": "c"})), "node")
    view = c.topology
    assert view.node_topo.shape == (view.n_rows, c._state.n_slots)
    if ok and data.draw(st.booleans()):
        c.set_hypernodes([])
        assert c.topology.tiers == [] and _core.topology.patterns(c._state)[1] == []


@fuzz(300)
@given(st.data())
def test_topology_levels(data):
    c = _cluster()
    if data.draw(st.booleans()):
        c.set_topology_levels(["rack"])
    levels = _mutations(data, VALID_LEVELS)
    if _attempt(c, lambda: c.set_topology_levels(levels), "topology levels"):
        assert c.topology.levels == list(levels)
        assert all(LABEL_KEY.fullmatch(level) for level in levels), levels
    _attempt(c, lambda: c.add_node(node("n40", labels={"rack": "d"})), "node")


@fuzz(800)
@given(st.data())
def test_topology_arguments(data):
    args = _mutations(data, VALID_ARGS)
    try:
        with warnings.catch_warnings(record=True) as defaulted:  # Volcano's keys Volcano would default
            warnings.simplefilter("always")
            parsed = parse_topology_args(args, "args")
    except vcore.ProfileError as e:
        assert str(e).startswith("args"), str(e)
        return
    assert all(w.category is vcore.ProfileWarning and str(w.message).startswith("args.") for w in defaulted)
    assert parse_topology_args(parsed.to_dict(), "args") == parsed


def test_the_mutations_reach_both_outcomes():
    """The fuzz is not vacuous: the unmutated inputs are accepted and a single mutation can be refused."""
    c = _cluster()
    c.set_hypernodes(VALID_HYPERNODES)
    assert c.topology.tiers == [1, 2, 3] and set(c.topology.domain_names) == {
        h["metadata"]["name"] for h in VALID_HYPERNODES
    }
    assert parse_topology_args(VALID_ARGS).binpack_weights[-1] == ("example.com/foo", 1)
    with pytest.raises(vcore.TopologyError, match=r"spec\.members\[0\]\.selector\.regexMatch\.pattern"):
        _cluster().set_hypernodes(
            [
                {
                    **VALID_HYPERNODES[1],
                    "spec": {
                        **VALID_HYPERNODES[1]["spec"],
                        "members": [_member("Node", {"regexMatch": {"pattern": r"(n)\1"}})],
                    },
                }
            ]
        )
