"""Conformance: published expected values run through the PUBLIC vcore API (and the reference, side by side).

Tables (ids name the source): SCORING.md's worked cases, and a selection of kube-scheduler's plugin unit-test
tables (least_allocated_test.go, most_allocated_test.go, requested_to_capacity_ratio_test.go,
balanced_allocation_test.go, taint_toleration_test.go, node_unschedulable_test.go, fit_test.go,
node_affinity_test.go) plus vcore's own operator/edge cases ("vcore: ..."). Each case uses a profile that
enables only the plugin under test, with no filters for score cases (kube's score unit tests do not filter).
The tables themselves live in test_reference_self.py, which checks the reference against them on its own.
"""

from __future__ import annotations

import pytest

import reference as ref
import vcore
from test_reference_self import ALL_SCORE_CASES, FILTER_CASES, build_reference, populate


def build_native(nodes, existing) -> vcore.Cluster:
    return populate(vcore.Cluster(), nodes, existing)


@pytest.mark.parametrize("case", ALL_SCORE_CASES, ids=lambda c: c.id)
def test_score_conformance(case):
    sched = vcore.Scheduler(build_native(case.nodes, case.existing), profile=case.profile)
    assert sched.score(case.pod) == case.expected


@pytest.mark.parametrize("case", ALL_SCORE_CASES, ids=lambda c: c.id)
def test_score_reference(case):
    c = build_reference(case.nodes, case.existing)
    assert ref.reference_score(c, case.pod, ref.profile_to_native(case.profile)) == case.expected


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.id)
def test_filter_conformance(case):
    sched = vcore.Scheduler(build_native(case.nodes, case.existing), profile=case.profile)
    result = sched.filter(case.pod)
    assert (result.feasible, result.reasons) == (case.feasible, case.reasons)
    if not case.feasible:
        reference = build_reference(case.nodes, case.existing)
        assert result.message == ref.failure_message(reference, case.pod, ref.profile_to_native(case.profile))


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.id)
def test_filter_reference(case):
    c = build_reference(case.nodes, case.existing)
    assert ref.reference_filter(c, case.pod, ref.profile_to_native(case.profile)) == (case.feasible, case.reasons)


@pytest.mark.parametrize("case", ALL_SCORE_CASES + FILTER_CASES, ids=lambda c: c.id)
def test_profile_translation_agrees(case):
    """The public profile reader and the reference's independent reading give the same native profile."""
    native = vcore.profile.Profile.from_config(case.profile).native()
    mine = ref.profile_to_native(case.profile)
    assert native["filters"] == mine["filters"]
    assert [tuple(s) for s in native["scores"]] == mine["scores"]
    for plugin, _ in mine["scores"]:
        if plugin == "NodeResourcesFit":
            f = native["fit"]
            assert f["strategy"] == mine["fit"]["strategy"]
            assert [tuple(r) for r in f["resources"]] == mine["fit"]["resources"]
            if f["strategy"] == "RequestedToCapacityRatio":
                assert [tuple(s) for s in f["shape"]] == mine["fit"]["shape"]
        if plugin == "NodeResourcesBalancedAllocation":
            assert [tuple(r) for r in native["balanced"]["resources"]] == mine["balanced"]["resources"]
        if plugin == "binpack":
            assert native["binpack"]["weight"] == mine["binpack"]["weight"]
            assert [tuple(r) for r in native["binpack"]["resources"]] == mine["binpack"]["resources"]
    if "NodeResourcesFit" in mine["filters"]:
        assert sorted(native["fit"]["ignored_resources"]) == sorted(mine["fit"]["ignored_resources"])
        assert sorted(native["fit"]["ignored_resource_groups"]) == sorted(mine["fit"]["ignored_resource_groups"])


def test_weighted_sum_of_plugins():
    """Final score = sum(weight_p * score_p): LeastAllocated 37/50 x2 + BalancedAllocation 87/100 x3."""
    from conftest import fit_args, make_node, make_profile, req_pod

    nodes = [make_node("n1", 4000, 10000), make_node("n2", 6000, 10000)]
    prof = make_profile(
        [("NodeResourcesFit", 2), ("NodeResourcesBalancedAllocation", 3)], filters=[], fit=fit_args("LeastAllocated")
    )
    pod = req_pod("in", 3000, 5000)
    expected = {"n1": 2 * 37 + 3 * 87, "n2": 2 * 50 + 3 * 100}
    assert vcore.Scheduler(build_native(nodes, []), profile=prof).score(pod) == expected
    assert ref.reference_score(build_reference(nodes, []), pod, ref.profile_to_native(prof)) == expected
