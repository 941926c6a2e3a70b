"""Topology benchmarks: the native gang search at scale, and a stream of mixed gangs per policy.

Groups:
  topology 4096 nodes (8 spines x 16 leaves x 32 nodes, 3 tiers)
      a 512-pod gang with a hard tier-2 limit on a partly used tree: the native kernel (_core.topology.place_gang),
      the Python seam (vcore.topology.place_gang, view + resolution + kernel) and the numpy baseline
      (bench/topology_baselines.py); placements asserted equal. Target: native < 2 ms.
  topology 10k nodes, 2000 HyperNodes (1 core, 40 spines, 1959 leaves)
      a 256-pod gang with a hard tier-2 limit, the same three; also the time to install the 2000 HyperNodes.
      Target: native < 10 ms. (Volcano: ~5.5 min per PodGroup at 6000 nodes / 9600 HyperNodes before its
      bounded scan, volcano-sh/volcano PR 5811.)
  topology cycle 4096 nodes 512-pod gang tier 2
      one Scheduler.run_cycle placing a PodGroup of 512 pods with a hard tier-2 networkTopology on the partly used
      4096-node tree (fit counts, domain search, confined native gang placement, binding, PodGroup status); the
      baseline is what an integrator writes without the cycle: vcore.topology.fit_counts + place_gang, then
      Cluster.bind per pod. Per-node counts asserted equal.
  topology stream
      100 mixed gangs (8..1024 pods of 1/2/4/8 GPUs, soft constraint) arriving at and leaving the 4096-node tree,
      one run_cycle per arrival: per policy (native, cpsat-0.1, cpsat-1, unaware) the gangs placed, leaves and
      spines spanned per gang, GPUs stranded on partly used nodes (mean, max), and seconds per cycle. Asserted: the
      topology-aware policies place at least as many gangs as the unaware baseline and span fewer leaves; CP-SAT
      strands no more GPUs than native.
"""

from __future__ import annotations

import timeit

import numpy as np
import pytest

import vcore
from topology_baselines import NumpyTree, numpy_place_gang
from vcore._native import _core
from vcore.sim.topology_stream import build_tree_cluster, gang_stream, run_stream
from vcore.topology import TierRef, TopologyConstraint, TopologyPlacementArgs, fit_counts, place_gang

NATIVE = TopologyPlacementArgs(solver="native")


class Scenario:
    def __init__(self, group: str, cluster: vcore.Cluster, fit: np.ndarray, pods: int, tier: int, build_s: float = 0.0):
        self.group, self.cluster, self.fit, self.pods = group, cluster, fit, pods
        self.n_nodes = cluster.n_nodes
        self.n_domains = sum(1 for n in cluster.topology.domain_names if n)
        self.constraint = TopologyConstraint("hard", TierRef(tier=tier), owner="bench")
        self.rc = self.constraint.resolve(cluster.topology, pods)
        self.tree = NumpyTree(cluster.topology, cluster._state.node_names())
        self.build_s = build_s

    def native(self):
        rc = self.rc
        return _core.topology.place_gang(
            self.cluster._state, self.fit, rc.n_pods, rc.start_row, rc.limit_row, rc.hard, [], None, 0.0, 0.0, 0
        )

    def seam(self):
        return place_gang(self.cluster, self.fit, self.pods, self.constraint, args=NATIVE)

    def numpy(self):
        rc = self.rc
        return numpy_place_gang(self.tree, self.fit, rc.n_pods, rc.start_row, rc.limit_row, rc.hard)


def tree_4096() -> Scenario:
    c = build_tree_cluster(spines=8, leaves=16, nodes=32)
    rng = np.random.default_rng(7)
    fit = rng.integers(0, 3, size=c._state.n_slots).astype(np.int32)  # a partly used tree: 0..2 pods fit per node
    return Scenario("topology 4096 nodes 512-pod gang tier 2", c, fit, 512, 2)


def tree_10k() -> Scenario:
    c = vcore.Cluster()
    names = [f"node-{i:05d}" for i in range(10_000)]
    for name in names:
        c.add_node(
            {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}
        )
    leaves = np.array_split(np.arange(10_000), 1959)
    hns = [
        {
            "metadata": {"name": f"leaf-{j:04d}"},
            "spec": {
                "tier": 1,
                "members": [{"type": "Node", "selector": {"exactMatch": {"name": names[i]}}} for i in part],
            },
        }
        for j, part in enumerate(leaves)
    ]
    spines = np.array_split(np.arange(1959), 40)
    hns += [
        {
            "metadata": {"name": f"spine-{k:02d}"},
            "spec": {
                "tier": 2,
                "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": f"leaf-{j:04d}"}}} for j in part],
            },
        }
        for k, part in enumerate(spines)
    ]
    hns.append(
        {
            "metadata": {"name": "core"},
            "spec": {
                "tier": 3,
                "members": [
                    {"type": "HyperNode", "selector": {"exactMatch": {"name": f"spine-{k:02d}"}}} for k in range(40)
                ],
            },
        }
    )
    build_s = min(timeit.repeat(lambda: c.set_hypernodes(hns), number=1, repeat=3))
    rng = np.random.default_rng(11)
    fit = rng.integers(0, 4, size=c._state.n_slots).astype(np.int32)  # 0..3 pods fit per node
    return Scenario("topology 10k nodes 2000 HyperNodes 256-pod gang tier 2", c, fit, 256, 2, build_s)


@pytest.fixture(scope="module", params=["4096", "10k"])
def scenario(request) -> Scenario:
    return tree_4096() if request.param == "4096" else tree_10k()


def _same(scenario: Scenario) -> None:
    native = scenario.native()
    placed, domain, row, counts = scenario.numpy()
    assert native["placed"] and placed, "the bench gang must be placeable"
    assert (native["domain"], native["row"]) == (domain, row)
    assert np.array_equal(native["counts"], counts)
    seam = scenario.seam()
    assert np.array_equal(seam.counts, counts) and seam.counts.sum() == scenario.pods


def test_topology_numpy(benchmark, scenario, bench_report):
    benchmark.group = scenario.group
    _same(scenario)
    benchmark(scenario.numpy)
    row = bench_report.add(benchmark, scenario.group, "numpy", n_nodes=scenario.n_nodes)
    if row:
        row.figures["ns/node"] = f"{row.median_s / scenario.n_nodes * 1e9:.0f}"


def test_topology_seam(benchmark, scenario, bench_report):
    benchmark.group = scenario.group
    benchmark(scenario.seam)
    row = bench_report.add(benchmark, scenario.group, "vcore.topology.place_gang", n_nodes=scenario.n_nodes)
    _ratio(row, bench_report, scenario)


def test_topology_native(benchmark, scenario, bench_report):
    benchmark.group = scenario.group
    _same(scenario)
    benchmark(scenario.native)
    row = bench_report.add(
        benchmark, scenario.group, "native kernel", n_nodes=scenario.n_nodes, domains=scenario.n_domains
    )
    _ratio(row, bench_report, scenario)
    if row and scenario.build_s:
        row.figures["set_hypernodes_ms"] = f"{scenario.build_s * 1e3:.1f}"


def _ratio(row, bench_report, scenario: Scenario) -> None:
    if not row:
        return
    numpy_median = bench_report.medians.get((scenario.group, "numpy"))
    if numpy_median is None:
        numpy_median = float(np.median(timeit.repeat(scenario.numpy, number=1, repeat=5)))
    row.figures["ns/node"] = f"{row.median_s / scenario.n_nodes * 1e9:.0f}"
    row.figures["x_numpy"] = f"{numpy_median / row.median_s:.1f}"


# -- one constrained gang through the cycle ---------------------------------------------------------------------
CYCLE_GROUP = "topology cycle 4096 nodes 512-pod gang tier 2"
GANG_PODS = 512


@pytest.fixture(scope="module")
def cycle_tree():
    """The 4096-node tree of 4-cpu nodes, each with 0..3 cpus used by pods outside the batch layer, and a PodGroup
    of 512 one-cpu pods with a hard tier-2 constraint."""
    c = build_tree_cluster(spines=8, leaves=16, nodes=32, gpus=0, cpu=4)
    rng = np.random.default_rng(3)
    for slot, used in enumerate(rng.integers(0, 4, size=c.n_nodes).tolist()):
        name = c.node_names[slot]
        for i in range(used):
            c.bind(_cpu_pod(f"{name}-fill-{i}"), name)
    pods = [_cpu_pod(f"gang-{i}", group="gang") for i in range(GANG_PODS)]
    c.add_podgroup(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "gang", "namespace": "bench"},
            "spec": {"minMember": GANG_PODS, "networkTopology": {"mode": "hard", "highestTierAllowed": 2}},
        }
    )
    for p in pods:
        c.add_pod(p)
    return c, pods


def _cpu_pod(name: str, group: str | None = None) -> dict:
    meta = {"name": name, "namespace": "bench"}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}


def _unbind(c: vcore.Cluster, pods: list[dict]) -> None:
    for i in range(len(pods)):
        if c.node_of(f"bench/gang-{i}") is not None:
            c.unbind(f"bench/gang-{i}")


def _per_node(c: vcore.Cluster) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in range(GANG_PODS):
        node = c.node_of(f"bench/gang-{i}")
        out[node] = out.get(node, 0) + 1
    return out


def test_topology_cycle_seam_and_bind(benchmark, bench_report, cycle_tree):
    c, pods = cycle_tree
    constraint = TopologyConstraint("hard", TierRef(tier=2), owner="bench")
    names = c.node_names

    def seam_and_bind():
        p = place_gang(c, fit_counts(c, pods[0]), GANG_PODS, constraint, args=NATIVE)
        i = 0
        for slot in np.flatnonzero(p.counts):
            for _ in range(int(p.counts[slot])):
                c.bind(pods[i], names[slot])
                i += 1
        return p

    benchmark.group = CYCLE_GROUP
    _unbind(c, pods)
    benchmark.pedantic(seam_and_bind, setup=lambda: _unbind(c, pods), rounds=10, iterations=1)
    bench_report.add(benchmark, CYCLE_GROUP, "seam + Cluster.bind", n_nodes=c.n_nodes)
    _unbind(c, pods)


def test_topology_cycle(benchmark, bench_report, cycle_tree):
    c, pods = cycle_tree
    scheduler = vcore.Scheduler(
        c,
        cycle={
            "actions": "allocate",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}]},
                {
                    "plugins": [
                        {"name": "predicates"},
                        {"name": "nodeorder"},
                        {"name": "network-topology-aware", "arguments": {"solver": "native"}},
                    ]
                },
            ],
        },
    )
    # The same placement as the seam's, node for node.
    _unbind(c, pods)
    p = place_gang(
        c, fit_counts(c, pods[0]), GANG_PODS, TopologyConstraint("hard", TierRef(tier=2), owner="bench"), args=NATIVE
    )
    want = p.nodes(c)
    result = scheduler.run_cycle()
    assert result.podgroups["bench/gang"].phase == "Running" and _per_node(c) == want
    benchmark.group = CYCLE_GROUP
    benchmark.pedantic(scheduler.run_cycle, setup=lambda: _unbind(c, pods), rounds=10, iterations=1)
    row = bench_report.add(
        benchmark,
        CYCLE_GROUP,
        "Scheduler.run_cycle",
        n_nodes=c.n_nodes,
        domain=result.podgroups["bench/gang"].hypernode,
    )
    baseline = bench_report.medians.get((CYCLE_GROUP, "seam + Cluster.bind"))
    if row and baseline:
        row.figures["x_seam_bind"] = f"{baseline / row.median_s:.1f}"
        row.figures["us/pod"] = f"{row.median_s / GANG_PODS * 1e6:.1f}"
    _unbind(c, pods)


# -- the gang stream --------------------------------------------------------------------------------------------
STREAM = gang_stream(100, seed=1)
RESULTS: dict[str, dict] = {}


@pytest.mark.parametrize("policy", ["unaware", "native", "cpsat-0.1", "cpsat-1"])
def test_topology_stream(benchmark, bench_report, policy):
    group = "topology stream 100 gangs 4096 nodes"
    benchmark.group = group
    result = benchmark.pedantic(lambda: run_stream(build_tree_cluster(), STREAM, policy), rounds=1, iterations=1)
    s = result.summary()
    RESULTS[policy] = s
    bench_report.add(
        benchmark,
        group,
        policy,
        placed=s["placed"],
        leaves_per_gang=s["leaves_per_gang"],
        spines_per_gang=s["spines_per_gang"],
        multi_spine=s["multi_spine_gangs"],
        stranded_mean=s["stranded_gpus_mean"],
        stranded_max=s["stranded_gpus_max"],
        s_per_cycle=s["seconds_per_gang"],
    )
    if policy != "unaware" and "unaware" in RESULTS:
        assert s["placed"] >= RESULTS["unaware"]["placed"]
        assert s["leaves_per_gang"] < RESULTS["unaware"]["leaves_per_gang"]
    if policy.startswith("cpsat") and "native" in RESULTS:
        assert s["stranded_gpus_mean"] <= RESULTS["native"]["stranded_gpus_mean"]
