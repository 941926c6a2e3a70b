"""The reference scheduler (tests/reference.py) on its own, against published expected values.

The case tables live here (no native import) and test_conformance.py runs the same tables through the
public vcore API. Sources: SCORING.md's worked cases, and kube-scheduler's plugin unit-test tables
(pkg/scheduler/framework/plugins/...). Units: cpu in milli-cores, memory in bytes, with the numbers of the
tables (kube's tables use whole cores; only ratios matter, except where the non-zero defaults appear, and
those cases use kube's own units).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

import reference as ref
from conftest import (
    container,
    expr,
    fit_args,
    make_node,
    make_pod,
    make_profile,
    req_pod,
    taint,
    term,
    toleration,
    zero_container,
)


@dataclass
class ScoreCase:
    id: str
    nodes: list
    pod: dict
    profile: dict
    expected: dict
    existing: list = field(default_factory=list)  # [(node name, pod dict)]


@dataclass
class FilterCase:
    id: str
    nodes: list
    pod: dict
    profile: dict
    feasible: list
    reasons: dict
    existing: list = field(default_factory=list)


def only(plugin: str, **kw) -> dict:
    """A profile scoring with one plugin (weight 1) and no filters, as kube's plugin unit tests run."""
    return make_profile([(plugin, 1)], filters=[], **kw)


def fit_only(strategy="LeastAllocated", resources=(("cpu", 1), ("memory", 1)), shape=None) -> dict:
    return only("NodeResourcesFit", fit=fit_args(strategy, resources, shape))


def balanced_only(resources=(("cpu", 1), ("memory", 1))) -> dict:
    return only("NodeResourcesBalancedAllocation", balanced=list(resources))


def two(c1, m1, c2, m2, extra1=None, extra2=None):
    return [make_node("n1", c1, m1, extra=extra1), make_node("n2", c2, m2, extra=extra2)]


def p(cpu, mem, name="e", extra=None):
    return req_pod(name, cpu, mem, extra)


def zero(name="z"):
    return make_pod(name, zero_container())


def two_containers(name="in"):
    return make_pod(name, container({"cpu": 1000, "memory": 2000}), container({"cpu": 2000, "memory": 3000}))


LA, MA, RTCR = "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"
EXT = "abc.com/xyz"
MI = 2**20

# ---------------------------------------------------------------------------------------------------------------
# SCORING.md worked cases
# ---------------------------------------------------------------------------------------------------------------
SCORING_CASES = [
    ScoreCase(
        "SCORING.md-LeastAllocated-1",
        two(4000, 10000, 6000, 10000),
        p(3000, 5000, "in"),
        fit_only(LA),
        {"n1": 37, "n2": 50},
    ),
    ScoreCase(
        "SCORING.md-LeastAllocated-2",
        two(10000, 20000, 10000, 20000),
        p(3000, 5000, "in"),
        fit_only(LA),
        {"n1": 57, "n2": 45},
        [("n1", p(3000, 0, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
    ScoreCase(
        "SCORING.md-LeastAllocated-3-over-capacity",
        two(4000, 10000, 4000, 10000),
        p(3000, 0, "in"),
        fit_only(LA),
        {"n1": 50, "n2": 25},
        [("n1", p(3000, 0, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
    ScoreCase(
        "SCORING.md-MostAllocated-1",
        two(4000, 10000, 6000, 10000),
        p(3000, 5000, "in"),
        fit_only(MA),
        {"n1": 62, "n2": 50},
    ),
    ScoreCase(
        "SCORING.md-MostAllocated-2-at-capacity",
        two(5000, 10000, 10000, 9000),
        p(5000, 9000, "in"),
        fit_only(MA),
        {"n1": 95, "n2": 75},
    ),
    ScoreCase(
        "SCORING.md-RequestedToCapacityRatio-shape-0:10,100:0",
        two(4000, 10000, 6000, 10000),
        p(3000, 5000, "in"),
        fit_only(RTCR, shape=[(0, 10), (100, 0)]),
        {"n1": 38, "n2": 50},
    ),
    ScoreCase(
        "SCORING.md-BalancedAllocation-1",
        two(4000, 10000, 6000, 10000),
        p(3000, 5000, "in"),
        balanced_only(),
        {"n1": 87, "n2": 100},
    ),
    ScoreCase(
        "SCORING.md-BalancedAllocation-2",
        two(10000, 20000, 10000, 50000),
        p(3000, 5000, "in"),
        balanced_only(),
        {"n1": 82, "n2": 80},
        [("n1", p(3000, 0, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
]


# ---------------------------------------------------------------------------------------------------------------
# kube-scheduler plugin test tables (pkg/scheduler/framework/plugins/noderesources/*_test.go,
# tainttoleration/taint_toleration_test.go). Kube's st.MakePod().Obj() has no containers: it is encoded as a
# container with explicit zero requests, which is the same for every plugin.
# ---------------------------------------------------------------------------------------------------------------
def _cpu_only(name):
    return make_pod(name, container({"cpu": 1000, "memory": 0}), container({"cpu": 2000, "memory": 0}))


def _cpu_mem(name):
    return make_pod(name, container({"cpu": 1000, "memory": 2000}), container({"cpu": 2000, "memory": 3000}))


def _cpu_mem_gpu(name):
    return make_pod(
        name, container({"cpu": 1000, "memory": 2000}), container({"cpu": 2000, "memory": 3000, "nvidia.com/gpu": 3})
    )


def _no_req(name):
    return make_pod(name, container())  # a container with *missing* requests


KUBE_SCORE_CASES = [
    # least_allocated_test.go
    ScoreCase(
        "least_allocated_test.go: nothing scheduled, nothing requested",
        two(4000, 10000, 4000, 10000),
        zero("in"),
        fit_only(LA),
        {"n1": 100, "n2": 100},
    ),
    ScoreCase(
        "least_allocated_test.go: nothing scheduled, resources requested, differently sized nodes",
        two(4000, 10000, 6000, 10000),
        two_containers(),
        fit_only(LA),
        {"n1": 37, "n2": 50},
    ),
    ScoreCase(
        "least_allocated_test.go: no resources requested, pods scheduled",
        two(4000, 10000, 4000, 10000),
        zero("in"),
        fit_only(LA),
        {"n1": 100, "n2": 100},
        [("n1", zero("e1")), ("n1", zero("e2")), ("n2", zero("e3")), ("n2", zero("e4"))],
    ),
    ScoreCase(
        "least_allocated_test.go: no resources requested, pods scheduled with resources",
        two(10000, 20000, 10000, 20000),
        zero("in"),
        fit_only(LA),
        {"n1": 70, "n2": 57},
        [("n1", p(3000, 0, "e1")), ("n1", p(3000, 0, "e2")), ("n2", p(3000, 0, "e3")), ("n2", p(3000, 5000, "e4"))],
    ),
    ScoreCase(
        "least_allocated_test.go: resources requested, pods scheduled with resources",
        two(10000, 20000, 10000, 20000),
        two_containers(),
        fit_only(LA),
        {"n1": 57, "n2": 45},
        [("n1", p(3000, 0, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
    ScoreCase(
        "least_allocated_test.go: resources requested, pods scheduled with resources, differently sized nodes",
        two(10000, 20000, 10000, 50000),
        two_containers(),
        fit_only(LA),
        {"n1": 57, "n2": 60},
        [("n1", p(3000, 0, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
    ScoreCase(
        "least_allocated_test.go: requested resources exceed node capacity",
        two(4000, 10000, 4000, 10000),
        p(3000, 0, "in"),
        fit_only(LA),
        {"n1": 50, "n2": 25},
        [("n1", p(3000, 0, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
    ScoreCase(
        "least_allocated_test.go: zero node resources, pods scheduled with resources",
        [make_node("n1"), make_node("n2")],
        zero("in"),
        fit_only(LA),
        {"n1": 0, "n2": 0},
        [("n1", p(3000, 0, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
    ScoreCase(
        "least_allocated_test.go: different weight on CPU and memory, differently sized nodes",
        two(4000, 10000, 6000, 10000),
        two_containers(),
        fit_only(LA, (("memory", 2), ("cpu", 1))),
        {"n1": 41, "n2": 50},
    ),
    ScoreCase(
        "least_allocated_test.go: bypass extended resource if the pod does not request",
        two(6000, 10000, 6000, 10000, None, {EXT: 4}),
        two_containers(),
        fit_only(LA, (("cpu", 1), ("memory", 1), (EXT, 1))),
        {"n1": 50, "n2": 50},
    ),
    ScoreCase(
        "least_allocated_test.go: honor extended resource if the pod requests",
        two(6000, 10000, 6000, 10000, {EXT: 4}, {EXT: 10}),
        p(3000, 5000, "in", {EXT: 2}),
        fit_only(LA, (("cpu", 1), ("memory", 1), (EXT, 1))),
        {"n1": 50, "n2": 60},
    ),
    # most_allocated_test.go
    ScoreCase(
        "most_allocated_test.go: nothing scheduled, nothing requested",
        two(4000, 10000, 4000, 10000),
        zero("in"),
        fit_only(MA),
        {"n1": 0, "n2": 0},
    ),
    ScoreCase(
        "most_allocated_test.go: nothing scheduled, resources requested, differently sized nodes",
        two(4000, 10000, 6000, 10000),
        two_containers(),
        fit_only(MA),
        {"n1": 62, "n2": 50},
    ),
    ScoreCase(
        "most_allocated_test.go: no resources requested, pods scheduled with resources",
        two(10000, 20000, 10000, 20000),
        zero("in"),
        fit_only(MA),
        {"n1": 30, "n2": 42},
        [("n1", p(3000, 0, "e1")), ("n1", p(3000, 0, "e2")), ("n2", p(3000, 0, "e3")), ("n2", p(3000, 5000, "e4"))],
    ),
    ScoreCase(
        "most_allocated_test.go: resources requested, pods scheduled with resources",
        two(10000, 20000, 10000, 20000),
        two_containers(),
        fit_only(MA),
        {"n1": 42, "n2": 55},
        [("n1", p(3000, 0, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
    ScoreCase(
        "most_allocated_test.go: resources requested equal node capacity",
        two(5000, 10000, 10000, 9000),
        make_pod("in", container({"cpu": 2000, "memory": 4000}), container({"cpu": 3000, "memory": 5000})),
        fit_only(MA),
        {"n1": 95, "n2": 75},
    ),
    ScoreCase(
        "most_allocated_test.go: different weight on CPU and memory",
        two(4000, 10000, 6000, 10000),
        two_containers(),
        fit_only(MA, (("memory", 2), ("cpu", 1))),
        {"n1": 58, "n2": 50},
    ),
    ScoreCase(
        "most_allocated_test.go: no resources requested, pods scheduled, nonzero request for resource",
        two(250, 1000 * MI, 250, 1000 * MI),
        _no_req("in"),
        fit_only(MA),
        {"n1": 80, "n2": 30},
        [("n1", _no_req("e1")), ("n1", _no_req("e2"))],
    ),
    ScoreCase(
        "most_allocated_test.go: bypass extended resource if the pod does not request",
        two(6000, 10000, 6000, 10000, None, {EXT: 4}),
        two_containers(),
        fit_only(MA, (("cpu", 1), ("memory", 1), (EXT, 1))),
        {"n1": 50, "n2": 50},
    ),
    ScoreCase(
        "most_allocated_test.go: honor extended resource if the pod request",
        two(6000, 10000, 6000, 10000, {EXT: 4}, {EXT: 10}),
        p(3000, 5000, "in", {EXT: 2}),
        fit_only(MA, (("cpu", 1), ("memory", 1), (EXT, 1))),
        {"n1": 50, "n2": 40},
    ),
    ScoreCase(
        "most_allocated_test.go: if the node doesn't have a resource",
        two(6000, 10000, 6000, 10000, None, {EXT: 4}),
        p(3000, 4000, "in"),
        fit_only(MA, ((EXT, 2), ("cpu", 1), ("memory", 1))),
        {"n1": 45, "n2": 45},
    ),
    # requested_to_capacity_ratio_test.go
    ScoreCase(
        "requested_to_capacity_ratio_test.go: nothing scheduled, nothing requested",
        two(4000, 10000, 4000, 10000),
        zero("in"),
        fit_only(RTCR, shape=[(0, 10), (100, 0)]),
        {"n1": 100, "n2": 100},
        [("n1", zero("e1")), ("n1", zero("e2"))],
    ),
    ScoreCase(
        "requested_to_capacity_ratio_test.go: nothing scheduled, resources requested, differently sized nodes",
        two(4000, 10000, 6000, 10000),
        two_containers(),
        fit_only(RTCR, shape=[(0, 10), (100, 0)]),
        {"n1": 38, "n2": 50},
        [("n1", zero("e1")), ("n1", zero("e2"))],
    ),
    ScoreCase(
        "requested_to_capacity_ratio_test.go: no resources requested, pods scheduled with resources",
        two(4000, 10000, 6000, 10000),
        zero("in"),
        fit_only(RTCR, shape=[(0, 10), (100, 0)]),
        {"n1": 38, "n2": 50},
        [("n1", p(3000, 5000, "e1")), ("n2", p(3000, 5000, "e2"))],
    ),
    ScoreCase(
        "requested_to_capacity_ratio_test.go: BinPackingSingleExtended nothing requested",
        two(4000, 10000 * MI, 4000, 10000 * MI, {"intel.com/foo": 8}, {"intel.com/foo": 4}),
        zero("in"),
        fit_only(RTCR, (("intel.com/foo", 1),), [(0, 0), (100, 1)]),
        {"n1": 0, "n2": 0},
    ),
    ScoreCase(
        "requested_to_capacity_ratio_test.go: BinPackingSingleExtended less resources",
        two(4000, 10000 * MI, 4000, 10000 * MI, {"intel.com/foo": 8}, {"intel.com/foo": 4}),
        p(0, 0, "in", {"intel.com/foo": 2}),
        fit_only(RTCR, (("intel.com/foo", 1),), [(0, 0), (100, 1)]),
        {"n1": 2, "n2": 5},
        [("n1", zero("e1"))],
    ),
    ScoreCase(
        "requested_to_capacity_ratio_test.go: BinPackingSingleExtended existing pod running",
        two(4000, 10000 * MI, 4000, 10000 * MI, {"intel.com/foo": 8}, {"intel.com/foo": 4}),
        p(0, 0, "in", {"intel.com/foo": 2}),
        fit_only(RTCR, (("intel.com/foo", 1),), [(0, 0), (100, 1)]),
        {"n1": 2, "n2": 10},
        [("n2", p(0, 0, "e1", {"intel.com/foo": 2}))],
    ),
    ScoreCase(
        "requested_to_capacity_ratio_test.go: BinPackingSingleExtended more resources",
        two(4000, 10000 * MI, 4000, 10000 * MI, {"intel.com/foo": 8}, {"intel.com/foo": 4}),
        p(0, 0, "in", {"intel.com/foo": 4}),
        fit_only(RTCR, (("intel.com/foo", 1),), [(0, 0), (100, 1)]),
        {"n1": 5, "n2": 10},
        [("n1", zero("e1"))],
    ),
    ScoreCase(
        "requested_to_capacity_ratio_test.go: BinPackingMultipleExtended less resources",
        two(
            4000,
            10000 * MI,
            4000,
            10000 * MI,
            {"intel.com/foo": 8, "intel.com/bar": 4},
            {"intel.com/foo": 4, "intel.com/bar": 8},
        ),
        p(0, 0, "in", {"intel.com/foo": 2, "intel.com/bar": 2}),
        fit_only(RTCR, (("intel.com/foo", 3), ("intel.com/bar", 5)), [(0, 0), (100, 1)]),
        {"n1": 4, "n2": 3},
        [("n1", zero("e1"))],
    ),
    ScoreCase(
        "requested_to_capacity_ratio.go: a resource scoring 0 adds no weight (resourceScore > 0)",
        two(16000, 4 * 2**30, 4000, 10000),
        p(3000, 0, "in"),
        fit_only(RTCR, (("cpu", 77), ("memory", 65)), [(0, 0), (100, 10)]),
        # n1: cpu util 18 -> 18, memory util 0 -> 0 (dropped) -> 18; n2: cpu 75 -> 75, memory 0 -> 75
        {"n1": 18, "n2": 75},
    ),
    # balanced_allocation_test.go
    ScoreCase(
        "balanced_allocation_test.go: nothing requested, skipped in PreScore (best-effort pod)",
        two(4000, 10000, 4000, 10000),
        zero("in"),
        balanced_only(),
        {"n1": 0, "n2": 0},
    ),
    ScoreCase(
        "balanced_allocation_test.go: nothing scheduled, resources requested, differently sized nodes",
        two(4000, 10000, 6000, 10000),
        _cpu_mem("in"),
        balanced_only(),
        {"n1": 87, "n2": 100},
    ),
    ScoreCase(
        "balanced_allocation_test.go: resources requested, pods scheduled with resources",
        two(10000, 20000, 10000, 20000),
        _cpu_mem("in"),
        balanced_only(),
        {"n1": 82, "n2": 95},
        [("n1", _cpu_only("e1")), ("n2", _cpu_mem("e2"))],
    ),
    ScoreCase(
        "balanced_allocation_test.go: resources requested, pods scheduled with resources, differently sized nodes",
        two(10000, 20000, 10000, 50000),
        _cpu_mem("in"),
        balanced_only(),
        {"n1": 82, "n2": 80},
        [("n1", _cpu_only("e1")), ("n2", _cpu_mem("e2"))],
    ),
    ScoreCase(
        "balanced_allocation_test.go: requested resources at node capacity",
        two(6000, 10000, 6000, 10000),
        _cpu_only("in"),
        balanced_only(),
        {"n1": 50, "n2": 75},
        [("n1", _cpu_only("e1")), ("n2", _cpu_mem("e2"))],
    ),
    ScoreCase(
        "balanced_allocation_test.go: include scalar resource on a node",
        two(3500, 40000, 3500, 40000, {"nvidia.com/gpu": 8}, {"nvidia.com/gpu": 8}),
        make_pod("in", container({"memory": 0, "nvidia.com/gpu": 1})),
        balanced_only((("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1))),
        {"n1": 70, "n2": 65},
        [("n2", _cpu_mem("e1")), ("n1", _cpu_mem_gpu("e2"))],
    ),
    ScoreCase(
        "balanced_allocation_test.go: node without the scalar resource should skip the scalar resource",
        two(3500, 40000, 3500, 40000, {"nvidia.com/gpu": 8}, None),
        _cpu_mem("in"),
        balanced_only((("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1))),
        {"n1": 63, "n2": 63},
    ),
]


def _tnode(name, *taints):
    return make_node(name, 4000, 10000, taints=list(taints))


def _tpod(*tols):
    return make_pod("in", zero_container(), tolerations=list(tols))


PNS = "PreferNoSchedule"
TAINT_SCORE_CASES = [
    ScoreCase(
        "taint_toleration_test.go: tolerated taint scores higher than intolerable",
        [_tnode("node-a", taint("foo", "bar", PNS)), _tnode("node-b", taint("foo", "blah", PNS))],
        _tpod(toleration("foo", "Equal", "bar", PNS)),
        only("TaintToleration"),
        {"node-a": 100, "node-b": 0},
    ),
    ScoreCase(
        "taint_toleration_test.go: all taints tolerated, same score regardless of count",
        [
            _tnode("node-a"),
            _tnode("node-b", taint("cpu-type", "arm64", PNS)),
            _tnode("node-c", taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)),
        ],
        _tpod(toleration("cpu-type", "Equal", "arm64", PNS), toleration("disk-type", "Equal", "ssd", PNS)),
        only("TaintToleration"),
        {"node-a": 100, "node-b": 100, "node-c": 100},
    ),
    ScoreCase(
        "taint_toleration_test.go: the more intolerable taints, the lower the score",
        [
            _tnode("node-a"),
            _tnode("node-b", taint("cpu-type", "arm64", PNS)),
            _tnode("node-c", taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)),
        ],
        _tpod(toleration("foo", "Equal", "bar", PNS)),
        only("TaintToleration"),
        {"node-a": 100, "node-b": 50, "node-c": 0},
    ),
    ScoreCase(
        "taint_toleration_test.go: only PreferNoSchedule taints and tolerations count",
        [
            _tnode("node-a"),
            _tnode("node-b", taint("cpu-type", "arm64", "NoSchedule")),
            _tnode("node-c", taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)),
        ],
        _tpod(
            toleration("cpu-type", "Equal", "arm64", "NoSchedule"),
            toleration("disk-type", "Equal", "ssd", "NoSchedule"),
        ),
        only("TaintToleration"),
        {"node-a": 100, "node-b": 100, "node-c": 0},
    ),
    ScoreCase(
        "taint_toleration_test.go: no taints and tolerations, lands on node with no taints",
        [_tnode("node-a"), _tnode("node-b", taint("cpu-type", "arm64", PNS))],
        _tpod(),
        only("TaintToleration"),
        {"node-a": 100, "node-b": 0},
    ),
    ScoreCase(
        "vcore: toleration with empty effect counts for PreferNoSchedule",
        [_tnode("node-a", taint("k", "v", PNS)), _tnode("node-b", taint("k", "w", PNS))],
        _tpod(toleration("k", "Equal", "v")),
        only("TaintToleration"),
        {"node-a": 100, "node-b": 0},
    ),
    ScoreCase(
        "vcore: Exists with empty key tolerates every PreferNoSchedule taint",
        [_tnode("node-a", taint("k", "v", PNS)), _tnode("node-b")],
        _tpod(toleration("", "Exists")),
        only("TaintToleration"),
        {"node-a": 100, "node-b": 100},
    ),
]

_aff_nodes = [
    make_node("n1", 4000, 10000, labels={"zone": "a", "rank": "5"}),
    make_node("n2", 4000, 10000, labels={"zone": "b", "rank": "9"}),
    make_node("n3", 4000, 10000, labels={"zone": "c"}),
]
AFFINITY_SCORE_CASES = [
    ScoreCase(
        "vcore: NodeAffinity preferred weights, DefaultNormalizeScore",
        _aff_nodes,
        make_pod(
            "in", zero_container(), preferred=[(2, term(expr("zone", "In", "a"))), (6, term(expr("rank", "Gt", "3")))]
        ),
        only("NodeAffinity"),
        {"n1": 100, "n2": 75, "n3": 0},
    ),
    ScoreCase(
        "vcore: NodeAffinity no preferred terms -> all 0",
        _aff_nodes,
        zero("in"),
        only("NodeAffinity"),
        {"n1": 0, "n2": 0, "n3": 0},
    ),
    ScoreCase(
        "vcore: NodeAffinity integer truncation 100*3/7",
        _aff_nodes,
        make_pod(
            "in",
            zero_container(),
            preferred=[(3, term(expr("zone", "In", "a", "b"))), (4, term(expr("zone", "In", "a")))],
        ),
        only("NodeAffinity"),
        {"n1": 100, "n2": 42, "n3": 0},
    ),
]

BINPACK_CASES = [
    # Volcano binpack: weights cpu 1, memory 1, binpack.weight 1
    ScoreCase(
        "volcano-binpack: cpu+mem",
        two(4000, 10000, 8000, 10000),
        p(2000, 5000, "in"),
        only("binpack", binpack={"binpack.weight": 1}),
        {"n1": 50, "n2": 37},
    ),
    ScoreCase(
        "volcano-binpack: over capacity -> 0",
        two(4000, 10000, 8000, 10000),
        p(2000, 5000, "in"),
        only("binpack", binpack={"binpack.weight": 1}),
        {"n1": 0, "n2": 62},
        [("n1", p(3000, 0, "e1")), ("n2", p(4000, 0, "e2"))],
    ),
    ScoreCase(
        "volcano-binpack: listed gpu with weight, zero allocatable counts its weight",
        two(4000, 10000, 4000, 10000, {"nvidia.com/gpu": 4}, None),
        p(1000, 5000, "in", {"nvidia.com/gpu": 2}),
        only(
            "binpack",
            binpack={"binpack.weight": 2, "binpack.resources": "nvidia.com/gpu", "binpack.resources.nvidia.com/gpu": 2},
        ),
        # n1: (0.25 + 0.5 + 2*0.5) / 4 * 200 = 87.5 ; n2: (0.25 + 0.5 + 0) / 4 * 200 = 37.5
        {"n1": 87, "n2": 37},
    ),
    ScoreCase(
        "volcano-binpack: unrequested resource skipped, unlisted gpu ignored",
        two(4000, 10000, 4000, 10000, {"nvidia.com/gpu": 4}, {"nvidia.com/gpu": 4}),
        p(1000, None, "in", {"nvidia.com/gpu": 4}),
        only("binpack", binpack={"binpack.weight": 1}),
        {"n1": 25, "n2": 25},
    ),
]

ALL_SCORE_CASES = SCORING_CASES + KUBE_SCORE_CASES + TAINT_SCORE_CASES + AFFINITY_SCORE_CASES + BINPACK_CASES

# ---------------------------------------------------------------------------------------------------------------
# Filter cases (all default filters)
# ---------------------------------------------------------------------------------------------------------------
_FILTERS = ["NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"]
FILTER_PROFILE = make_profile([("NodeResourcesFit", 1)], filters=_FILTERS)
U, T, A = ref.R_UNSCHEDULABLE, ref.R_TAINT, ref.R_AFFINITY


def _one(node, pod, feasible, reasons, id, existing=(), profile=FILTER_PROFILE):
    return FilterCase(id, [node], pod, profile, ["n1"] if feasible else [], reasons, list(existing))


def _n(**kw):
    return make_node("n1", 4000, 10000, **kw)


def _lab(**labels):
    return make_node("n1", 4000, 10000, labels=labels)


def _aff(*terms, **kw):
    return make_pod("in", zero_container(), required=list(terms), **kw)


FILTER_CASES = [
    # nodeunschedulable: node_unschedulable_test.go
    _one(_n(unschedulable=True), zero("in"), False, {U: 1}, "node_unschedulable_test.go: unschedulable node"),
    _one(_n(), zero("in"), True, {}, "node_unschedulable_test.go: schedulable node"),
    _one(
        _n(unschedulable=True),
        _tpod(toleration(ref.TAINT_UNSCHEDULABLE, "Exists", effect="NoSchedule")),
        True,
        {},
        "node_unschedulable_test.go: unschedulable node tolerated (Exists)",
    ),
    _one(
        _n(unschedulable=True),
        _tpod(toleration(ref.TAINT_UNSCHEDULABLE, "Equal", "", "NoSchedule")),
        True,
        {},
        "vcore: unschedulable tolerated by Equal with empty value",
    ),
    _one(
        _n(unschedulable=True),
        _tpod(toleration(ref.TAINT_UNSCHEDULABLE, "Exists", effect="NoExecute")),
        False,
        {U: 1},
        "vcore: unschedulable not tolerated by NoExecute toleration",
    ),
    _one(
        _n(unschedulable=True),
        _tpod(toleration("", "Exists")),
        True,
        {},
        "vcore: unschedulable tolerated by empty key Exists",
    ),
    # tainttoleration: taint_toleration_test.go (TestTaintTolerationFilter)
    _one(
        _n(taints=[taint("dedicated", "user1")]),
        _tpod(),
        False,
        {T: 1},
        "taint_toleration_test.go: no tolerations, nonempty taints",
    ),
    _one(
        _n(taints=[taint("dedicated", "user1")]),
        _tpod(toleration("dedicated", "Equal", "user1", "NoSchedule")),
        True,
        {},
        "taint_toleration_test.go: dedicated node user1 tolerated",
    ),
    _one(
        _n(taints=[taint("dedicated", "user1")]),
        _tpod(toleration("dedicated", "Equal", "user2", "NoSchedule")),
        False,
        {T: 1},
        "taint_toleration_test.go: dedicated node user1, toleration user2",
    ),
    _one(
        _n(taints=[taint("foo", "bar")]),
        _tpod(toleration("foo", "Exists", effect="NoSchedule")),
        True,
        {},
        "taint_toleration_test.go: operator Exists tolerates",
    ),
    _one(
        _n(taints=[taint("dedicated", "user2"), taint("foo", "bar")]),
        _tpod(
            toleration("dedicated", "Equal", "user2", "NoSchedule"), toleration("foo", "Exists", effect="NoSchedule")
        ),
        True,
        {},
        "taint_toleration_test.go: multiple tolerations, all taints tolerated",
    ),
    _one(
        _n(taints=[taint("foo", "bar")]),
        _tpod(toleration("foo", "Equal", "bar", "PreferNoSchedule")),
        False,
        {T: 1},
        "taint_toleration_test.go: key and value match, effect differs",
    ),
    _one(
        _n(taints=[taint("foo", "bar")]),
        _tpod(toleration("foo", "Equal", "bar")),
        True,
        {},
        "taint_toleration_test.go: empty toleration effect matches NoSchedule",
    ),
    _one(
        _n(taints=[taint("dedicated", "user1", "PreferNoSchedule")]),
        _tpod(toleration("dedicated", "Equal", "user2", "NoSchedule")),
        True,
        {},
        "taint_toleration_test.go: PreferNoSchedule taint does not filter",
    ),
    _one(
        _n(taints=[taint("dedicated", "user1", "PreferNoSchedule")]),
        _tpod(),
        True,
        {},
        "taint_toleration_test.go: no toleration, PreferNoSchedule taint",
    ),
    _one(_n(taints=[taint("k", "v", "NoExecute")]), _tpod(), False, {T: 1}, "vcore: NoExecute taint filters"),
    _one(
        _n(taints=[taint("k", "v", "NoExecute")]),
        _tpod(toleration("", "Exists", effect="NoExecute")),
        True,
        {},
        "vcore: empty key Exists with effect tolerates",
    ),
    _one(
        _n(taints=[taint("k", "v", "NoExecute")]),
        _tpod(toleration("", "Exists", effect="NoSchedule")),
        False,
        {T: 1},
        "vcore: empty key Exists with other effect does not tolerate",
    ),
    _one(
        _n(taints=[taint("k", "", "NoSchedule")]),
        _tpod(toleration("k", "Equal", "")),
        True,
        {},
        "vcore: Equal with empty value matches taint without value",
    ),
    # nodeaffinity: nodeSelector and required terms, every operator
    _one(
        _lab(zone="a"),
        make_pod("in", zero_container(), node_selector={"zone": "a"}),
        True,
        {},
        "node_affinity_test.go: nodeSelector matches",
    ),
    _one(
        _lab(zone="b"),
        make_pod("in", zero_container(), node_selector={"zone": "a"}),
        False,
        {A: 1},
        "node_affinity_test.go: nodeSelector value differs",
    ),
    _one(
        _lab(),
        make_pod("in", zero_container(), node_selector={"zone": "a"}),
        False,
        {A: 1},
        "node_affinity_test.go: nodeSelector key missing",
    ),
    _one(_lab(zone="a"), _aff(term(expr("zone", "In", "a", "b"))), True, {}, "vcore: In matches"),
    _one(_lab(zone="c"), _aff(term(expr("zone", "In", "a", "b"))), False, {A: 1}, "vcore: In no match"),
    _one(_lab(), _aff(term(expr("zone", "In", "a"))), False, {A: 1}, "vcore: In on missing key"),
    _one(_lab(zone="c"), _aff(term(expr("zone", "NotIn", "a", "b"))), True, {}, "vcore: NotIn matches"),
    _one(_lab(), _aff(term(expr("zone", "NotIn", "a"))), True, {}, "vcore: NotIn on missing key matches"),
    _one(_lab(zone="a"), _aff(term(expr("zone", "NotIn", "a"))), False, {A: 1}, "vcore: NotIn no match"),
    _one(_lab(zone=""), _aff(term(expr("zone", "Exists"))), True, {}, "vcore: Exists with empty value"),
    _one(_lab(), _aff(term(expr("zone", "Exists"))), False, {A: 1}, "vcore: Exists missing"),
    _one(_lab(), _aff(term(expr("zone", "DoesNotExist"))), True, {}, "vcore: DoesNotExist"),
    _one(_lab(zone="a"), _aff(term(expr("zone", "DoesNotExist"))), False, {A: 1}, "vcore: DoesNotExist present"),
    _one(_lab(rank="5"), _aff(term(expr("rank", "Gt", "4"))), True, {}, "vcore: Gt"),
    _one(_lab(rank="5"), _aff(term(expr("rank", "Gt", "5"))), False, {A: 1}, "vcore: Gt equal is false"),
    _one(_lab(rank="-7"), _aff(term(expr("rank", "Lt", "-6"))), True, {}, "vcore: Lt negative"),
    _one(_lab(rank="007"), _aff(term(expr("rank", "Gt", "6"))), True, {}, "vcore: Gt leading zeros parse"),
    _one(_lab(rank="abc"), _aff(term(expr("rank", "Gt", "1"))), False, {A: 1}, "vcore: Gt non-integer label"),
    _one(_lab(rank="abc"), _aff(term(expr("rank", "Lt", "1"))), False, {A: 1}, "vcore: Lt non-integer label"),
    _one(_lab(rank="1.5"), _aff(term(expr("rank", "Lt", "2"))), False, {A: 1}, "vcore: Lt decimal label"),
    _one(_lab(rank="1e3"), _aff(term(expr("rank", "Gt", "1"))), False, {A: 1}, "vcore: Gt exponent label"),
    _one(
        _lab(rank="99999999999999999999"),
        _aff(term(expr("rank", "Gt", "1"))),
        False,
        {A: 1},
        "vcore: Gt label overflows int64",
    ),
    _one(_lab(), _aff(term(expr("rank", "Gt", "1"))), False, {A: 1}, "vcore: Gt missing key"),
    _one(
        _lab(zone="a", rank="3"),
        _aff(term(expr("zone", "In", "a"), expr("rank", "Gt", "5"))),
        False,
        {A: 1},
        "vcore: expressions of a term are ANDed",
    ),
    _one(
        _lab(zone="a", rank="3"),
        _aff(term(expr("zone", "In", "x")), term(expr("rank", "Lt", "5"))),
        True,
        {},
        "vcore: terms are ORed",
    ),
    _one(
        _lab(zone="a"),
        _aff(term(fields=[{"key": "metadata.name", "operator": "In", "values": ["n1"]}])),
        True,
        {},
        "node_affinity_test.go: matchFields metadata.name In",
    ),
    _one(
        _lab(zone="a"),
        _aff(term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}])),
        False,
        {A: 1},
        "node_affinity_test.go: matchFields metadata.name NotIn",
    ),
    _one(
        _lab(zone="a"),
        _aff(term(expr("zone", "In", "a")), node_selector={"zone": "b"}),
        False,
        {A: 1},
        "node_affinity_test.go: nodeSelector AND required affinity",
    ),
    # noderesources: fit_test.go
    _one(
        make_node("n1", 4000, 10000, pods=1),
        zero("in"),
        False,
        {ref.R_TOO_MANY_PODS: 1},
        "fit_test.go: too many pods",
        existing=[("n1", zero("e1"))],
    ),
    _one(
        make_node("n1", 4000, 10000, pods=0),
        req_pod("in", 5000, 20000),
        False,
        {ref.R_TOO_MANY_PODS: 1, "Insufficient cpu": 1, "Insufficient memory": 1},
        "fit_test.go: too many pods and insufficient resources all counted",
    ),
    _one(
        _n(),
        req_pod("in", 3000, 5000),
        False,
        {"Insufficient cpu": 1},
        "fit_test.go: insufficient cpu",
        existing=[("n1", p(2000, 0, "e1"))],
    ),
    _one(
        _n(), req_pod("in", 2000, 5000), True, {}, "fit_test.go: exactly fits", existing=[("n1", p(2000, 5000, "e1"))]
    ),
    _one(
        _n(),
        req_pod("in", None, None),
        True,
        {},
        "fit_test.go: missing requests fit a full node",
        existing=[("n1", p(4000, 10000, "e1"))],
    ),
    _one(
        _n(extra={EXT: 2}),
        req_pod("in", 0, 0, {EXT: 3}),
        False,
        {f"Insufficient {EXT}": 1},
        "fit_test.go: insufficient extended resource",
    ),
    _one(
        _n(),
        req_pod("in", 0, 0, {EXT: 1}),
        False,
        {f"Insufficient {EXT}": 1},
        "fit_test.go: extended resource the node lacks",
    ),
    _one(
        _n(),
        req_pod("in", 0, 0, {EXT: 1}),
        True,
        {},
        "fit_test.go: ignoredResources",
        profile=make_profile([("NodeResourcesFit", 1)], filters=_FILTERS, fit=fit_args(ignored=[EXT])),
    ),
    _one(
        _n(),
        req_pod("in", 0, 0, {EXT: 1}),
        True,
        {},
        "fit_test.go: ignoredResourceGroups",
        profile=make_profile([("NodeResourcesFit", 1)], filters=_FILTERS, fit=fit_args(ignored_groups=["abc.com"])),
    ),
    _one(
        _n(),
        req_pod("in", 0, 0, {"hugepages-2Mi": 2 * MI}),
        False,
        {"Insufficient hugepages-2Mi": 1},
        "fit_test.go: hugepages are not extended, never ignored",
        profile=make_profile([("NodeResourcesFit", 1)], filters=_FILTERS, fit=fit_args(ignored=["hugepages-2Mi"])),
    ),
    _one(
        _n(extra={"ephemeral-storage": 100}),
        req_pod("in", 0, 0, {"ephemeral-storage": 101}),
        False,
        {"Insufficient ephemeral-storage": 1},
        "fit_test.go: insufficient ephemeral-storage",
    ),
    _one(
        _n(),
        make_pod("in", container({"cpu": 1000}), init=[container({"cpu": 4500})]),
        False,
        {"Insufficient cpu": 1},
        "fit_test.go: init container dominates",
    ),
    _one(
        _n(),
        make_pod("in", container({"cpu": 2000}), init=[container({"cpu": 2500}, restartPolicy="Always")]),
        False,
        {"Insufficient cpu": 1},
        "fit_test.go: sidecar adds to containers (2000+2500 > 4000)",
    ),
    _one(
        _n(),
        make_pod("in", container({"cpu": 3000}), overhead={"cpu": 1001}),
        False,
        {"Insufficient cpu": 1},
        "fit_test.go: overhead counts",
    ),
    _one(
        _n(),
        make_pod("in", container(limits={"cpu": 4001})),
        False,
        {"Insufficient cpu": 1},
        "vcore: missing request defaults to limit",
    ),
    # first failing plugin only
    _one(
        _n(unschedulable=True, taints=[taint("k", "v")], labels={}),
        make_pod("in", container({"cpu": 9000}), node_selector={"zone": "a"}),
        False,
        {U: 1},
        "vcore: first failing plugin only (unschedulable)",
    ),
    _one(
        _n(taints=[taint("k", "v")]),
        make_pod("in", container({"cpu": 9000}), node_selector={"zone": "a"}),
        False,
        {T: 1},
        "vcore: first failing plugin only (taint)",
    ),
    _one(
        _n(),
        make_pod("in", container({"cpu": 9000}), node_selector={"zone": "a"}),
        False,
        {A: 1},
        "vcore: first failing plugin only (affinity)",
    ),
]


# ---------------------------------------------------------------------------------------------------------------
# Running a case through the reference
# ---------------------------------------------------------------------------------------------------------------
def populate(cluster, nodes, existing):
    """Add the nodes and bind the existing (node name, pod) pairs; works for the reference and vcore clusters."""
    for n in nodes:
        cluster.add_node(n)
    for node_name, pod in existing:
        cluster.bind(pod, node_name)
    return cluster


def build_reference(nodes, existing) -> ref.ReferenceCluster:
    return populate(ref.ReferenceCluster(), nodes, existing)


@pytest.mark.parametrize("case", ALL_SCORE_CASES, ids=lambda c: c.id)
def test_reference_score_table(case):
    c = build_reference(case.nodes, case.existing)
    assert ref.reference_score(c, case.pod, ref.profile_to_native(case.profile)) == case.expected


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.id)
def test_reference_filter_table(case):
    c = build_reference(case.nodes, case.existing)
    feasible, reasons = ref.reference_filter(c, case.pod, ref.profile_to_native(case.profile))
    assert (feasible, reasons) == (case.feasible, case.reasons)


# helper.BuildBrokenLinearFunction: kube-scheduler's TestBrokenLinearFunction (unscaled points).
BROKEN_LINEAR = [
    (
        [(10, 1), (90, 9)],
        [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)],
    ),
    ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
]


@pytest.mark.parametrize("shape,points", BROKEN_LINEAR, ids=["case_0", "case_1", "case_2"])
def test_broken_linear_function(shape, points):
    for p_, expected in points:
        assert ref.broken_linear(shape, p_) == expected, (shape, p_)


@pytest.mark.parametrize("p_,expected", [(0, 10), (19, 10), (20, 20), (89, 80), (90, 90), (110, 90)])
def test_scoring_md_piecewise_example(p_, expected):
    """SCORING.md: {(10,1),(90,9)} x10 -- the unscaled function's value times 10."""
    assert ref.broken_linear([(10, 1), (90, 9)], p_) * 10 == expected


def test_broken_linear_truncates_toward_zero():
    # decreasing segment: 10 + (0-10)*(5-0)/(100-0) = 10 - 0.5 -> Go truncates to 10 (Python // would give 9)
    assert ref.broken_linear([(0, 10), (100, 0)], 5) == 10
    assert ref.broken_linear([(0, 100), (100, 0)], 25) == 75


# ---------------------------------------------------------------------------------------------------------------
# Quantities and pod requests
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,resource,expected",
    [
        ("100m", "cpu", 100),
        ("1", "cpu", 1000),
        ("0.5", "cpu", 500),
        (".5", "cpu", 500),
        ("1u", "cpu", 1),
        ("1n", "cpu", 1),
        ("1e3", "cpu", 1_000_000),
        ("1E-3", "cpu", 1),
        ("+1", "cpu", 1000),
        ("2k", "cpu", 2_000_000),
        ("1Gi", "memory", 2**30),
        ("1G", "memory", 10**9),
        ("1.5Ki", "memory", 1536),
        ("0.1", "memory", 1),
        ("1m", "memory", 1),
        ("128974848", "memory", 128974848),
        ("129e6", "memory", 129000000),
        ("123Mi", "memory", 128974848),
        (3, "memory", 3),
        ("0", "memory", 0),
    ],
)
def test_quantity(text, resource, expected):
    assert ref.canonical(resource, ref.parse_quantity(text)) == expected


@pytest.mark.parametrize("bad", ["", "1x", "1.2.3", "Mi", "1 Mi", "--1", "1e", "1Ki5"])
def test_quantity_malformed(bad):
    with pytest.raises(ValueError):
        ref.parse_quantity(bad)


def test_pod_requests_sum_then_ceil():
    pod = make_pod("x", container({"cpu": "500u"}), container({"cpu": "500u"}))
    assert ref.RefPod.from_dict(pod).requests == {"cpu": 1}


def test_pod_requests_init_sidecar_overhead_and_nonzero():
    pod = make_pod(
        "x",
        container({"cpu": 1000, "memory": 100}),
        container({"cpu": 500}),
        init=[container({"cpu": 200}, restartPolicy="Always"), container({"cpu": 1900, "memory": 0})],
        overhead={"cpu": 10, "memory": 5},
    )
    rp = ref.RefPod.from_dict(pod)
    # containers 1500 + sidecar 200 = 1700; init 1900 + preceding sidecar 200 = 2100 -> max 2100 (+10 overhead)
    assert rp.requests == {"cpu": 2110, "memory": 105}
    # non-zero: c1 1000/100, c2 500/200Mi(missing), sidecar 200/200Mi(missing) -> 1700 / 100+2*200Mi;
    # init 1900/0 + sidecar 200/200Mi = 2100/200Mi -> max(1700, 2100)=2100, max(100+400Mi, 200Mi)
    assert rp.nonzero_cpu == 2110
    assert rp.nonzero_mem == 100 + 2 * ref.DEFAULT_MEMORY_REQUEST + 5


def test_nonzero_missing_vs_explicit_zero():
    assert (
        ref.RefPod.from_dict(make_pod("x", container())).nonzero_cpu,
        ref.RefPod.from_dict(make_pod("x", container())).nonzero_mem,
    ) == (100, 200 * 2**20)
    z = ref.RefPod.from_dict(make_pod("x", zero_container()))
    assert (z.nonzero_cpu, z.nonzero_mem, z.requests) == (0, 0, {})


def test_schedule_binds_and_reports_ties():
    c = build_reference([make_node("a", 4000, 10000), make_node("b", 4000, 10000)], [])
    prof = ref.profile_to_native(make_profile([("NodeResourcesFit", 1)], pct=100))
    steps = ref.reference_schedule(
        c, [req_pod("p1", 1000, 1000), req_pod("p2", 1000, 1000), req_pod("p3", 9000, 1000)], prof
    )
    assert steps[0].best == {"a", "b"} and steps[0].node == "a"
    assert steps[1].best == {"b"} and steps[1].node == "b"
    assert steps[2].node is None and steps[2].reasons == {"Insufficient cpu": 2}
    assert c.usage("a").requested == {"cpu": 1000, "memory": 1000}


def test_profile_to_native_defaults():
    prof = ref.profile_to_native({})
    assert prof["filters"] == list(ref.FILTER_PLUGINS)
    assert prof["scores"] == list(ref.DEFAULT_SCORE_WEIGHTS)
    assert prof["fit"]["strategy"] == "LeastAllocated"
    assert prof["fit"]["resources"] == [("cpu", 1), ("memory", 1)]
