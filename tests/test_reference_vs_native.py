"""Property tests: vcore.Scheduler.filter/score/schedule equal the pure-Python reference on random clusters.

Random clusters (1..40 nodes; labels from a small vocabulary; NoSchedule/PreferNoSchedule/NoExecute taints;
extended resources, hugepages, ephemeral-storage; zero capacities; unschedulable nodes; small pod limits;
pods already bound), random pods (missing / explicit-zero / positive requests, init containers and sidecars,
overhead, nodeSelector, required and preferred node affinity with every operator, tolerations) and random
profiles (strategy, resource weights, RTCR shapes, ignored resources, balanced resources, binpack arguments,
score plugin weights). Hypothesis runs derandomized (profile "ci" in conftest.py), so failures reproduce.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

import reference as ref
import vcore
from conftest import node_dicts, pod_dicts, profiles


@st.composite
def clusters(draw, max_nodes: int = 40):
    n = draw(st.integers(1, max_nodes))
    nodes = [draw(node_dicts(f"n{i}")) for i in range(n)]
    existing = []
    for j in range(draw(st.integers(0, n + 5))):
        existing.append(
            (f"n{draw(st.integers(0, n - 1))}", draw(pod_dicts(f"bound{j}", constraints=False, preemption=True)))
        )
    return nodes, existing


def build_both(nodes, existing):
    native, reference = vcore.Cluster(), ref.ReferenceCluster()
    for node in nodes:
        native.add_node(node)
        reference.add_node(node)
    for node_name, pod in existing:
        native.bind(pod, node_name)
        reference.bind(pod, node_name)
    return native, reference


def _explain(reference, pod, prof, names):
    per_plugin = ref.plugin_scores(reference, pod, prof, names)
    lines = []
    for name in names:
        node = reference.nodes[name]
        usage = reference.usage(name)
        lines.append(
            f"{name}: alloc={node.allocatable} used={usage.requested} nz=({usage.nonzero_cpu},"
            f"{usage.nonzero_mem}) pods={usage.n_pods} plugins="
            f"{ {p: s[name] for p, s in per_plugin.items()} }"
        )
    return "\n".join(lines)


@given(
    cluster=clusters(),
    pods=st.lists(pod_dicts("incoming", preemption=True), min_size=1, max_size=3),
    profile=profiles(),
)
def test_filter_and_score_match_reference(cluster, pods, profile):
    nodes, existing = cluster
    native, reference = build_both(nodes, existing)
    sched = vcore.Scheduler(native, profile=profile)
    prof = ref.profile_to_native(profile)
    for pod in pods:
        want_feasible, want_reasons = ref.reference_filter(reference, pod, prof)
        got = sched.filter(pod)
        assert got.feasible == want_feasible
        assert got.reasons == want_reasons
        if not want_feasible:
            assert got.message == ref.failure_message(reference, pod, prof)
        want_scores = ref.reference_score(reference, pod, prof, want_feasible)
        got_scores = sched.score(pod)
        if got_scores != want_scores:
            bad = sorted(n for n in want_scores if got_scores.get(n) != want_scores[n])
            rp = ref.RefPod.from_dict(pod)
            raise AssertionError(
                f"scores differ on {bad}: native={ {n: got_scores.get(n) for n in bad} } "
                f"reference={ {n: want_scores[n] for n in bad} }\npod requests={rp.requests} "
                f"nonzero=({rp.nonzero_cpu},{rp.nonzero_mem})\nprofile={prof}\n{_explain(reference, pod, prof, bad)}"
            )


@given(cluster=clusters(max_nodes=25), profile=profiles(with_pct=True), data=st.data())
@settings(max_examples=min(50, settings.default.max_examples))
def test_schedule_picks_a_reference_best_node(cluster, profile, data):
    nodes, existing = cluster
    native, reference = build_both(nodes, existing)
    pods = [data.draw(pod_dicts(f"p{i}", preemption=True)) for i in range(data.draw(st.integers(1, 8)))]
    prof = ref.profile_to_native(profile)
    sched = vcore.Scheduler(native, profile=profile, seed=data.draw(st.integers(0, 3)))
    placements = sched.schedule(pods)
    by_key = {p.pod: p for p in placements}
    assert [p.pod for p in placements] == [ref.pod_key(p) for p in pods]

    def follow_native(key, best):
        chosen = by_key[key].node
        assert chosen in best, f"{key}: native chose {chosen}, reference best {sorted(best)}"
        return chosen

    steps = ref.reference_schedule(reference, pods, prof, choose=follow_native)
    for step in steps:
        placement = by_key[step.pod]
        assert placement.node == step.node
        if step.node is None:
            assert placement.reasons == step.reasons
            assert ref.filter_part(placement.message) == ref.fit_error_message(len(nodes), step.reasons)
    # both clusters hold the same bindings afterwards
    for name in reference.nodes:
        assert sorted(native.pods_on(name)) == sorted(p.key for p in reference.pods_on(name))


# ---------------------------------------------------------------------------------------------------------------
# Edge cases: empty cluster, huge quantities (products like (cap - req) * 100 exceed int64 in naive code)
# ---------------------------------------------------------------------------------------------------------------
import pytest  # noqa: E402

from conftest import fit_args, make_node, make_profile, req_pod  # noqa: E402

EI = 2**60


def test_empty_cluster():
    c = vcore.Cluster()
    sched = vcore.Scheduler(c)
    pod = req_pod("p", 100, 100)
    got = sched.filter(pod)
    assert (got.feasible, got.reasons) == ref.reference_filter(ref.ReferenceCluster(), pod, ref.profile_to_native(None))
    assert sched.score(pod) == {}
    [placement] = sched.schedule([pod])
    assert placement.node is None and placement.reasons == {}


HUGE_PROFILES = {
    "least": make_profile([("NodeResourcesFit", 1)], fit=fit_args("LeastAllocated")),
    "most": make_profile([("NodeResourcesFit", 1)], fit=fit_args("MostAllocated")),
    "rtcr": make_profile(
        [("NodeResourcesFit", 1)], fit=fit_args("RequestedToCapacityRatio", shape=[(0, 0), (50, 7), (100, 10)])
    ),
    "balanced": make_profile([("NodeResourcesBalancedAllocation", 1)]),
    "binpack": make_profile([("binpack", 1)], binpack={"binpack.weight": 3}),
    "default": None,
}


@pytest.mark.parametrize("profile_id", sorted(HUGE_PROFILES))
@pytest.mark.parametrize(
    "node_mem,used,req",
    [
        (3 * EI // 2, 0, 3 * EI // 4),
        (3 * EI // 2, 3 * EI // 4, 3 * EI // 4),
        (3 * EI // 2, EI, 3 * EI // 4),
        (2**60, 2**59, 2**59 - 1),
        (10**18 + 7, 10**17, 3 * 10**17 + 1),
        (2**53 + 1, 2**52, 1),
    ],
    ids=["1.5Ei-0.75Ei", "1.5Ei-full", "1.5Ei-over", "2^60-half", "1e18-odd", "2^53+1"],
)
def test_huge_quantities_match_reference(profile_id, node_mem, used, req):
    profile = HUGE_PROFILES[profile_id]
    # Node b is small enough that the cluster's totals stay within vcore's bound (2**61; a node past it is refused).
    nodes = [
        make_node("a", 64_000, node_mem, extra={"ephemeral-storage": node_mem}),
        make_node("b", 32_000, node_mem // 9, extra={"ephemeral-storage": EI // 2}),
    ]
    existing = [("a", req_pod("e1", 1000, used)), ("b", req_pod("e2", 2000, used // 5))]
    native, reference = build_both(nodes, existing)
    prof = ref.profile_to_native(profile)
    pod = req_pod("in", 3000, req, {"ephemeral-storage": req // 2})
    sched = vcore.Scheduler(native, profile=profile)
    want_feasible, want_reasons = ref.reference_filter(reference, pod, prof)
    got = sched.filter(pod)
    assert (got.feasible, got.reasons) == (want_feasible, want_reasons)
    assert sched.score(pod) == ref.reference_score(reference, pod, prof, want_feasible)
