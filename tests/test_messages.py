"""vcore's FailedScheduling text against kube-scheduler v1.34's, case by case.

Expected texts are worked out from kube-scheduler's source: framework.FitError.Error (the histogram, then the
PostFilter plugins' words), TaintToleration's and NodeAffinity's reasons, NodeAffinity.PreFilter (matchFields
metadata.name In narrows the nodes; disjoint names conflict), DynamicResources.PostFilter ("no new claims to
deallocate"; "not found" when a PreFilter rejection left it no state), DefaultPreemption (preemptionPolicy Never;
findCandidates over the nodes whose status is Unschedulable; SelectVictimsOnNode: no pod of lower priority, or the
filters still failing without them), NodeResourcesFit's insufficiency that is unresolvable past the allocatable.
tests/kube/test_differential.py compares the same texts with the real kube-scheduler on random clusters.
"""

from __future__ import annotations

import vcore
from conftest import GIB, make_node, make_pod, req_pod, taint
from vcore import preemption, reasons

NO_CLAIMS = "no new claims to deallocate, preemption: "


def cluster_of(*nodes: dict, bound: tuple[tuple[dict, str], ...] = ()) -> vcore.Cluster:
    c = vcore.Cluster()
    for n in nodes:
        c.add_node(n)
    for pod, node in bound:
        c.bind(pod, node)
    return c


def with_priority(pod: dict, priority: int, *, never: bool = False) -> dict:
    """spec.priority as the Priority admission plugin writes it from the pod's class (and its preemptionPolicy)."""
    pod["spec"]["priority"] = priority
    if never:
        pod["spec"]["preemptionPolicy"] = "Never"
    return pod


def message(cluster: vcore.Cluster, pod: dict) -> str:
    result = vcore.Scheduler(cluster).filter(pod)
    assert result.feasible == []
    return result.message


def test_taints_are_reported_in_kube_schedulers_words():
    c = cluster_of(make_node("n0", 4000, 8 * GIB, taints=[taint("dedicated", "infra")]))
    assert vcore.Scheduler(c).filter(req_pod("p", 100)).reasons == {"node(s) had untolerated taint(s)": 1}


def test_preemption_is_not_helpful_where_every_failure_is_unresolvable():
    c = cluster_of(
        make_node("tainted", 4000, 8 * GIB, taints=[taint("gpu")]),
        make_node("cordoned", 4000, 8 * GIB, unschedulable=True),
        make_node("small", 500, 8 * GIB),
    )  # 500m: less than the pod asks for, however empty
    assert message(c, req_pod("p", 1000)) == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), 1 node(s) were "
        "unschedulable. " + NO_CLAIMS + "0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_a_node_that_eviction_could_free_has_no_victims_without_lower_priority_pods():
    c = cluster_of(
        make_node("busy", 2000, 8 * GIB),
        make_node("small", 500, 8 * GIB),
        bound=((with_priority(req_pod("same", 1500), 100), "busy"),),
    )
    assert message(c, with_priority(req_pod("p", 1000), 100)) == (
        "0/2 nodes are available: 2 Insufficient cpu. " + NO_CLAIMS + "0/2 nodes are available: 1 No preemption "
        "victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )


def test_a_node_that_still_fails_without_its_lower_priority_pods_reports_why():
    c = cluster_of(
        make_node("n0", 4000, 8 * GIB),
        bound=((with_priority(req_pod("low", 1000), 0), "n0"), (with_priority(req_pod("high", 2500), 100), "n0")),
    )
    # Without "low" 1500m are free, still less than 2000m.
    assert message(c, with_priority(req_pod("p", 2000), 100)) == (
        "0/1 nodes are available: 1 Insufficient cpu. " + NO_CLAIMS + "0/1 nodes are available: 1 Insufficient cpu."
    )


def test_no_post_filter_words_when_evicting_would_make_room():
    c = cluster_of(
        make_node("n0", 4000, 8 * GIB),
        bound=((with_priority(req_pod("low", 1000), 0), "n0"), (with_priority(req_pod("high", 2500), 100), "n0")),
    )
    # Without "low" 1500m are free: DefaultPreemption picks n0 and its PostFilter ends without a word.
    result = vcore.Scheduler(c).filter(with_priority(req_pod("p", 1500), 100))
    assert result.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert result.preemption is not None
    assert (result.preemption.node, result.preemption.victims) == ("n0", ("default/low",))


def test_a_profile_without_default_preemption_ends_with_dynamic_resources_words():
    c = cluster_of(make_node("n0", 500, 8 * GIB))
    profile = {"plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}
    result = vcore.Scheduler(c, profile).filter(req_pod("p", 1000))
    assert (result.message, result.preemption) == (
        "0/1 nodes are available: 1 Insufficient cpu. " + reasons.NO_CLAIMS_TO_DEALLOCATE,
        None,
    )


def test_a_pod_that_never_preempts_is_not_eligible():
    c = cluster_of(make_node("n0", 4000, 8 * GIB), bound=((with_priority(req_pod("low", 3000), 0), "n0"),))
    assert message(c, with_priority(req_pod("p", 2000), 100, never=True)) == (
        "0/1 nodes are available: 1 Insufficient cpu. " + NO_CLAIMS + preemption.NEVER
    )


def test_pod_affinity_rules_are_unresolvable_and_anti_affinity_may_be_resolved():
    web_on_host = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}
    web = with_priority(make_pod("web"), 0)
    web["metadata"]["labels"] = {"app": "web"}
    c = cluster_of(make_node("n0", 4000, 8 * GIB, labels={"kubernetes.io/hostname": "n0"}), bound=((web, "n0"),))
    away = with_priority(make_pod("away"), 100)
    away["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [web_on_host]}}
    assert message(c, away) == "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules."  # evicts web
    near = with_priority(make_pod("near"), 100)
    near["spec"]["affinity"] = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {**web_on_host, "labelSelector": {"matchLabels": {"app": "db"}}}
            ]
        }
    }
    assert message(c, near) == (
        "0/1 nodes are available: 1 node(s) didn't match pod affinity rules. "
        + NO_CLAIMS
        + "0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def names_term(*names: str) -> dict:
    return {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]} for n in names]}


def test_node_names_in_every_required_term_leave_the_other_nodes_unlooked_at():
    c = cluster_of(
        make_node("n0", 4000, 8 * GIB),
        make_node("n1", 4000, 8 * GIB, taints=[taint("gpu")]),
        make_node("n2", 4000, 8 * GIB, unschedulable=True),
    )
    sched = vcore.Scheduler(c)
    # n2's cordon is not looked at: NodeAffinity's PreFilter keeps only n1 (a name that is no node is ignored).
    pod = make_pod("p", required=[names_term("n1"), names_term("gone")])
    result = sched.filter(pod)
    assert result.reasons == {"node(s) had untolerated taint(s)": 1, reasons.NODE_AFFINITY_PREFILTER: 2}
    assert result.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't satisfy plugin(s) "
        "[NodeAffinity]. " + NO_CLAIMS + "0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert sched.filter(make_pod("q", required=[names_term("n0")])).feasible == ["n0"]
    # A term without a name lets every node through the PreFilter.
    assert sched.filter(
        make_pod(
            "r",
            required=[
                names_term("n1"),
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "DoesNotExist"}]},
            ],
        )
    ).feasible == ["n0"]


def test_disjoint_node_names_are_a_conflict_of_the_whole_pod():
    c = cluster_of(make_node("n0", 4000, 8 * GIB), make_node("n1", 4000, 8 * GIB))
    result = vcore.Scheduler(c).filter(make_pod("p", required=[names_term("n0", "n1")]))
    assert result.reasons == {reasons.AFFINITY_TERMS_CONFLICT: 2}
    # The PreFilter rejection ends the cycle before DynamicResources' PreFilter: its PostFilter finds no state.
    assert result.message == "0/2 nodes are available: pod affinity terms conflict. not found"


def test_schedule_works_out_preemption_once_the_batch_is_placed():
    c = cluster_of(make_node("n0", 4000, 8 * GIB), bound=((with_priority(req_pod("high", 3000), 100), "n0"),))
    first, later = vcore.Scheduler(c).schedule(
        [with_priority(req_pod("p", 2000), 100), with_priority(req_pod("low", 500), 0)]
    )
    assert first.node is None and later.node == "n0"
    # Scheduler.schedule decides preemption after the batch (its docstring): "low", placed after p, is a victim then,
    # and without it 1000m are still short. (kube-scheduler, one pod per cycle, would have found no victims.)
    assert first.message == (
        "0/1 nodes are available: 1 Insufficient cpu. " + NO_CLAIMS + "0/1 nodes are available: 1 Insufficient cpu."
    )
    assert vcore.Scheduler(c).filter(with_priority(req_pod("p", 2000), 100)).message == (
        "0/1 nodes are available: 1 Insufficient cpu. " + NO_CLAIMS + "0/1 nodes are available: 1 Insufficient cpu."
    )


def test_fit_error_message_assembly():
    assert reasons.fit_error_message(0, {}) == "no nodes available to schedule pods"
    assert reasons.fit_error_message(2, {"Insufficient cpu": 2}, "x") == (
        "0/2 nodes are available: 2 Insufficient cpu. x"
    )
    # A refusal of vcore's own carries no kube-scheduler PostFilter words.
    refusal = reasons.pod_refusal({"unhonored": ("spec.volumes[0].persistentVolumeClaim",)})
    assert reasons.post_filter_message({refusal: 2}, None) == ""
    assert reasons.post_filter_message({"Insufficient cpu": 2}, "") == ""  # preemption picked a node
    assert reasons.post_filter_message({reasons.AFFINITY_TERMS_CONFLICT: 2}, None) == "not found"
    assert reasons.fit_error_message(2, {refusal: 2}) == (
        "0/2 nodes are available: vcore does not honor spec.volumes[0].persistentVolumeClaim."
    )
