"""Benchmark group: DefaultPreemption's dry run for one unschedulable pod on 5000 nodes.

5000 nodes (4 cpu, 16Gi, 110 pods), each full with four 1-cpu pods of mixed priorities (0..3) and start times, a
quarter of them covered by PodDisruptionBudgets that allow no disruption; one pod of priority 10 asking for 2 cpu
fits no node. ``Scheduler.preempt`` (the native dry run: potential nodes, victims reprieved per node, PDB counting,
the pick), with minCandidateNodesPercentage 100 so that every node is examined, and with kube-scheduler's defaults
(10% / 100: the walk stops once 500 candidates are found). ns/node is per node of the cluster.

Baseline: tests/plugins/preemption_reference.py, the pure-Python walk straight from kube-scheduler's code, on the
same cluster; node, victims, violations and candidates asserted equal before timing.
"""

from __future__ import annotations

import pytest

import vcore
from tests.plugins.preemption_reference import Cluster as RefCluster

GROUP = "preemption dry run 5000 nodes"
N_NODES = 5000
EVERY_NODE = {"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 100}
DEFAULTS = {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}


def _profile(args: dict[str, int]) -> dict:
    return {"pluginConfig": [{"name": "DefaultPreemption", "args": dict(args)}]}


def _objects() -> tuple[list[dict], list[dict], list[dict]]:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i:04d}", "labels": {"kubernetes.io/hostname": f"n{i:04d}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
        }
        for i in range(N_NODES)
    ]
    pods = []
    for i in range(N_NODES):
        for j in range(4):
            app = f"app{(i + j) % 8}"
            pods.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"p{i:04d}-{j}", "namespace": "default", "labels": {"app": app}},
                    "spec": {
                        "nodeName": f"n{i:04d}",
                        "priority": (i * 7 + j * 3) % 4,
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
                    },
                    "status": {"startTime": f"2025-01-01T{(i % 24):02d}:{j * 10:02d}:00Z"},
                }
            )
    budgets = [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": f"guard-{a}", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": f"app{a}"}}},
            "status": {"disruptionsAllowed": 0},
        }
        for a in (0, 1)
    ]
    return nodes, pods, budgets


PREEMPTOR = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "urgent", "namespace": "default"},
    "spec": {"priority": 10, "containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]},
}


@pytest.fixture(scope="module")
def clusters():
    nodes, pods, budgets = _objects()
    cluster, ref = vcore.Cluster(), RefCluster()
    for n in nodes:
        cluster.add_node(n)
        ref.add_node(n)
    for p in pods:
        cluster.bind(p, p["spec"]["nodeName"])
        ref.bind(p)
    for b in budgets:
        cluster.add_pod_disruption_budget(b)
        ref.add_pdb(b)
    return cluster, ref


def _agree(got: vcore.types.Preemption, want) -> None:
    assert (got.node, got.victims, got.pdb_violations, got.message) == (
        want.node,
        want.victims,
        want.pdb_violations,
        want.message,
    )
    assert tuple(tuple(c) for c in got.candidates) == want.candidates


@pytest.mark.parametrize("args, name", [(EVERY_NODE, "every node"), (DEFAULTS, "defaults 10%/100")])
def test_reference(benchmark, clusters, bench_report, args, name):
    benchmark.group = GROUP
    _, ref = clusters
    want = benchmark.pedantic(
        lambda: ref.preempt(
            PREEMPTOR,
            offset=7,
            percentage=args["minCandidateNodesPercentage"],
            absolute=args["minCandidateNodesAbsolute"],
        ),
        rounds=1,
        warmup_rounds=0,
    )
    assert want.node is not None
    if benchmark.stats is not None:
        bench_report.add(
            benchmark,
            GROUP,
            f"python reference, {name}",
            ns_per_node=round(benchmark.stats.stats.median * 1e9 / N_NODES),
        )


@pytest.mark.parametrize("args, name", [(EVERY_NODE, "every node"), (DEFAULTS, "defaults 10%/100")])
def test_native(benchmark, clusters, bench_report, args, name):
    benchmark.group = GROUP
    cluster, ref = clusters
    scheduler = vcore.Scheduler(cluster, _profile(args))
    _agree(
        scheduler.preempt(PREEMPTOR, offset=7),
        ref.preempt(
            PREEMPTOR,
            offset=7,
            percentage=args["minCandidateNodesPercentage"],
            absolute=args["minCandidateNodesAbsolute"],
        ),
    )
    got = benchmark.pedantic(lambda: scheduler.preempt(PREEMPTOR, offset=7), rounds=5, warmup_rounds=1)
    assert got.node is not None
    if benchmark.stats is None:
        return
    figures = {"ns_per_node": round(benchmark.stats.stats.median * 1e9 / N_NODES), "candidates": len(got.candidates)}
    reference = bench_report.medians.get((GROUP, f"python reference, {name}"))
    if reference:
        figures["speedup_vs_python"] = round(reference / benchmark.stats.stats.median, 1)
    bench_report.add(benchmark, GROUP, f"native, {name}", **figures)
