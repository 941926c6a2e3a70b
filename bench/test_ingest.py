"""Benchmark group (c): ingest of Kubernetes objects into a Cluster.

5000 Node dicts (SchedulingBasic's node shape) via Cluster.add_node, then 10,000 Pod dicts bound with
Cluster.bind (two per node), into a fresh Cluster each round. Reported as objects/s, with the node and pod
phases split out (from the last round).
"""

from __future__ import annotations

import time

import pytest

from vcore import Cluster
from vcore.sim.synthetic import scheduling_basic, synthetic_nodes

GROUP = "ingest"


@pytest.fixture(scope="module")
def objects():
    w = scheduling_basic(n_nodes=5000, n_init=0, n_pods=10000)
    names = [n["metadata"]["name"] for n in w.nodes]
    return w.nodes, [(pod, names[i % len(names)]) for i, pod in enumerate(w.pods)]


def ingest(nodes, bindings, phases):
    t0 = time.perf_counter()
    cluster = Cluster()
    for node in nodes:
        cluster.add_node(node)
    t1 = time.perf_counter()
    for pod, node_name in bindings:
        cluster.bind(pod, node_name)
    t2 = time.perf_counter()
    phases[:] = [t1 - t0, t2 - t1]
    return cluster


def test_ingest_nodes_and_pods(benchmark, objects, bench_report):
    benchmark.group = GROUP
    nodes, bindings = objects
    phases: list[float] = []
    cluster = benchmark.pedantic(ingest, args=(nodes, bindings, phases), rounds=5, warmup_rounds=1)
    assert cluster.n_nodes == len(nodes) and cluster.n_pods == len(bindings)
    if benchmark.stats is None:
        return
    n = len(nodes) + len(bindings)
    bench_report.add(
        benchmark,
        GROUP,
        "5000 nodes + 10000 pods",
        objects_per_s=round(n / benchmark.stats.stats.median),
        nodes_per_s=round(len(nodes) / phases[0]),
        pods_per_s=round(len(bindings) / phases[1]),
    )


def test_ingest_synthetic_nodes(benchmark, bench_report):
    """Heterogeneous nodes (labels, taints, GPUs) cost more to convert than SchedulingBasic's bare ones."""
    benchmark.group = GROUP
    nodes = synthetic_nodes(5000, seed=0)

    def run():
        cluster = Cluster()
        for node in nodes:
            cluster.add_node(node)
        return cluster

    cluster = benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    assert cluster.n_nodes == len(nodes)
    if benchmark.stats is not None:
        bench_report.add(
            benchmark, GROUP, "5000 synthetic nodes", objects_per_s=round(len(nodes) / benchmark.stats.stats.median)
        )
