"""vcore-scheduler vs kube-scheduler on one real control plane (bench/kube_bench.py), at a size set by
VCORE_KUBE_BENCH_NODES / _PODS / _RESTART_PODS / _PODGROUPS (CI default: 500 nodes, 1000 pods, 5000 running pods,
1000 single-pod PodGroups; the issues' full sizes are 5000 / 10000 / 50000, and 10000 PodGroups on 1000 nodes).
Each group runs once (rounds=1): an end-to-end run is seconds to minutes.
The baseline of the side-by-side group is the real kube-scheduler in the same run; the physical limits both are
measured against are the API server's own throughput with a minimal client for bindings alone and for each pod
created then bound (what any scheduler's burst costs it at least)."""

from __future__ import annotations

import os

import pytest

from kube_bench import bench_plane, podgroup_burst_beside_limit, restart, side_by_side, side_by_side_constraints

NODES = int(os.environ.get("VCORE_KUBE_BENCH_NODES", 500))
PODS = int(os.environ.get("VCORE_KUBE_BENCH_PODS", 1000))
RESTART_PODS = int(os.environ.get("VCORE_KUBE_BENCH_RESTART_PODS", 5000))
PODGROUPS = int(os.environ.get("VCORE_KUBE_BENCH_PODGROUPS", 1000))


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    with bench_plane(tmp_path_factory.mktemp("kube-bench"), NODES) as p:
        yield p


def test_side_by_side_with_kube_scheduler(benchmark, bench_report, plane, tmp_path):
    results = {}
    benchmark.pedantic(lambda: results.update(side_by_side(plane, PODS, tmp_path)), rounds=1, iterations=1)
    vcore, kube, limit, pipeline = (
        results["vcore"],
        results["kube-scheduler"],
        results["limit"],
        results["create+bind"],
    )
    assert vcore.bound == kube.bound == PODS  # both placed every pod
    group = f"kube side by side {NODES} nodes / {PODS} pods"
    bench_report.add(
        benchmark,
        group,
        "kube-scheduler",
        pods_per_s=kube.pods_per_second,
        p50_ms=kube.p50_ms,
        p99_ms=kube.p99_ms,
        cpu_s=kube.cpu_seconds,
    )
    bench_report.add(
        benchmark,
        group,
        "vcore-scheduler",
        pods_per_s=vcore.pods_per_second,
        p50_ms=vcore.p50_ms,
        p99_ms=vcore.p99_ms,
        cpu_s=vcore.cpu_seconds,
        ratio=vcore.pods_per_second / kube.pods_per_second,
        of_create_bind_limit=vcore.pods_per_second / pipeline.pods_per_second,
    )
    quiet = results["vcore-no-events"]
    bench_report.add(
        benchmark,
        group,
        "vcore-scheduler, no events",
        pods_per_s=quiet.pods_per_second,
        p50_ms=quiet.p50_ms,
        p99_ms=quiet.p99_ms,
        cpu_s=quiet.cpu_seconds,
    )
    bench_report.add(benchmark, group, "API server bind limit", pods_per_s=limit.pods_per_second)
    bench_report.add(benchmark, group, "API server create+bind limit", pods_per_s=pipeline.pods_per_second)


def test_restart_to_first_bind(benchmark, bench_report, plane, tmp_path):
    figures = {}
    benchmark.pedantic(lambda: figures.update(restart(plane, RESTART_PODS, tmp_path)), rounds=1, iterations=1)
    assert figures["start_to_first_bind_s"] == figures["start_to_first_bind_s"]  # not NaN: the pod was bound
    bench_report.add(
        benchmark,
        f"kube restart {NODES} nodes / {RESTART_PODS} running pods",
        "vcore-scheduler",
        start_to_first_bind_s=figures["start_to_first_bind_s"],
        peak_rss_mib=figures["peak_rss_mib"],
    )


CONSTRAINED_PODS = int(os.environ.get("VCORE_KUBE_BENCH_CONSTRAINED_PODS", 3 * NODES // 5 * 2))


def test_side_by_side_with_inter_pod_constraints(benchmark, bench_report, plane, tmp_path):
    """Anti-affinity and topology spread (bench/kube_bench.py constrained_pod_bodies) through both schedulers:
    both place every pod and leave no constraint violated (read back from the API server)."""
    results = {}
    benchmark.pedantic(
        lambda: results.update(side_by_side_constraints(plane, CONSTRAINED_PODS, NODES, tmp_path)),
        rounds=1,
        iterations=1,
    )
    vcore, kube, pipeline = results["vcore"], results["kube-scheduler"], results["create+bind"]
    assert (results["vcore violations"], results["kube-scheduler violations"]) == (0, 0)
    assert vcore.bound == kube.bound == CONSTRAINED_PODS
    group = f"kube anti-affinity + spread {NODES} nodes / {CONSTRAINED_PODS} pods"
    bench_report.add(
        benchmark,
        group,
        "kube-scheduler",
        pods_per_s=kube.pods_per_second,
        p50_ms=kube.p50_ms,
        p99_ms=kube.p99_ms,
        cpu_s=kube.cpu_seconds,
        violations=0,
    )
    bench_report.add(
        benchmark,
        group,
        "vcore-scheduler",
        pods_per_s=vcore.pods_per_second,
        p50_ms=vcore.p50_ms,
        p99_ms=vcore.p99_ms,
        cpu_s=vcore.cpu_seconds,
        violations=0,
        ratio=vcore.pods_per_second / kube.pods_per_second,
        of_create_bind_limit=vcore.pods_per_second / pipeline.pods_per_second,
    )
    bench_report.add(benchmark, group, "API server create+bind limit", pods_per_s=pipeline.pods_per_second)


def test_podgroup_status_burst(benchmark, bench_report, plane, tmp_path):
    out = {}
    benchmark.pedantic(
        lambda: out.update(zip(("burst", "limit"), podgroup_burst_beside_limit(plane, tmp_path, PODGROUPS))),
        rounds=1,
        iterations=1,
    )
    burst, limit = out["burst"], out["limit"]
    assert burst.bound == burst.running == PODGROUPS, burst.row()  # every pod bound, every PodGroup Running
    group = f"kube PodGroup status burst {NODES} nodes / {PODGROUPS} single-pod PodGroups"
    bench_report.add(
        benchmark,
        group,
        "vcore-scheduler",
        pods_per_s=burst.pods_per_second,
        of_create_bind_limit=burst.pods_per_second / limit.pods_per_second,
        running_after_bound_max_s=burst.lag_max_s,
        status_writes=burst.writes,
    )
    bench_report.add(benchmark, group, "API server create+bind limit", pods_per_s=limit.pods_per_second)
