"""Benchmark group: kube-scheduler's scheduler_perf workloads for inter-pod constraints, in process.

Each workload (bench/scheduler_perf.py: SchedulingPodAntiAffinity, SchedulingPodAffinity,
SchedulingPreferredPodAffinity, SchedulingPreferredPodAntiAffinity, TopologySpreading, MixedSchedulingBasePod, their
5000-node variants) is replayed through Scheduler.schedule(): the initial pods placed first (untimed), then the
measured pods in one call, timed. Target: 100x kube-scheduler CI's floor for the workload (pods/s).

Baseline: scheduler_perf.Baseline at a tenth of the workload (500 nodes): every placement vcore makes is checked
against numpy's view of kube-scheduler's default profile (one of the best-scoring sampled feasible nodes), timed as
the baseline's pods/s; every placement must agree.
"""

from __future__ import annotations

import pytest

from conftest import peak_rss_mib
from scheduler_perf import WORKLOADS, Baseline, workload
from vcore import Cluster, Scheduler

BASELINE_SCALE = 0.1


def fresh_scheduler(w) -> Scheduler:
    cluster = Cluster()
    for node in w.nodes:
        cluster.add_node(node)
    scheduler = Scheduler(cluster, seed=0)
    assert all(p.node is not None for p in scheduler.schedule(w.init_pods))
    return scheduler


@pytest.mark.parametrize("name", WORKLOADS)
def test_baseline_agrees(benchmark, bench_report, name):
    """vcore's placements at 500 nodes, each checked by the numpy baseline (timed: the baseline's rate)."""
    w = workload(name, scale=BASELINE_SCALE)
    group = f"scheduler_perf {name}"
    benchmark.group = group
    cluster = Cluster()
    for node in w.nodes:
        cluster.add_node(node)
    scheduler = Scheduler(cluster, seed=0)
    init = scheduler.schedule(w.init_pods)
    measured = scheduler.schedule(w.pods)
    shapes = [_shape(p) for p in w.init_pods + w.pods]

    def check():
        b = Baseline(w.nodes)
        disagree = [
            pl.pod
            for pl, p, shape in zip(init + measured, w.init_pods + w.pods, shapes)
            if not b.check(shape, p, pl.node)
        ]
        return disagree

    disagree = benchmark.pedantic(check, rounds=1, warmup_rounds=0)
    assert disagree == [], f"{len(disagree)} placements the baseline would not make, first {disagree[:3]}"
    if benchmark.stats is not None:
        n = len(w.init_pods) + len(w.pods)
        bench_report.add(
            benchmark,
            group,
            f"numpy baseline ({len(w.nodes)} nodes)",
            pods_per_s=round(n / benchmark.stats.stats.median),
            agree=f"{n}/{n}",
            ns_per_node_pod=round(benchmark.stats.stats.median / n / len(w.nodes) * 1e9, 2),
        )


def _shape(p) -> str:
    """The scheduler_perf shape of a pod the workload made (its color label and constraints)."""
    spec, color = p["spec"], (p["metadata"].get("labels") or {}).get("color")
    if "topologySpreadConstraints" in spec:
        return "spreading"
    affinity = spec.get("affinity") or {}
    if "podAffinity" in affinity:
        return (
            "affinity"
            if "requiredDuringSchedulingIgnoredDuringExecution" in affinity["podAffinity"]
            else "preferred-affinity"
        )
    if "podAntiAffinity" in affinity:
        return (
            "anti-affinity"
            if "requiredDuringSchedulingIgnoredDuringExecution" in affinity["podAntiAffinity"]
            else "preferred-anti"
        )
    assert color is None
    return "default"


@pytest.mark.parametrize("name", WORKLOADS)
def test_native(benchmark, bench_report, name):
    w = workload(name)
    group = f"scheduler_perf {name}"
    benchmark.group = group

    def setup():
        return (fresh_scheduler(w),), {}

    def run(scheduler):
        return scheduler, scheduler.schedule(w.pods)

    scheduler, placements = benchmark.pedantic(run, setup=setup, rounds=3, warmup_rounds=0)
    assert all(p.node is not None for p in placements)  # every workload fits, as upstream
    if benchmark.stats is None:
        return
    pods_per_s = len(w.pods) / benchmark.stats.stats.median
    figures = {
        "pods_per_s": round(pods_per_s),
        "floor": w.floor,
        "x_floor": round(pods_per_s / w.floor),
        "target_x": 100,
        "ns_per_node_pod": round(benchmark.stats.stats.median / len(w.pods) / len(w.nodes) * 1e9, 2),
        "native_bytes_per_node": round(scheduler.cluster.native_bytes / len(w.nodes)),
        "peak_rss_mib": round(peak_rss_mib()),
    }
    small = workload(name, scale=BASELINE_SCALE)
    baseline = bench_report.medians.get((group, f"numpy baseline ({len(small.nodes)} nodes)"))
    if baseline:  # per node and pod: the baseline checks at a tenth of the scale
        base_ns = baseline / (len(small.init_pods) + len(small.pods)) / len(small.nodes) * 1e9
        figures["speedup_vs_numpy_per_node_pod"] = round(base_ns / figures["ns_per_node_pod"], 1)
    bench_report.add(benchmark, group, f"native ({len(w.nodes)} nodes)", **figures)
