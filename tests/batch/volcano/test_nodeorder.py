"""Volcano v1.14 pkg/scheduler/plugins/nodeorder/nodeorder_test.go, against vcore's cycle and its nodeorder profile.

TestNodeOrderPlugin runs the allocate action with gang (jobReady) and nodeorder (nodeOrder), the eight weight
arguments all given (those a case leaves out as 0, so each case scores with its one plugin), and checks where the
pending pod binds. Here the same conf goes through ``vcore.Scheduler(cluster, cycle=conf).run_cycle()``, and the
nodes' scores (``Scheduler.score``, the profile that ``CycleConfig`` makes of the nodeorder arguments) must put the
expected node strictly first: Volcano picks at random among equally scored nodes, so the Go case holds only then.

TestInitPlugin checks which kube-scheduler score plugins the weights turn on (NodeOrderScorePlugins for the
per-node ones, ScorePlugins for the batch ones). vcore has one list for both: the score plugins of the profile the
nodeorder arguments make (``Scheduler.profile``), LeastAllocated and MostAllocated being NodeResourcesFit's scoring
strategy."""

from __future__ import annotations

from typing import Any

import pytest

import vcore

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    RUNNING,
    Case,
    Suite,
    build_cluster,
    build_node,
    build_pod,
    build_podgroup,
    build_queue,
    node_res,
    opt,
    rl,
    scheduler_conf,
)

#: nodeorder's argument keys (plugins/nodeorder: the *Weight constants).
WEIGHT_KEYS = (
    "leastrequested.weight",
    "mostrequested.weight",
    "balancedresource.weight",
    "nodeaffinity.weight",
    "tainttoleration.weight",
    "podaffinity.weight",
    "podtopologyspread.weight",
    "imagelocality.weight",
)
REGISTERED = {"nodeorder", "gang"}
ACTIONS = ["allocate"]


def tiers(**weights: int) -> list:
    """The Go test's tiers: gang with jobReady, nodeorder with nodeOrder and every weight given (0 unless set)."""
    unknown = {f"{k}.weight" for k in weights} - set(WEIGHT_KEYS)
    assert not unknown, unknown
    arguments = {key: weights.get(key.removesuffix(".weight"), 0) for key in WEIGHT_KEYS}
    return [[opt("gang", EnabledJobReady=True), opt("nodeorder", arguments, EnabledNodeOrder=True)]]


PG1 = build_podgroup("pg1", "c1", "c1", 0, None, PG_INQUEUE)
QUEUES = [build_queue("c1", 1)]
R1G = rl("1", "1G")


def tainted(node: dict, *taints: dict) -> dict:
    node["spec"] = {"taints": list(taints)}
    return node


def prefer_zone1() -> dict:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["zone1"]}]},
                }
            ]
        }
    }


def near_service_s1() -> dict:
    return {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"service": "s1"}},
                        "topologyKey": "kubernetes.io/hostname",
                    },
                }
            ]
        }
    }


def spread_over_zones(pod: dict) -> dict:
    """util.BuildPodWithTopologySpreadConstraints: maxSkew 1 over "zone", ScheduleAnyway, app=foo."""
    pod["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "foo"}},
        }
    ]
    return pod


def hostnames(*names: str) -> list[dict]:
    return [build_node(n, node_res("2", "4Gi"), {"kubernetes.io/hostname": n}) for n in names]


SUITE = Suite(
    "TestNodeOrderPlugin",
    tiers(),
    ACTIONS,
    [
        Case(
            "leastAllocated strategy",
            tiers=tiers(leastrequested=1),
            podgroups=[PG1],
            pods=[build_pod("c1", "p1", "", PENDING, R1G, "pg1")],
            nodes=[build_node("n1", node_res("2", "4Gi")), build_node("n2", node_res("4", "8Gi"))],
            queues=QUEUES,
            expect_binds_num=1,
            expect_bind={"c1/p1": "n2"},
        ),
        Case(
            "mostAllocated strategy",
            tiers=tiers(mostrequested=1),
            podgroups=[PG1],
            pods=[build_pod("c1", "p1", "", PENDING, R1G, "pg1")],
            nodes=[build_node("n1", node_res("2", "4Gi")), build_node("n2", node_res("4", "8Gi"))],
            queues=QUEUES,
            expect_binds_num=1,
            expect_bind={"c1/p1": "n1"},
        ),
        Case(
            "balanced allocation prefers balanced node",
            tiers=tiers(balancedresource=10),
            podgroups=[PG1],
            pods=[build_pod("c1", "p1", "", PENDING, rl("1", "1Gi"), "pg1")],
            # n1's cpu and memory fill alike (1/2, 1/2); n2's do not (1/4, 1/2)
            nodes=[build_node("n1", node_res("2", "2Gi")), build_node("n2", node_res("4", "2Gi"))],
            queues=QUEUES,
            expect_binds_num=1,
            expect_bind={"c1/p1": "n1"},
        ),
        Case(
            "node affinity prefers labeled node",
            tiers=tiers(nodeaffinity=10),
            podgroups=[PG1],
            pods=[build_pod("c1", "p1", "", PENDING, R1G, "pg1", affinity=prefer_zone1())],
            nodes=[
                build_node("n1", node_res("2", "4Gi"), {"zone": "zone1"}),
                build_node("n2", node_res("2", "4Gi"), {"zone": "zone2"}),
            ],
            queues=QUEUES,
            expect_binds_num=1,
            expect_bind={"c1/p1": "n1"},
        ),
        Case(
            "taint toleration prefers non-tainted node",
            tiers=tiers(tainttoleration=10),
            podgroups=[PG1],
            pods=[build_pod("c1", "p1", "", PENDING, R1G, "pg1")],  # BuildPodWithTolerations(..., nil)
            nodes=[
                build_node("n1", node_res("2", "4Gi")),
                tainted(
                    build_node("n2", node_res("2", "4Gi")),
                    {"key": "key1", "value": "value1", "effect": "PreferNoSchedule"},
                ),
            ],
            queues=QUEUES,
            expect_binds_num=1,
            expect_bind={"c1/p1": "n1"},
        ),
        Case(
            "inter-pod affinity prefers node with matching pod",
            tiers=tiers(podaffinity=10),
            podgroups=[PG1],
            pods=[
                build_pod("c1", "p1", "n1", RUNNING, R1G, "pg1", {"service": "s1"}),
                build_pod("c1", "p-noise", "n3", RUNNING, R1G, "pg1", {"service": "s2"}),
                build_pod("c1", "p2", "", PENDING, R1G, "pg1", affinity=near_service_s1()),
            ],
            nodes=hostnames("n1", "n2", "n3"),
            queues=QUEUES,
            expect_binds_num=1,
            expect_bind={"c1/p2": "n1"},
        ),
        Case(
            "pod topology spread prefers node to reduce skew",
            tiers=tiers(podtopologyspread=10),
            podgroups=[PG1],
            pods=[
                build_pod("c1", "p1", "n1", RUNNING, R1G, "pg1", {"app": "foo"}),
                build_pod("c1", "p2", "n1", RUNNING, R1G, "pg1", {"app": "foo"}),
                build_pod("c1", "p3", "n2", RUNNING, R1G, "pg1", {"app": "foo"}),
                spread_over_zones(build_pod("c1", "p4", "", PENDING, R1G, "pg1", {"app": "foo"})),
            ],
            # zone1 holds two app=foo pods, zone2 one, zone3 none
            nodes=[build_node(f"n{i}", node_res("4", "4Gi"), {"zone": f"zone{i}"}) for i in (1, 2, 3)],
            queues=QUEUES,
            expect_binds_num=1,
            expect_bind={"c1/p4": "n3"},
        ),
    ],
    REGISTERED,
)


def pending_pod(case: Case) -> dict:
    (pod,) = [p for p in case.pods if p["status"]["phase"] == PENDING]
    return pod


@pytest.mark.parametrize("case", SUITE.params())
def test_node_order_plugin(case):
    SUITE.run(case)
    # The node the pod binds to must score strictly above the others (Volcano breaks ties at random).
    conf = scheduler_conf(case.tiers or SUITE.tiers, ACTIONS, REGISTERED)
    scores = vcore.Scheduler(build_cluster(case), cycle=conf).score(pending_pod(case))
    ((key, best),) = (case.expect_bind or {}).items()
    assert set(scores) == {n["metadata"]["name"] for n in case.nodes}, scores
    assert all(scores[best] > s for n, s in scores.items() if n != best), f"{key}: scores {scores}"


# -- TestInitPlugin -----------------------------------------------------------------------------------------------
def score_plugins(arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The score plugins (name -> weight) of the profile a nodeorder plugin with these arguments makes, with
    NodeResourcesFit named after its scoring strategy as Volcano keys it (NodeResourcesFit_LeastAllocated ...)."""
    option: dict[str, Any] = {"name": "nodeorder"}
    if arguments is not None:
        option["arguments"] = arguments
    profile = vcore.Scheduler(vcore.Cluster(), cycle={"actions": "allocate", "tiers": [{"plugins": [option]}]}).profile
    out = dict(profile.scores)
    if "NodeResourcesFit" in out:
        out[f"NodeResourcesFit_{profile.args['NodeResourcesFit'].strategy}"] = out.pop("NodeResourcesFit")
    return out


PER_NODE = (
    "NodeResourcesFit_LeastAllocated",
    "NodeResourcesFit_MostAllocated",
    "NodeResourcesBalancedAllocation",
    "NodeAffinity",
    "ImageLocality",
)
BATCH = ("InterPodAffinity", "TaintToleration", "PodTopologySpread")


@pytest.mark.parametrize(
    ("arguments", "expect_on", "expect_off"),
    [
        pytest.param(
            None,
            (
                "NodeResourcesFit_LeastAllocated",
                "NodeResourcesBalancedAllocation",
                "NodeAffinity",
                "ImageLocality",
                *BATCH,
            ),
            ("NodeResourcesFit_MostAllocated",),
            id="default weights",
        ),
        pytest.param(dict.fromkeys(WEIGHT_KEYS, 0), (), PER_NODE + BATCH, id="all weights zero"),
    ],
)
def test_init_plugin(arguments, expect_on, expect_off):
    plugins = score_plugins(arguments)
    assert all(p in plugins for p in expect_on), plugins
    assert not any(p in plugins for p in expect_off), plugins


def test_init_plugin_default_weights():
    """calculateWeight(nil): the weights the default plugins score with."""
    assert score_plugins(None) == {
        "NodeResourcesFit_LeastAllocated": 1,
        "NodeResourcesBalancedAllocation": 1,
        "NodeAffinity": 2,
        "ImageLocality": 1,
        "InterPodAffinity": 2,
        "TaintToleration": 3,
        "PodTopologySpread": 2,
    }


def test_balanced_allocation_counts_gpus():
    """Not a Go case: nodeorder's InitPlugin gives NodeResourcesBalancedAllocation cpu, memory and nvidia.com/gpu.
    A 1-GPU pod on two nodes alike but for their GPUs: GPU fractions 1/2 and 1/8 beside cpu and memory at 1/4 give
    (1 - std) * 100 = 88 and 94; on cpu and memory alone both nodes would score 100."""
    gpus = {"na": "2", "nb": "8"}
    nodes = [build_node(n, {**node_res("4", "4Gi", "10"), "nvidia.com/gpu": g}) for n, g in gpus.items()]
    conf = scheduler_conf(tiers(balancedresource=1), ACTIONS, REGISTERED)
    scheduler = vcore.Scheduler(build_cluster(Case("gpus", nodes=nodes)), cycle=conf)
    gpu_pod = build_pod("c1", "p1", "", PENDING, {**rl("1", "1Gi"), "nvidia.com/gpu": "1"}, "")
    assert scheduler.score(gpu_pod) == {"na": 88, "nb": 94}
    assert scheduler.score(build_pod("c1", "p2", "", PENDING, rl("1", "1Gi"), "")) == {"na": 100, "nb": 100}
