"""Benchmark: kube-scheduler's SchedulingCSIPVs in process, and NodeVolumeLimits' filter over 5000 nodes.

SchedulingCSIPVs 5000 nodes   scheduler_perf's 5000Nodes workload: 5000 nodes whose CSINode allows 39 ebs.csi.aws.com
                              volumes, 5000 initial pods placed first (untimed), then 1000 pods through one
                              Scheduler.schedule() (pod dicts, and pre-compiled pods), each pod with its own claim
                              bound to its own CSI PV, so the four volume plugins run for every pod; beside it the
                              same pods without their volume (what the volume plugins cost).
SchedulingCSIPVs 500 nodes    the 500Nodes shape (500 initial, 1000 measured) with a limit of 2 volumes per node, so
  limit 2                     NodeVolumeLimits decides: 500 of the 1000 fit, every node ends with 2 volumes.
NodeVolumeLimits evaluate     Scheduler.evaluate(compiled pod) of a pod with a new CSI volume over 5000 nodes with
  5000 nodes                  a limit of 2, half of them full: ns/node.

Baselines (volume_baselines.py): the numpy scheduling loop of SchedulingBasic with NodeVolumeLimits' filter added,
placed counts (and per-node volume counts where the limit binds) asserted equal; for evaluate, baselines.numpy_evaluate
of the default profile and the volume limit mask in numpy (and in pure Python), masks and scores asserted equal.
"""

from __future__ import annotations

import numpy as np
import pytest

from baselines import NodeTable, numpy_evaluate
from vcore import Cluster, Scheduler
from vcore._native._convert import node_spec, pod_spec
from volume_baselines import numpy_schedule_csi_pvs, python_volume_limit_mask, scheduling_csi_pvs, volume_limit_mask

POD_REQUESTS = {"cpu": 100, "memory": 500 * 1024 * 1024}
NO_PREEMPTION = {"plugins": {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}}}


def load(workload, *, volumes: bool = True, preemption: bool = True) -> tuple[Scheduler, list]:
    """A cluster with the workload's nodes, CSINodes, PVs and claims, and its initial pods placed by the scheduler
    (as upstream does); returns the scheduler and the initial placements. ``preemption=False``: the default profile
    without DefaultPreemption (the numpy loop does not preempt either)."""
    cluster = Cluster()
    for node in workload.nodes:
        cluster.add_node(node)
    if volumes:
        for obj in workload.csi_nodes:
            cluster.add_csi_node(obj)
        for obj in workload.pvcs:
            cluster.add_persistent_volume_claim(obj)
        for obj in workload.pvs:
            cluster.add_persistent_volume(obj)
    scheduler = Scheduler(cluster, seed=0, profile=None if preemption else NO_PREEMPTION)
    init = workload.init_pods if volumes else [without_volumes(p) for p in workload.init_pods]
    placements = scheduler.schedule(init)
    return scheduler, placements


def without_volumes(pod: dict) -> dict:
    return {**pod, "spec": {k: v for k, v in pod["spec"].items() if k != "volumes"}}


def placed(placements) -> int:
    return sum(p.node is not None for p in placements)


def volumes_per_node(scheduler: Scheduler, *placement_lists) -> np.ndarray:
    """Per node slot, the pods placed on it (one CSI volume each), from the placements."""
    cluster = scheduler.cluster
    out = np.zeros(int(cluster.allocatable_matrix.shape[1]), dtype=np.int64)
    for placements in placement_lists:
        for p in placements:
            if p.node is not None:
                out[cluster.node_index(p.node)] += 1
    return out


def baseline_state(scheduler: Scheduler, init_placements, limit: int):
    cluster = scheduler.cluster
    alloc = {r: np.array(cluster.allocatable(r)) for r in ("cpu", "memory", "pods")}
    req = {r: np.array(cluster.requested(r)) for r in ("cpu", "memory", "pods")}
    volumes = volumes_per_node(scheduler, init_placements)
    limits = np.full(len(volumes), limit, dtype=np.int64)
    return alloc, req, volumes, limits


# ---------------------------------------------------------------------------------------------------------------
# SchedulingCSIPVs 5000Nodes

GROUP = "SchedulingCSIPVs 5000 nodes"


@pytest.fixture(scope="module")
def workload():
    return scheduling_csi_pvs(n_nodes=5000, n_init=5000, n_pods=1000, limit=39)


@pytest.fixture(scope="module")
def loaded(workload):
    return load(workload)


def test_numpy_loop(benchmark, workload, loaded, bench_report):
    benchmark.group = GROUP
    scheduler, init = loaded
    assert placed(init) == len(workload.init_pods)
    alloc, req0, volumes0, limits = baseline_state(scheduler, init, workload.limit)
    n = len(workload.pods)

    def setup():
        return (alloc, {r: a.copy() for r, a in req0.items()}, volumes0.copy(), limits, POD_REQUESTS, n), {}

    result = benchmark.pedantic(numpy_schedule_csi_pvs, setup=setup, rounds=3, warmup_rounds=0)
    assert result == n
    native = load(workload)[0].schedule(workload.pods)
    assert placed(native) == result, f"native placed {placed(native)}, numpy {result}"
    if benchmark.stats is not None:
        bench_report.add(benchmark, GROUP, f"numpy loop ({n} pods)", pods_per_s=round(n / benchmark.stats.stats.median))


def _native(benchmark, workload, bench_report, impl: str, *, precompile: bool, volumes: bool = True) -> None:
    benchmark.group = GROUP
    pods = workload.pods if volumes else [without_volumes(p) for p in workload.pods]

    def setup():
        scheduler, _ = load(workload, volumes=volumes)
        batch = [scheduler.compile(p) for p in pods] if precompile else pods
        return (scheduler, batch), {}

    def run(scheduler, batch):
        return scheduler.schedule(batch)

    placements = benchmark.pedantic(run, setup=setup, rounds=5, warmup_rounds=0)
    assert placed(placements) == len(pods)  # 39 volumes a node: every pod fits, as upstream
    if volumes:  # each placed pod's claim stays bound to its own PV: nothing for PreBind to write
        assert all(p.volumes is None or not (p.volumes.bindings or p.volumes.provisions) for p in placements)
    if benchmark.stats is None:
        return
    pods_per_s = len(pods) / benchmark.stats.stats.median
    figures = {"pods_per_s": round(pods_per_s)}
    numpy_median = bench_report.medians.get((GROUP, f"numpy loop ({len(pods)} pods)"))
    if numpy_median and volumes:
        figures["speedup_vs_numpy"] = round(pods_per_s / (len(pods) / numpy_median), 1)
    plain = bench_report.medians.get((GROUP, "native, pod dicts, no volumes"))
    if plain and volumes and not precompile:
        figures["vs_no_volumes"] = round(benchmark.stats.stats.median / plain, 2)
    bench_report.add(benchmark, GROUP, impl, **figures)


def test_native_dicts_without_volumes(benchmark, workload, bench_report):
    _native(benchmark, workload, bench_report, "native, pod dicts, no volumes", precompile=False, volumes=False)


def test_native_dicts(benchmark, workload, bench_report):
    _native(benchmark, workload, bench_report, "native, pod dicts", precompile=False)


def test_native_compiled(benchmark, workload, bench_report):
    _native(benchmark, workload, bench_report, "native, pre-compiled pods", precompile=True)


# ---------------------------------------------------------------------------------------------------------------
# The limit binds: 500 nodes of 2 volumes

TIGHT = "SchedulingCSIPVs 500 nodes limit 2"


@pytest.fixture(scope="module")
def tight():
    return scheduling_csi_pvs(n_nodes=500, n_init=500, n_pods=1000, limit=2)


def test_tight_numpy_loop(benchmark, tight, bench_report):
    benchmark.group = TIGHT
    scheduler, init = load(tight)
    assert placed(init) == 500
    alloc, req0, volumes0, limits = baseline_state(scheduler, init, tight.limit)
    state = {}

    def setup():
        state["volumes"] = volumes0.copy()
        return (
            alloc,
            {r: a.copy() for r, a in req0.items()},
            state["volumes"],
            limits,
            POD_REQUESTS,
            len(tight.pods),
        ), {}

    result = benchmark.pedantic(numpy_schedule_csi_pvs, setup=setup, rounds=3, warmup_rounds=0)
    assert result == 500
    native = scheduler.schedule(tight.pods)
    assert placed(native) == result
    native_volumes = volumes_per_node(scheduler, init, native)
    assert (native_volumes == state["volumes"]).all() and (native_volumes == 2).all()
    unplaced = next(p for p in native if p.node is None)
    assert dict(unplaced.reasons) == {"node(s) exceed max volume count": 500}
    if benchmark.stats is not None:
        bench_report.add(
            benchmark, TIGHT, "numpy loop", pods_per_s=round(len(tight.pods) / benchmark.stats.stats.median)
        )


@pytest.mark.parametrize("preemption", [True, False], ids=["default profile", "without DefaultPreemption"])
def test_tight_native(benchmark, tight, bench_report, preemption):
    """Every pod that fits nowhere gets DefaultPreemption's dry run over the 500 nodes in the default profile (as in
    kube-scheduler; all pods have one priority, so it finds no victims); without it, the same work as the numpy
    loop."""
    benchmark.group = TIGHT

    def setup():
        return (load(tight, preemption=preemption)[0], tight.pods), {}

    def run(scheduler, pods):
        return scheduler, scheduler.schedule(pods)

    scheduler, placements = benchmark.pedantic(run, setup=setup, rounds=5, warmup_rounds=0)
    assert placed(placements) == 500
    if benchmark.stats is None:
        return
    pods_per_s = len(tight.pods) / benchmark.stats.stats.median
    figures = {"pods_per_s": round(pods_per_s)}
    numpy_median = bench_report.medians.get((TIGHT, "numpy loop"))
    if numpy_median:
        figures["speedup_vs_numpy"] = round(numpy_median / benchmark.stats.stats.median, 1)
    name = "native, pod dicts" + ("" if preemption else ", without DefaultPreemption")
    bench_report.add(benchmark, TIGHT, name, **figures)


# ---------------------------------------------------------------------------------------------------------------
# NodeVolumeLimits in one evaluate over 5000 nodes

EVALUATE = "NodeVolumeLimits evaluate 5000 nodes"
N_EVAL = 5000


class EvalScenario:
    def __init__(self):
        # 7500 initial pods of one volume each on 5000 nodes allowing 2: LeastAllocated fills every node once, then
        # half of them twice.
        self.workload = scheduling_csi_pvs(n_nodes=N_EVAL, n_init=7500, n_pods=1, limit=2)
        self.scheduler, init = load(self.workload)
        assert placed(init) == 7500
        cluster = self.scheduler.cluster
        self.table = NodeTable.build(cluster, [node_spec(n) for n in self.workload.nodes])
        self.volumes = volumes_per_node(self.scheduler, init)
        self.limits = np.where(self.table.live, self.workload.limit, 0).astype(np.int64)
        self.pod = self.workload.pods[0]
        self.features = pod_spec(without_volumes(self.pod))
        self.compiled = self.scheduler.compile(self.pod)

    def numpy(self):
        mask, scores = numpy_evaluate(self.table, self.features)
        mask &= volume_limit_mask(self.volumes, self.limits)
        return mask, np.where(mask, scores, 0)


@pytest.fixture(scope="module")
def evaluation():
    return EvalScenario()


def test_evaluate_numpy(benchmark, evaluation, bench_report):
    benchmark.group = EVALUATE
    ev = evaluation.scheduler.evaluate(evaluation.compiled)
    mask, scores = evaluation.numpy()
    assert 0 < mask.sum() < N_EVAL, "half the nodes should be full"
    assert (np.asarray(ev.feasible_mask, dtype=bool) == mask).all()
    feasible = np.flatnonzero(mask)
    assert (np.asarray(ev.scores)[feasible] == scores[feasible]).all()
    assert ev.reasons == {"node(s) exceed max volume count": int(N_EVAL - mask.sum())}
    python_mask = python_volume_limit_mask(evaluation.volumes.tolist(), evaluation.limits.tolist())
    assert python_mask == volume_limit_mask(evaluation.volumes, evaluation.limits).tolist()
    benchmark.pedantic(evaluation.numpy, rounds=20, warmup_rounds=1)
    if benchmark.stats is not None:
        bench_report.add(benchmark, EVALUATE, "numpy", ns_per_node=benchmark.stats.stats.median * 1e9 / N_EVAL)


def test_evaluate_python_mask(benchmark, evaluation, bench_report):
    benchmark.group = EVALUATE
    volumes, limits = evaluation.volumes.tolist(), evaluation.limits.tolist()
    benchmark.pedantic(python_volume_limit_mask, args=(volumes, limits), rounds=20, warmup_rounds=1)
    if benchmark.stats is not None:
        bench_report.add(
            benchmark,
            EVALUATE,
            "pure Python, volume limit mask alone",
            ns_per_node=benchmark.stats.stats.median * 1e9 / N_EVAL,
        )


def test_evaluate_native(benchmark, evaluation, bench_report):
    benchmark.group = EVALUATE
    scheduler, compiled = evaluation.scheduler, evaluation.compiled
    # Many calls per round: one call is tens of microseconds.
    number = 50
    benchmark.pedantic(lambda: [scheduler.evaluate(compiled) for _ in range(number)], rounds=10, warmup_rounds=1)
    if benchmark.stats is None:
        return
    per_call = benchmark.stats.stats.median / number
    figures = {"ns_per_node": per_call * 1e9 / N_EVAL}
    numpy_median = bench_report.medians.get((EVALUATE, "numpy"))
    if numpy_median:
        figures["speedup_vs_numpy"] = round(numpy_median / per_call, 1)
    bench_report.add(benchmark, EVALUATE, "native evaluate (compiled pod), 50 calls a round", **figures)
