"""Gang benchmarks: the native gang placement and one full scheduling cycle.

- gang 1000 pods 10k nodes: one 1000-pod gang of identical pods on 10,000 nodes (feasibility and placement:
  the aggregate check, candidate discovery, placement, in one Engine.place_gang call). Target: < 1 ms.
- gang 3 roles 1000 pods 10k nodes: a chief, 49 parameter servers and 950 workers. Target: < 5 ms.
  Both against gang_baselines.place_runs (numpy, the same rule and tie order); placements asserted equal.
- cycle 2000 jobs 5000 nodes: Scheduler.run_cycle() over vcore.sim.gang's workload (2000 PodGroups of 1..64
  pods, 4 queues, 5000 synthetic nodes; Volcano's default actions and plugins). Target: < 200 ms. Reported with
  the pods placed; its baseline is the same cycle on 500 identical nodes with the numpy placement substituted for
  the native one, bindings asserted equal.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from gang_baselines import place_runs
from vcore import Cluster, Scheduler
from vcore.sim.gang import gang_workload, load

PROFILE = {
    "percentageOfNodesToScore": 100,
    "plugins": {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}},
}
GIB = 2**30


def _nodes(n: int, seed: int = 7) -> list[dict]:
    rng = np.random.default_rng(seed)
    cores = rng.choice([16, 32, 64], size=n)
    return [
        {
            "metadata": {"name": f"n{i:05d}"},
            "status": {"allocatable": {"cpu": str(int(c)), "memory": f"{int(c) * 4}Gi", "pods": "110"}},
        }
        for i, c in enumerate(cores)
    ]


def _pod(name: str, cpu_milli: int, mem_gib: int) -> dict:
    return {
        "metadata": {"name": name, "namespace": "bench"},
        "spec": {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": f"{cpu_milli}m", "memory": f"{mem_gib}Gi"}}}]
        },
    }


ROLES = {
    "one role": [("worker", 1000, 2000, 4)],
    "3 roles": [("chief", 1, 8000, 32), ("ps", 49, 4000, 16), ("worker", 950, 2000, 4)],
}


@pytest.fixture(scope="module")
def cluster_10k():
    cluster = Cluster()
    for node in _nodes(10_000):
        cluster.add_node(node)
    return cluster


def _gang_bench(benchmark, bench_report, cluster, roles_id: str, target: str) -> None:
    group = f"gang {roles_id} 1000 pods 10k nodes"
    scheduler = Scheduler(cluster, profile=PROFILE, seed=3)
    tasks, role, runs = [], [], []
    for r, (name, count, cpu, mem) in enumerate(ROLES[roles_id]):
        tasks += [scheduler.compile(_pod(f"{name}-{i}", cpu, mem)) for i in range(count)]
        role += [r] * count
        runs.append((count, cpu, mem * GIB))
    role_need = [count for _, count, _, _ in ROLES[roles_id]]
    keys = [t.key for t in tasks]

    def setup():
        for key in keys:  # each round starts from the empty cluster
            if cluster.node_of(key) is not None:
                cluster.unbind(key)
        return (), {}

    def run():
        return scheduler._engine.place_gang(tasks, role, role_need, len(tasks))

    setup()
    alloc = {r: np.array(cluster.allocatable(r)) for r in ("cpu", "memory", "pods")}
    used = {r: np.array(cluster.requested(r)) for r in ("cpu", "memory", "pods")}
    t0 = time.perf_counter()
    want = place_runs(alloc, used, runs, seed=3, sequence=scheduler._engine.pods_seen)
    numpy_s = time.perf_counter() - t0
    got = run()
    np.testing.assert_array_equal(got[0], want)  # the same node for every task
    assert got[3], "the gang must fit"
    benchmark.group = group
    result = benchmark.pedantic(run, setup=setup, rounds=20, warmup_rounds=1)
    assert result[3]
    if benchmark.stats is None:
        return
    median = benchmark.stats.stats.median
    bench_report.add(
        benchmark,
        group,
        "native place_gang",
        target=target,
        ns_per_node=round(median / 10_000 * 1e9, 1),
        ns_per_pod=round(median / len(tasks) * 1e9),
        numpy_ms=round(numpy_s * 1e3, 1),
        speedup_vs_numpy=round(numpy_s / median),
        evaluations=int(result[6]),
    )


def test_gang_one_role(benchmark, bench_report, cluster_10k):
    _gang_bench(benchmark, bench_report, cluster_10k, "one role", "< 1 ms")


def test_gang_three_roles(benchmark, bench_report, cluster_10k):
    _gang_bench(benchmark, bench_report, cluster_10k, "3 roles", "< 5 ms")


CYCLE_GROUP = "cycle 2000 jobs 5000 nodes"


@pytest.fixture(scope="module")
def workload():
    return gang_workload(n_nodes=5000, n_jobs=2000, n_queues=4, seed=0)


def test_cycle(benchmark, bench_report, workload):
    benchmark.group = CYCLE_GROUP

    def setup():
        cluster = Cluster()
        load(cluster, workload)
        return (Scheduler(cluster, seed=0),), {}

    result = benchmark.pedantic(lambda s: s.run_cycle(), setup=setup, rounds=3, warmup_rounds=0)
    placed = len(result.bindings)
    running = sum(s.phase == "Running" for s in result.podgroups.values())
    assert placed > 0 and running > 0
    if benchmark.stats is None:
        return
    median = benchmark.stats.stats.median
    bench_report.add(
        benchmark,
        CYCLE_GROUP,
        "native run_cycle",
        target="< 200 ms",
        jobs=len(workload.podgroups),
        pods=len(workload.pods),
        pods_placed=placed,
        jobs_running=running,
        pods_per_s=round(placed / median),
    )


class _NumpyEngine:
    """The engine with place_gang done by the numpy baseline (LeastAllocated, pct 100): the same runs, the same
    early stop when a gang can no longer reach its minimums, the same queue headroom, binds and undo."""

    def __init__(self, engine, cluster: Cluster) -> None:
        self._engine, self._cluster, self._sequence = engine, cluster, engine.pods_seen

    def __getattr__(self, name):
        return getattr(self._engine, name)

    def place_gang(
        self, tasks, role, role_need, need, headroom=None, allowed=None, all_or_nothing=True, cap=None, score_bonus=None
    ):
        assert cap is None and score_bonus is None, "the baseline places gangs without a topology"
        state = self._cluster._state
        alloc = {r: np.array(self._cluster.allocatable(r)) for r in ("cpu", "memory", "pods")}
        used = {r: np.array(self._cluster.requested(r)) for r in ("cpu", "memory", "pods")}
        room = None if headroom is None else [int(headroom[0]), int(headroom[1])]
        shapes = [(dict(t.requests).get(0, 0), dict(t.requests).get(1, 0)) for t in tasks]
        n, nodes = len(tasks), np.full(len(tasks), -1, np.int32)
        role = [0] * n if role is None else role  # None: every task of the one role
        role_left = [role.count(r) for r in range(len(role_need))]
        role_need, left, i = list(role_need), n, 0
        while i < n:
            if all_or_nothing and (left < need or any(have < want for have, want in zip(role_left, role_need))):
                break
            j = i
            while j < n and shapes[j] == shapes[i]:
                j += 1
            run = place_runs(alloc, used, [(j - i, *shapes[i])], 0, self._sequence, room)
            self._sequence += j - i
            for k, slot in zip(range(i, j), run.tolist()):
                left -= 1
                role_left[role[k]] -= 1
                if slot >= 0:
                    state.bind(tasks[k], slot)
                    nodes[k] = slot
                    need -= 1
                    role_need[role[k]] -= 1
            i = j
        ready = need <= 0 and all(w <= 0 for w in role_need)
        outcome = np.where(nodes >= 0, 1, 0).astype(np.uint8)
        if not ready and all_or_nothing:
            for k in np.flatnonzero(nodes >= 0):
                state.unbind(tasks[k].key)
            nodes[:] = -1
        return nodes, outcome, [()] * n, ready, -1, np.zeros(self._engine.n_reasons, np.int64), 0


def test_cycle_numpy_baseline(benchmark, bench_report, workload):
    """The cycle on 500 identical nodes (CPU jobs only), native against the numpy placement."""
    benchmark.group = CYCLE_GROUP
    nodes = [
        {"metadata": {"name": f"n{i:04d}"}, "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}
        for i in range(500)
    ]
    jobs = gang_workload(n_nodes=1, n_jobs=300, n_queues=4, seed=1)
    cpu_only = [pg for pg in jobs.podgroups if "nvidia.com/gpu" not in pg["spec"]["minResources"]]
    names = {pg["metadata"]["name"] for pg in cpu_only}
    pods = [p for p in jobs.pods if p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] in names]

    def build():
        cluster = Cluster()
        for n in nodes:
            cluster.add_node(n)
        for q in jobs.queues:
            cluster.add_queue(q)
        for pc in jobs.priority_classes:
            cluster.add_priority_class(pc)
        for pg in cpu_only:
            cluster.add_podgroup(pg)
        for p in pods:
            cluster.add_pod(p)
        return cluster

    native_cluster = build()
    native = Scheduler(native_cluster, profile=PROFILE, seed=0).run_cycle()
    numpy_cluster = build()
    scheduler = Scheduler(numpy_cluster, profile=PROFILE, seed=0)
    scheduler._engine = _NumpyEngine(scheduler._engine, numpy_cluster)
    t0 = time.perf_counter()
    baseline = scheduler.run_cycle()
    numpy_s = time.perf_counter() - t0
    assert [(b.pod, b.node) for b in baseline.bindings] == [(b.pod, b.node) for b in native.bindings]

    def setup():
        return (Scheduler(build(), profile=PROFILE, seed=0),), {}

    benchmark.pedantic(lambda s: s.run_cycle(), setup=setup, rounds=3, warmup_rounds=0)
    if benchmark.stats is None:
        return
    median = benchmark.stats.stats.median
    bench_report.add(
        benchmark,
        CYCLE_GROUP,
        "native, 500 identical nodes",
        jobs=len(cpu_only),
        pods=len(pods),
        pods_placed=len(native.bindings),
        numpy_ms=round(numpy_s * 1e3),
        speedup_vs_numpy=round(numpy_s / median, 1),
    )
