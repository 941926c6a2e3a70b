"""Scheduler.set_node_scope: a scheduler confined to (hard) or steered toward (soft) a shard of the nodes, in
schedule() and in run_cycle(); nodes joining and leaving the scope; bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import vcore

from .builders import build, gang, node, pod

NS = "ns"


def cluster_of(n: int, cpu: str = "4") -> vcore.Cluster:
    c = vcore.Cluster()
    for i in range(n):
        c.add_node(node(f"n{i}", cpu))
    return c


def plain(name: str, cpu: str = "1") -> dict:
    return pod(name, cpu=cpu)


def placed(placements) -> dict[str, str | None]:
    return {p.pod.split("/", 1)[1]: p.node for p in placements}


# -- schedule() -------------------------------------------------------------------------------------------------
def test_hard_scope_places_only_on_its_nodes_and_counts_only_them():
    c = cluster_of(6)
    s = vcore.Scheduler(c)
    s.set_node_scope(["n1", "n2"])
    result = placed(s.schedule([plain(f"p{i}") for i in range(10)]))
    assert {n for n in result.values() if n} == {"n1", "n2"}
    assert sum(n is not None for n in result.values()) == 8  # 2 nodes x 4 cpu
    last = s.schedule([plain("late")])[0]
    assert last.node is None
    # The shard is the whole world, preemption's included.
    full = (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 2 No preemption victims found for incoming pod."
    )
    assert last.message == full
    assert last.reasons == {"Insufficient cpu": 2}
    assert s.filter(plain("probe")).message == full


def test_soft_scope_prefers_its_nodes_then_uses_the_others():
    c = cluster_of(6)
    s = vcore.Scheduler(c)
    s.set_node_scope(["n3"], soft=True)
    first = placed(s.schedule([plain(f"p{i}") for i in range(4)]))
    assert set(first.values()) == {"n3"}  # LeastAllocated would spread them; the scope wins while it has room
    spill = placed(s.schedule([plain(f"q{i}") for i in range(3)]))
    assert "n3" not in spill.values() and None not in spill.values()
    # Nothing fits anywhere: the reasons cover every node, in the scope and out of it.
    big = s.schedule([plain("big", cpu="5")])[0]
    assert big.node is None and big.reasons == {"Insufficient cpu": 6}
    assert big.message.startswith("0/6 nodes are available")


def test_soft_scope_never_falls_back_on_avoided_nodes():
    c = cluster_of(4, cpu="1")
    s = vcore.Scheduler(c)
    s.set_node_scope(["n0"], soft=True, avoid=["n1", "n2"])
    result = placed(s.schedule([plain(f"p{i}") for i in range(3)]))
    assert sorted(map(str, result.values())) == ["None", "n0", "n3"]
    p = s.schedule([plain("x")])[0]
    # The reasons cover every node, as kube-scheduler counts them: n1 and n2 would fit, so they count under none.
    assert p.node is None and p.reasons == {"Insufficient cpu": 2}
    assert s.node_scope.avoid == frozenset({"n1", "n2"})


def test_scope_follows_nodes_added_and_removed():
    c = cluster_of(2)
    s = vcore.Scheduler(c)
    s.set_node_scope(["later"])
    assert s.schedule([plain("a")])[0].node is None  # the named node does not exist yet
    c.add_node(node("later", "4"))
    assert s.schedule([plain("b")])[0].node == "later"
    c.unbind(f"{NS}/b")
    c.remove_node("later")
    c.add_node(node("other", "4"))  # takes the freed slot: a slot is not a name
    assert s.schedule([plain("c")])[0].node is None
    assert s.node_scope == vcore.NodeScope(frozenset({"later"}), False, frozenset())


def test_clearing_the_scope_restores_every_node():
    c = cluster_of(3, cpu="1")
    s = vcore.Scheduler(c)
    s.set_node_scope(["n0"])
    assert placed(s.schedule([plain("a"), plain("b")])) == {"a": "n0", "b": None}
    s.set_node_scope(None)
    assert s.node_scope is None
    assert placed(s.schedule([plain("b")]))["b"] in {"n1", "n2"}


def test_empty_hard_scope_places_nothing():
    c = cluster_of(3)
    s = vcore.Scheduler(c)
    s.set_node_scope([])
    p = s.schedule([plain("a")])[0]
    assert p.node is None and p.message == "no nodes available to schedule pods"  # kube-scheduler's words


@pytest.mark.parametrize(
    "bad, error",
    [
        ("n1", TypeError),  # a string is not a set of names
        (["n1", 3], TypeError),
        (5, TypeError),
    ],
    ids=["string", "non-string-name", "not-iterable"],
)
def test_bad_scope_is_rejected_and_changes_nothing(bad, error):
    c = cluster_of(2)
    s = vcore.Scheduler(c)
    s.set_node_scope(["n0"])
    with pytest.raises(error):
        s.set_node_scope(bad)
    with pytest.raises(TypeError):
        s.set_node_scope(["n0"], soft="yes")
    assert s.node_scope == vcore.NodeScope(frozenset({"n0"}), False, frozenset())
    assert s.schedule([plain("a")])[0].node == "n0"


# -- run_cycle() ------------------------------------------------------------------------------------------------
def gang_cluster(n_nodes: int, *jobs) -> vcore.Cluster:
    return build([node(f"n{i}", "2") for i in range(n_nodes)], *jobs)


def nodes_of(c: vcore.Cluster, prefix: str) -> set[str]:
    return {c.node_of(f"{NS}/{prefix}-{i}") for i in range(100) if c.has_pod(f"{NS}/{prefix}-{i}")} - {None}


def test_hard_scope_confines_a_gang_or_leaves_it_whole_pending():
    c = gang_cluster(6, gang("fits", 4), gang("big", 7))  # 12 cpu in the cluster, 6 in the shard
    s = vcore.Scheduler(c)
    s.set_node_scope(["n0", "n1", "n2"])
    result = s.run_cycle()
    assert nodes_of(c, "fits") <= {"n0", "n1", "n2"} and len(nodes_of(c, "fits")) >= 2
    assert {b.pod for b in result.bindings} == {f"{NS}/fits-{i}" for i in range(4)}
    assert nodes_of(c, "big") == set()  # 7 tasks for a 6-cpu shard: all or nothing
    assert result.podgroups[f"{NS}/big"].phase != "Running"


def test_soft_scope_fills_the_shard_first_then_spills_a_gang():
    c = gang_cluster(6, gang("job", 6))
    s = vcore.Scheduler(c)
    s.set_node_scope(["n4", "n5"], soft=True)
    s.run_cycle()
    used = {c.node_of(f"{NS}/job-{i}") for i in range(6)}
    assert None not in used
    on_shard = sum(c.node_of(f"{NS}/job-{i}") in {"n4", "n5"} for i in range(6))
    assert on_shard == 4  # both shard nodes full (2 cpu each) before any other node is used


def test_soft_scope_gang_too_big_for_the_cluster_holds_nothing():
    c = gang_cluster(3, gang("job", 7))
    s = vcore.Scheduler(c)
    s.set_node_scope(["n0"], soft=True)
    result = s.run_cycle()
    assert not result.bindings and c.n_pods == 0


# -- property: the scope's promise against a per-pod reference ------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    cpus=st.lists(st.integers(1, 4), min_size=1, max_size=8),
    requests=st.lists(st.integers(1, 3), max_size=12),
    scope_bits=st.lists(st.booleans(), min_size=8, max_size=8),
    soft=st.booleans(),
)
def test_scope_property_against_reference(cpus, requests, scope_bits, soft):
    """Pod by pod: a hard scope places inside it iff some scope node fits; a soft scope places inside when some
    scope node fits, else outside iff some other node fits (feasibility from an unscoped evaluate)."""
    c = vcore.Cluster()
    for i, cpu in enumerate(cpus):
        c.add_node(node(f"n{i}", str(cpu)))
    scope = {f"n{i}" for i in range(len(cpus)) if scope_bits[i]}
    s = vcore.Scheduler(c)
    s.set_node_scope(scope, soft=soft)
    oracle = vcore.Scheduler(c)
    for k, req in enumerate(requests):
        p = plain(f"p{k}", cpu=str(req))
        feasible = set(oracle.filter(p).feasible)
        got = s.schedule([p])[0].node
        if feasible & scope:
            assert got in feasible & scope
        elif soft and feasible:
            assert got in feasible - scope
        else:
            assert got is None
