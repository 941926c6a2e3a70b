"""Benchmark group (b): kube-scheduler's SchedulingBasic, in process.

5000 nodes (4 cpu, 32Gi, 110 pods), 1000 initial pods placed first (untimed), then 10,000 pods through one
Scheduler.schedule() call, timed. Two native variants: pod dicts (conversion included, what a caller with API
objects pays) and pre-compiled pods (the engine alone). Target: >= 100,000 pods/s.

Baseline: bench/baselines.numpy_schedule_basic, a numpy loop with the same semantics (fit filter with adaptive
percentageOfNodesToScore from a rotating start, LeastAllocated + BalancedAllocation, random tie-break), at
1000 pods because it is slow; both must place the same number of those pods.
"""

from __future__ import annotations

import numpy as np
import pytest

from baselines import numpy_schedule_basic
from vcore import Cluster, Scheduler
from vcore._native._convert import pod_spec
from vcore.sim.synthetic import scheduling_basic

GROUP = "SchedulingBasic 5000 nodes"
BASELINE_PODS = 1000


@pytest.fixture(scope="module")
def workload():
    return scheduling_basic(n_nodes=5000, n_init=1000, n_pods=10000)


def fresh_scheduler(workload) -> Scheduler:
    """A cluster with all nodes and the initial pods already placed by the scheduler (as upstream does)."""
    cluster = Cluster()
    for node in workload.nodes:
        cluster.add_node(node)
    scheduler = Scheduler(cluster, seed=0)
    placements = scheduler.schedule(workload.init_pods)
    assert all(p.node is not None for p in placements)
    return scheduler


def placed(placements) -> int:
    return sum(p.node is not None for p in placements)


def test_numpy_loop(benchmark, workload, bench_report):
    benchmark.group = GROUP
    base = fresh_scheduler(workload).cluster
    requests = {r: v for r, v in pod_spec(workload.pods[0])["requests"].items()}
    alloc = {r: np.array(base.allocatable(r)) for r in ("cpu", "memory", "pods")}

    def setup():
        # The loop mutates its own copies of the requested rows; each round starts from the same state.
        return (alloc, {r: np.array(base.requested(r)) for r in ("cpu", "memory", "pods")}, requests, BASELINE_PODS), {}

    result = benchmark.pedantic(numpy_schedule_basic, setup=setup, rounds=3, warmup_rounds=0)
    assert result == BASELINE_PODS
    native_count = placed(fresh_scheduler(workload).schedule(workload.pods[:BASELINE_PODS]))
    assert native_count == result, f"native placed {native_count} of the first {BASELINE_PODS}, numpy {result}"
    if benchmark.stats is not None:
        bench_report.add(
            benchmark,
            GROUP,
            f"numpy loop ({BASELINE_PODS} pods)",
            pods_per_s=round(BASELINE_PODS / benchmark.stats.stats.median),
        )


def _native(benchmark, workload, bench_report, impl: str, precompile: bool) -> None:
    benchmark.group = GROUP
    pods = workload.pods

    def setup():
        scheduler = fresh_scheduler(workload)
        batch = [scheduler.compile(p) for p in pods] if precompile else pods
        return (scheduler, batch), {}

    def run(scheduler, batch):
        return scheduler.schedule(batch)

    placements = benchmark.pedantic(run, setup=setup, rounds=5, warmup_rounds=0)
    assert placed(placements) == len(pods)  # capacity is ample: every pod fits, as upstream
    if benchmark.stats is None:
        return
    pods_per_s = len(pods) / benchmark.stats.stats.median
    figures = {"pods_per_s": round(pods_per_s), "target": "100,000"}
    numpy_median = bench_report.medians.get((GROUP, f"numpy loop ({BASELINE_PODS} pods)"))
    if numpy_median:
        figures["speedup_vs_numpy"] = round(pods_per_s / (BASELINE_PODS / numpy_median), 1)
    bench_report.add(benchmark, GROUP, impl, **figures)


def test_native_dicts(benchmark, workload, bench_report):
    _native(benchmark, workload, bench_report, "native, pod dicts", precompile=False)


def test_native_compiled(benchmark, workload, bench_report):
    _native(benchmark, workload, bench_report, "native, pre-compiled pods", precompile=True)
