"""Property tests: vcore.Scheduler.filter/score/schedule equal the pure-Python reference on random clusters.

Random clusters (1..40 nodes; labels from a small vocabulary; NoSchedule/PreferNoSchedule/NoExecute taints;
extended resources, hugepages, ephemeral-storage; zero capacities; unschedulable nodes; small pod limits;
pods already bound), random pods (missing / explicit-zero / positive requests, init containers and sidecars,
overhead, nodeSelector, required and preferred node affinity with every operator, tolerations) and random
profiles (strategy, resource weights, RTCR shapes, ignored resources, balanced resources, binpack arguments,
score plugin weights). Hypothesis runs derandomized (profile "ci" in conftest.py), so failures reproduce.
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import vcore
import reference as ref
from conftest import node_dicts, pod_dicts, profiles


@st.composite
def clusters(draw, max_nodes: int = 40):
    n = draw(st.integers(1, max_nodes))
    nodes = [draw(node_dicts(f"n{i}")) for i in range(n)]
    existing = []
    for j in range(draw(st.integers(0, n + 5))):
        existing.append((f"n{draw(st.integers(0, n - 1))}", draw(pod_dicts(f"bound{j}", constraints=False))))
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
        lines.append(f"{name}: alloc={node.allocatable} used={usage.requested} nz=({usage.nonzero_cpu},"
                     f"{usage.nonzero_mem}) pods={usage.n_pods} plugins="
                     f"{ {p: s[name] for p, s in per_plugin.items()} }")
    return "\n".join(lines)


@given(cluster=clusters(), pods=st.lists(pod_dicts("incoming"), min_size=1, max_size=3), profile=profiles())
@settings(max_examples=100)
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
            assert got.message == ref.fit_error_message(len(nodes), want_reasons)
        want_scores = ref.reference_score(reference, pod, prof, want_feasible)
        got_scores = sched.score(pod)
        if got_scores != want_scores:
            bad = sorted(n for n in want_scores if got_scores.get(n) != want_scores[n])
            rp = ref.RefPod.from_dict(pod)
            raise AssertionError(
                f"scores differ on {bad}: native={ {n: got_scores.get(n) for n in bad} } "
                f"reference={ {n: want_scores[n] for n in bad} }\npod requests={rp.requests} "
                f"nonzero=({rp.nonzero_cpu},{rp.nonzero_mem})\nprofile={prof}\n{_explain(reference, pod, prof, bad)}")


@given(cluster=clusters(max_nodes=25), profile=profiles(with_pct=True), data=st.data())
@settings(max_examples=60)
def test_schedule_picks_a_reference_best_node(cluster, profile, data):
    nodes, existing = cluster
    native, reference = build_both(nodes, existing)
    pods = [data.draw(pod_dicts(f"p{i}")) for i in range(data.draw(st.integers(1, 8)))]
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
            assert placement.message == ref.fit_error_message(len(nodes), step.reasons)
    # both clusters hold the same bindings afterwards
    for name in reference.nodes:
        assert sorted(native.pods_on(name)) == sorted(p.key for p in reference.pods_on(name))
