"""vcore's native DefaultPreemption (``Scheduler.preempt``) against the pure-Python reference
(tests/plugins/preemption_reference.py) on small random clusters: priorities, start times, labels,
PodDisruptionBudgets, resources and pod counts, taints, cordons, node selectors, host ports, required pod
anti-affinity between victims and preemptor (hostname and zone), pods terminating by preemption, pending pods
nominated to nodes, preemptionPolicy, DefaultPreemptionArgs and the walk's offset. The chosen node, its victims in
order, the PDB violations, every candidate and the PostFilter text must agree."""

from __future__ import annotations

from hypothesis import HealthCheck, given, seed, settings, strategies as st

import vcore
from tests.plugins.preemption_builders import Pod, node, pdb
from tests.plugins.preemption_reference import Cluster as RefCluster

FILTERS = ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit", "InterPodAffinity")
TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
PRIORITIES = (-5, 0, 5, 10)
PREEMPTED = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}


def sometimes(one_in: int) -> st.SearchStrategy[bool]:
    """True about once in ``one_in`` draws (hypothesis favours small integers, so not ``integers() == 0``)."""
    return st.sampled_from([False] * (one_in - 1) + [True])


def _profile(percentage: int, absolute: int) -> dict:
    enabled = [{"name": f} for f in FILTERS] + [{"name": "DefaultPreemption"}]
    return {
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": enabled}},
        "pluginConfig": [
            {
                "name": "DefaultPreemption",
                "args": {"minCandidateNodesPercentage": percentage, "minCandidateNodesAbsolute": absolute},
            }
        ],
    }


@st.composite
def pods(draw, name: str, node_names: list[str], *, bound: bool) -> dict:
    p = Pod().name(name).priority(draw(st.sampled_from(PRIORITIES if bound else (0, 5, 10, 20, 20, 20))))
    cpu, mem = draw(st.integers(0, 6)) * 100, draw(st.integers(0, 6)) * 100
    if cpu or mem:
        p.req({"cpu": f"{cpu}m", "memory": str(mem)})
    app = draw(st.sampled_from([None, "x", "y"]))
    if app:
        p.label("app", app)
    if draw(sometimes(5)):
        p.host_port(8080)
    if draw(sometimes(5)):
        p.pod_anti_affinity_in("app", draw(st.sampled_from(["hostname", "zone"])), ["x"], "required")
    if draw(st.booleans()):
        p.start_time(f"2025-01-01T00:00:{draw(st.integers(0, 5)):02d}Z")
    if bound:
        p.node(draw(st.sampled_from(node_names)))
        if draw(sometimes(10)):  # an earlier preemption's victim, terminating
            p._meta["deletionTimestamp"] = "2025-01-01T00:01:00Z"
            p.condition(PREEMPTED["type"], PREEMPTED["status"], PREEMPTED["reason"])
    else:
        if draw(sometimes(4)):
            p.toleration("dedicated")
        if draw(sometimes(4)):
            p.node_selector({"zone": draw(st.sampled_from(["a", "b"]))})
    return p.obj()


@st.composite
def scenarios(draw):
    n_nodes = draw(st.integers(1, 5))
    names = [f"n{i}" for i in range(n_nodes)]
    nodes = [
        node(
            f"{name}/{draw(st.sampled_from(['a', 'b']))}",
            {
                "cpu": f"{draw(st.sampled_from([600, 1000]))}m",
                "memory": str(draw(st.sampled_from([600, 1000]))),
                "pods": str(draw(st.integers(2, 4))),
            },
            taints=[TAINT] if draw(sometimes(6)) else None,
            unschedulable=draw(sometimes(8)),
        )
        for name in names
    ]
    existing = [draw(pods(f"v{i}", names, bound=True)) for i in range(draw(st.integers(0, 10)))]
    budgets = [
        pdb(
            f"b{i}",
            {"app": draw(st.sampled_from(["x", "y"]))},
            draw(st.integers(0, 2)),
            disrupted=tuple(
                draw(st.sets(st.sampled_from([p["metadata"]["name"] for p in existing] or ["none"]), max_size=1))
            ),
        )
        for i in range(draw(st.integers(0, 2)))
    ]
    nominated = []
    for i in range(draw(st.integers(0, 2))):
        pending = draw(pods(f"nom{i}", names, bound=False))
        pending["status"] = {"nominatedNodeName": draw(st.sampled_from(names))}
        nominated.append(pending)
    pod = draw(pods("preemptor", names, bound=False))
    if draw(sometimes(12)):
        pod["spec"]["preemptionPolicy"] = "Never"
    if draw(sometimes(4)):
        pod.setdefault("status", {})["nominatedNodeName"] = draw(st.sampled_from(names))
    percentage, absolute = draw(st.sampled_from([(10, 100), (40, 1), (40, 2), (100, 0), (0, 1)]))
    return nodes, existing, budgets, nominated, pod, percentage, absolute, draw(st.integers(0, 9))


@seed(20250101)
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_native_preemption_matches_reference(scenario):
    nodes, existing, budgets, nominated, pod, percentage, absolute, offset = scenario
    cluster, ref = vcore.Cluster(), RefCluster()
    for n in nodes:
        cluster.add_node(n)
        ref.add_node(n)
    for p in existing:
        cluster.add_pod(p)
        ref.bind(p)
    for p in nominated:
        cluster.add_pod(p)
        ref.add_pending(p)
    for b in budgets:
        cluster.add_pod_disruption_budget(b)
        ref.add_pdb(b)
    got = vcore.Scheduler(cluster, _profile(percentage, absolute)).preempt(pod, offset=offset)
    want = ref.preempt(pod, offset=offset, percentage=percentage, absolute=absolute)
    assert (got.node, got.victims, got.pdb_violations, got.message) == (
        want.node,
        want.victims,
        want.pdb_violations,
        want.message,
    )
    assert tuple(tuple(c) for c in got.candidates) == want.candidates
