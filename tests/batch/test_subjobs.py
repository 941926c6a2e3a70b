"""Volcano's SubJob model (vcore.batch.subjobs) through run_cycle: what every placement it makes must respect, over
random label partitions, sub-group sizes, limits and free room (Volcano's own tables are in
tests/batch/volcano/test_allocate.py), and what it costs on a large tree."""

from __future__ import annotations

from collections import Counter

from hypothesis import event, given, settings, strategies as st

import vcore
from topology.trees import hn, leaf_spine, node as topology_node

from .builders import NS, pod, podgroup
from .test_topology_cycle import add_gang, busy_tree, leaf_of

NODES = [f"s{s}-l{leaf}-n{n}" for s in range(2) for leaf in range(2) for n in range(4)]


def spine_of(node: str) -> str:
    return node.split("-")[0]


def index(pod_key: str) -> int:
    return int(pod_key.rsplit("-", 1)[1])


@st.composite
def workloads(draw):
    free = {n: draw(st.integers(0, 4)) for n in NODES}
    sizes = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))  # pods per partition label
    n_pods = sum(sizes)
    sub_group_size = draw(st.integers(1, 4))
    sub_tier = draw(st.sampled_from([1, 2, None]))  # None: a soft sub-group
    job_topology = draw(
        st.sampled_from(
            [
                {"mode": "hard", "highestTierAllowed": 1},
                {"mode": "hard", "highestTierAllowed": 2},
                {"mode": "soft"},
                None,
            ]
        )
    )
    policy = {
        "name": "tp",
        "subGroupSize": sub_group_size,
        "minSubGroups": draw(st.integers(0, len(sizes))),
        "matchLabelKeys": ["example.com/partition"],
        "networkTopology": {"mode": "soft"} if sub_tier is None else {"mode": "hard", "highestTierAllowed": sub_tier},
    }
    labels = [str(p) for p, k in enumerate(sizes) for _ in range(k)]
    unlabelled = draw(st.integers(0, 2))  # pods the policy does not pick: the job's default SubJob
    return free, labels, unlabelled, policy, job_topology, draw(st.integers(1, n_pods + unlabelled))


@settings(max_examples=150, deadline=None)
@given(workloads())
def test_sub_job_placements_keep_every_constraint(workload):
    free, labels, unlabelled, policy, job_topology, min_member = workload
    c = busy_tree(free)
    n = len(labels) + unlabelled

    def pod_labels(i: int) -> dict:
        return {"example.com/partition": labels[i]} if i < len(labels) else {}

    add_gang(c, "job", n, job_topology, min_member=min_member, sub_groups=[policy], pod_labels=pod_labels)
    result = vcore.Scheduler(c).run_cycle()
    bound = {b.pod: b.node for b in result.bindings}
    for b in result.bindings:
        assert c.node_of(b.pod) == b.node
    # No node past its room (4 one-cpu pods).
    assert all(len(c.pods_on(node)) <= 4 for node in NODES)
    event("placed" if bound else "nothing placed")
    if not bound:
        assert result.podgroups[f"{NS}/job"].phase != "Running"
        return
    # Placed only as a ready job: minMember pods, and minSubGroups SubJobs of subGroupSize pods.
    assert len(bound) >= min_member
    partition_of = {key: labels[index(key)] for key in bound if index(key) < len(labels)}
    per_partition = Counter(partition_of.values())
    ready = sum(1 for k in per_partition.values() if k >= policy["subGroupSize"])
    assert ready >= policy["minSubGroups"]
    assert result.podgroups[f"{NS}/job"].phase == "Running"
    # Each SubJob within one HyperNode of its limit (a soft one within the job's), the job within its own.
    job_tier = (job_topology or {}).get("highestTierAllowed")
    sub_tier = policy["networkTopology"].get("highestTierAllowed", job_tier)
    domain = {1: leaf_of, 2: spine_of}
    for partition in per_partition:
        nodes = [bound[key] for key, p in partition_of.items() if p == partition]
        if sub_tier in domain:
            assert len({domain[sub_tier](node) for node in nodes}) == 1, (partition, nodes)
    if job_tier in domain:
        assert len({domain[job_tier](node) for node in bound.values()}) == 1


def add_sub_job_gang(c: vcore.Cluster, n: int, size: int) -> None:
    """A PodGroup "job" of n one-cpu pods, all needed, hard to tier 2, in SubJobs of ``size`` (label p) hard to
    tier 1."""
    pg = podgroup("job", n, topology={"mode": "hard", "highestTierAllowed": 2})
    pg["spec"]["subGroupPolicy"] = [
        {
            "name": "tp",
            "subGroupSize": size,
            "matchLabelKeys": ["p"],
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        }
    ]
    c.add_podgroup(pg)
    for i in range(n):
        p = pod(f"job-{i}", "job", "1", None)
        p["metadata"]["labels"] = {"p": str(i // size)}
        c.add_pod(p)


def test_a_large_sub_job_gang_stays_bounded():
    # 256 pods in 8 SubJobs of 32 on 5000 nodes (10 spines x 10 leaves x 50): Volcano's algorithm tries the job in
    # each of the 100 leaves that can hold it, SubJob by SubJob. The job runs, each SubJob in one leaf.
    c = leaf_spine(spines=10, leaves=10, nodes=50, cpu=8)
    add_sub_job_gang(c, 256, 32)
    result = vcore.Scheduler(c).run_cycle()
    assert result.podgroups[f"{NS}/job"].phase == "Running" and len(result.bindings) == 256
    leaves: dict[int, set[str]] = {}
    for b in result.bindings:
        leaves.setdefault(index(b.pod) // 32, set()).add(b.node.rsplit("-", 1)[0])
    assert len(leaves) == 8 and all(len(v) == 1 for v in leaves.values())


def test_a_hypernode_without_nodes_is_no_candidate():
    # Leaf l-empty names a node the cluster does not have: it holds nothing, and the SubJobs go to leaf l-full.
    c = vcore.Cluster()
    for n in ("a", "b"):
        c.add_node(topology_node(n, cpu=4))
    c.set_hypernodes(
        [hn("l-empty", 1, ["gone"]), hn("l-full", 1, ["a", "b"]), hn("top", 2, children=["l-empty", "l-full"])]
    )
    add_sub_job_gang(c, 4, 2)
    result = vcore.Scheduler(c).run_cycle()
    assert result.podgroups[f"{NS}/job"].phase == "Running"
    assert {b.node for b in result.bindings} <= {"a", "b"}
