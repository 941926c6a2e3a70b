"""The native gang search: the reference tables (a leaf fit exactly, a gang that needs a spine, one that fits
nowhere under its limit, soft mode, sub-groups, a partially running gang, Kueue annotations, the KEP's BestFit
example), the link-state tie-break, Volcano's soft node score, bad input, and the pure-Python reference compared by
hypothesis on random trees."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import vcore
from topology import reference as ref
from topology.trees import by_name, fit_of, hn, leaf_spine, node, pod
from vcore.topology import (
    SubGroup,
    TierRef,
    TopologyConstraint,
    TopologyPlacementArgs,
    binpack_scores,
    fit_counts,
    kueue_constraint,
    node_scores,
    place_gang,
    podgroup_topology,
    valid_placement,
)

NATIVE = TopologyPlacementArgs(solver="native")


def hard(tier: int, *subgroups: SubGroup) -> TopologyConstraint:
    return TopologyConstraint("hard", TierRef(tier=tier), subgroups=subgroups, owner="PodGroup ns/pg")


def cluster_with_free(free: dict[str, int]) -> vcore.Cluster:
    """2 spines x 2 leaves x 4 nodes of 4 cpus; `free` leaves that many 1-cpu pods' room per node (default 4)."""
    c = leaf_spine(spines=2, leaves=2, nodes=4, cpu=4)
    for name in c.node_names:
        used = 4 - free.get(name, 4)
        for i in range(used):
            c.bind(pod(f"{name}-busy-{i}"), name)
    return c


# leaf-0-0 has 10 free, leaf-0-1 16, leaf-1-0 12, leaf-1-1 16; spine-0 26, spine-1 28; core 54.
FREE = {
    "s0-l0-n0": 1,
    "s0-l0-n1": 1,
    "s0-l0-n2": 4,
    "s0-l0-n3": 4,
    "s1-l0-n0": 0,
    "s1-l0-n1": 4,
    "s1-l0-n2": 4,
    "s1-l0-n3": 4,
}


@pytest.fixture
def busy() -> vcore.Cluster:
    return cluster_with_free(FREE)


def leaf_of(name: str) -> str:
    spine, leaf, _ = name.split("-")
    return f"leaf-{spine[1:]}-{leaf[1:]}"


TABLE = [
    # id, pods, constraint, expected domain, expected pods per leaf (or None: not placed), reason
    ("fits-a-leaf-exactly", 12, hard(1), "leaf-1-0", {"leaf-1-0": 12}, ""),
    ("two-exact-leaves-name-order", 16, hard(1), "leaf-0-1", {"leaf-0-1": 16}, ""),
    ("tightest-leaf-that-fits", 9, hard(1), "leaf-0-0", {"leaf-0-0": 9}, ""),
    ("needs-a-spine", 20, hard(2), "spine-0", {"leaf-0-1": 16, "leaf-0-0": 4}, ""),
    ("spine-best-fit-fills-whole-leaves-first", 28, hard(2), "spine-1", {"leaf-1-1": 16, "leaf-1-0": 12}, ""),
    ("fits-nowhere-under-its-limit", 40, hard(2), None, None, "TopologyUnsatisfiable"),
    (
        "soft-falls-back-to-the-core",
        40,
        TopologyConstraint("soft"),
        "core",
        {"leaf-1-1": 16, "leaf-1-0": 12, "leaf-0-1": 12},
        "",
    ),  # spine-1 whole, then the tightest leaf for 12
    ("soft-takes-a-leaf-when-one-fits", 3, TopologyConstraint("soft"), "leaf-0-0", {"leaf-0-0": 3}, ""),
    ("soft-cannot-exceed-the-cluster", 60, TopologyConstraint("soft"), None, None, "InsufficientCapacity"),
]


@pytest.mark.parametrize(
    "pods, constraint, domain, per_leaf, reason", [t[1:] for t in TABLE], ids=[t[0] for t in TABLE]
)
def test_gang_table(busy, pods, constraint, domain, per_leaf, reason):
    fit = fit_counts(busy, pod("probe"))
    p = place_gang(busy, fit, pods, constraint, args=NATIVE)
    assert p.placed == (per_leaf is not None) and p.reason == reason
    assert p.domain == domain
    if per_leaf is None:
        assert not p.counts.any()
        return
    leaves: dict[str, int] = {}
    for name, n in by_name(busy, p.counts).items():
        leaves[leaf_of(name)] = leaves.get(leaf_of(name), 0) + n
    assert leaves == per_leaf
    assert np.all(p.counts <= fit) and p.counts.sum() == pods


def test_fits_nowhere_reason_names_the_tiers_and_the_best(busy):
    p = place_gang(busy, fit_counts(busy, pod("probe")), 40, hard(2), args=NATIVE)
    assert p.message == "no domain of tier 1 (leaf) to tier 2 (spine) can hold 40 pods; the largest holds 28 pods"


def test_kep_bestfit_example():
    """Kueue KEP-2724: a rack with nodes of room 3, 3, 2, 1; 7 pods take 3 + 3 + the 1-pod node."""
    c = vcore.Cluster()
    for i in range(4):
        c.add_node(node(f"n{i}", labels={"rack": "r1", "kubernetes.io/hostname": f"n{i}"}))
    c.set_topology_levels(["rack", "kubernetes.io/hostname"])
    fit = fit_of(c, {"n0": 3, "n1": 3, "n2": 2, "n3": 1})
    p = place_gang(c, fit, 7, kueue_constraint({"kueue.x-k8s.io/podset-required-topology": "rack"}), args=NATIVE)
    assert by_name(c, p.counts) == {"n0": 3, "n1": 3, "n3": 1} and p.domain == "r1"


def test_subgroups_each_in_one_leaf(busy):
    """16 pods in groups of 4, each group in one leaf, the gang in one spine (Volcano's subGroupPolicy)."""
    pg = {
        "metadata": {"name": "pg", "namespace": "ns"},
        "spec": {
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "subGroupPolicy": [
                {"name": "workers", "subGroupSize": 4, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
            ],
        },
    }
    topo = podgroup_topology(pg)
    constraint = topo.constraint.with_subgroups(*topo.policies)
    fit = fit_counts(busy, pod("probe"))
    # Make the leaves lumpy: 6 free in leaf-0-0 takes one group of 4, not 6 pods.
    p = place_gang(busy, fit, 24, constraint, args=NATIVE)
    assert p.placed and p.domain == "spine-0"
    per_leaf: dict[str, int] = {}
    for name, n in by_name(busy, p.counts).items():
        per_leaf[leaf_of(name)] = per_leaf.get(leaf_of(name), 0) + n
    assert per_leaf == {"leaf-0-1": 16, "leaf-0-0": 8}
    groups = p.groups()
    assert len(groups) == 6 and all(sum(g.values()) == 4 for g in groups)
    view = busy.topology
    for g in groups:
        assert len({int(view.node_topo[0, s]) for s in g}) == 1  # each group inside one leaf
    # 26 pods are not whole groups of 4: the PodGroup is named.
    with pytest.raises(vcore.TopologyError, match="PodGroup ns/pg: 26 pods are not whole groups of 4"):
        place_gang(busy, fit, 26, constraint, args=NATIVE)


def test_subgroups_that_cannot_be_cut_fail_even_when_pods_fit():
    c = leaf_spine(spines=1, leaves=3, nodes=1, cpu=3, core=False)
    fit = fit_counts(c, pod("probe"))  # 3 per leaf, 9 in the spine
    constraint = hard(2, SubGroup(size=2, limit=TierRef(tier=1)))
    assert place_gang(c, fit, 6, hard(2), args=NATIVE).placed
    p = place_gang(c, fit, 6, constraint, args=NATIVE)  # 3 leaves hold one group of 2 each
    assert p.placed and sorted(by_name(c, p.counts).values()) == [2, 2, 2]
    p = place_gang(c, fit, 8, constraint, args=NATIVE)
    assert not p.placed and p.reason == "TopologyUnsatisfiable" and "4 groups of 2" in p.message


def test_partially_running_gang_stays_in_its_domain(busy):
    """The gang runs 2 pods in leaf-1-0; 20 more must stay in spine-1 though spine-0 is tighter."""
    running = np.zeros(busy._state.n_slots, dtype=np.int32)
    running[busy.node_index("s1-l0-n1")] = 2
    fit = fit_counts(busy, pod("probe"))
    p = place_gang(busy, fit, 20, hard(2), running=running, args=NATIVE)
    assert p.placed and p.domain == "spine-1"
    assert all(name.startswith("s1-") for name in by_name(busy, p.counts))
    # Under a leaf limit, it must join leaf-1-0, which has 12 free: 13 pods do not fit.
    p = place_gang(busy, fit, 13, hard(1), running=running, args=NATIVE)
    assert not p.placed and "containing the gang's running pods" in p.message
    # Running pods already across two spines cannot satisfy a spine limit at all.
    running[busy.node_index("s0-l0-n3")] = 1
    p = place_gang(busy, fit, 1, hard(2), running=running, args=NATIVE)
    assert not p.placed and "running pods are in no common domain" in p.message


def test_kueue_required_takes_its_level_volcano_hard_tries_lower_first():
    """Kueue's required level picks the tightest rack even when one host could hold the gang; Volcano's hard mode
    tries the lowest tier first."""
    c = vcore.Cluster()
    layout = {"h1": ("ra", 4), "h2": ("ra", 4), "h3": ("rb", 1), "h4": ("rb", 1), "h5": ("rb", 1), "h6": ("rb", 1)}
    for name, (rack, _) in layout.items():
        c.add_node(node(name, labels={"rack": rack, "kubernetes.io/hostname": name}))
    c.set_topology_levels(["rack", "kubernetes.io/hostname"])
    fit = fit_of(c, {n: f for n, (_, f) in layout.items()})
    kueue = kueue_constraint({"kueue.x-k8s.io/podset-required-topology": "rack"}, owner="pod template w")
    p = place_gang(c, fit, 4, kueue, args=NATIVE)
    assert p.domain == "rb" and by_name(c, p.counts) == {"h3": 1, "h4": 1, "h5": 1, "h6": 1}
    volcano = TopologyConstraint("hard", TierRef(name="rack"))
    p = place_gang(c, fit, 4, volcano, args=NATIVE)
    assert p.domain == "ra/h1" and p.tier == 1  # a single host is the tightest domain that fits
    preferred = kueue_constraint({"kueue.x-k8s.io/podset-preferred-topology": "kubernetes.io/hostname"})
    assert place_gang(c, fit, 4, preferred, args=NATIVE).domain == "ra/h1"
    assert place_gang(c, fit, 9, preferred, args=NATIVE).domain is None  # several racks under the virtual root


def test_kueue_slices():
    c = vcore.Cluster()
    for r in range(3):
        for h in range(2):
            c.add_node(node(f"r{r}h{h}", labels={"block": "b", "rack": f"r{r}"}))
    c.set_topology_levels(["block", "rack"])
    fit = fit_of(c, {"r0h0": 3, "r0h1": 3, "r1h0": 2, "r1h1": 1, "r2h0": 2, "r2h1": 2})
    constraint = kueue_constraint(
        {
            "kueue.x-k8s.io/podset-required-topology": "block",
            "kueue.x-k8s.io/podset-slice-required-topology": "rack",
            "kueue.x-k8s.io/podset-slice-size": "4",
        }
    )
    p = place_gang(c, fit, 8, constraint, args=NATIVE)
    # r0 holds one slice of 4 (6 free), r2 one (4 free), r1 none (3 free): 2 slices, r0 first (most slices, then
    # fewest free pods), r2 exactly.
    assert p.placed and by_name(c, p.counts) in ({"r0h0": 3, "r0h1": 1, "r2h0": 2, "r2h1": 2},)
    assert not place_gang(c, fit, 12, constraint, args=NATIVE).placed


def test_link_state_breaks_ties_between_equally_tight_domains():
    c = vcore.Cluster()
    for leaf in ("a", "b", "c"):
        for i in range(2):
            c.add_node(node(f"{leaf}{i}", cpu=4))
    c.set_hypernodes(
        [
            hn("leaf-a", 1, nodes=["a0", "a1"], bandwidth=400, congestion=0.9),
            hn("leaf-b", 1, nodes=["b0", "b1"], bandwidth=400, congestion=0.1),
            hn("leaf-c", 1, nodes=["c0", "c1"], bandwidth=800, congestion=0.1),
        ]
    )
    fit = fit_of(c, {"a0": 4, "a1": 4, "b0": 4, "b1": 4, "c0": 4, "c1": 5})
    assert place_gang(c, fit, 8, hard(1), args=NATIVE).domain == "leaf-a"  # weights 0: the name breaks the tie
    congestion = TopologyPlacementArgs(solver="native", congestion_weight=1)
    assert place_gang(c, fit, 8, hard(1), args=congestion).domain == "leaf-b"
    # leaf-c has more bandwidth but one pod more room: tied only with tieSlack >= 1.
    both = TopologyPlacementArgs(solver="native", congestion_weight=1, bandwidth_weight=1)
    assert place_gang(c, fit, 8, hard(1), args=both).domain == "leaf-b"
    slack = TopologyPlacementArgs(solver="native", congestion_weight=1, bandwidth_weight=1, tie_slack=1)
    assert place_gang(c, fit, 8, hard(1), args=slack).domain == "leaf-c"
    # A congested domain is avoided, never refused: it is used when it is the only one that fits.
    fit[c.node_index("a1")] = 9
    assert place_gang(c, fit, 12, hard(1), args=congestion).domain == "leaf-a"


def test_soft_node_scores_follow_scoring_md():
    c = leaf_spine(spines=2, leaves=2, nodes=2)
    n = c._state.n_slots
    job = np.zeros(n, dtype=np.int32)
    assert not node_scores(c, job, job_tasks=4).any()  # the first pod: no preference
    job[c.node_index("s0-l0-n0")] = 1
    scores = dict(zip(c._state.node_names(), node_scores(c, job, job_tasks=4, weight=2)))
    # maxTier is Volcano's session's: its virtual cluster-wide HyperNode, tier 4 above the core's 3. Same leaf: 100
    # (x2), plus Volcano's tie-break 100 * 1/4 (x2) among the top nodes; same spine: LCA tier 2 -> (4 - 2) / (4 - 1)
    # (x2); other spine: LCA tier 3 (the core) -> (4 - 3) / (4 - 1) (x2).
    assert scores["s0-l0-n1"] == scores["s0-l0-n0"] == 250.0
    assert scores["s0-l1-n0"] == pytest.approx(200 * 2 / 3) and scores["s1-l0-n0"] == pytest.approx(200 / 3)
    # A node outside the tree scores 0; candidates restrict the tie-break's field.
    c.add_node(node("outside"))
    job = np.zeros(c._state.n_slots, dtype=np.int32)
    job[c.node_index("s0-l0-n0")] = 1
    only = np.zeros(c._state.n_slots, dtype=bool)
    only[c.node_index("s0-l0-n1")] = True
    scores = node_scores(c, job, job_tasks=4, candidates=only)
    assert scores[c.node_index("s0-l0-n1")] == 100.0 and scores[c.node_index("outside")] == 0.0


@pytest.mark.parametrize(
    "bad, error",
    [
        (dict(fit=np.zeros(3, dtype=np.int64)), TypeError),
        (dict(fit=[1, 2, 3]), TypeError),
        (dict(n_pods=0), vcore.TopologyError),
        (dict(constraint=hard(9)), vcore.TopologyError),
        (dict(constraint=hard(0)), vcore.TopologyError),
        (dict(constraint=TopologyConstraint("hard", TierRef(name="rack"))), vcore.TopologyError),
        (dict(running=np.zeros(2, dtype=np.int32)), TypeError),
    ],
    ids=[
        "fit-dtype",
        "fit-list",
        "no-pods",
        "tier-above-the-tree",
        "tier-below-the-tree",
        "unknown-tier-name",
        "running-shape",
    ],
)
def test_bad_input(bad, error):
    c = leaf_spine(spines=1, leaves=1, nodes=3, core=False)
    kw = dict(fit=fit_counts(c, pod("p")), n_pods=2, constraint=hard(1), running=None)
    kw.update(bad)
    with pytest.raises(error):
        place_gang(c, kw["fit"], kw["n_pods"], kw["constraint"], running=kw["running"], args=NATIVE)


def test_negative_fit_is_rejected():
    c = leaf_spine(spines=1, leaves=1, nodes=2, core=False)
    with pytest.raises(vcore.TopologyError, match="fit must be >= 0"):
        place_gang(c, np.array([-1, 2], dtype=np.int32), 1, hard(1), args=NATIVE)


def test_the_search_releases_the_gil():
    """A second thread makes progress strictly inside the kernel's call window."""
    from vcore._native import _core

    c = leaf_spine(spines=16, leaves=32, nodes=64, core=True)
    fit = fit_counts(c, pod("p"))
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    t = threading.Thread(target=ticker)
    t.start()
    try:
        windows = []
        for _ in range(20):
            begin = time.perf_counter()
            _core.topology.place_gang(c._state, fit, 100_000, 0, 3, False, [], None, 0.0, 0.0, 0)
            windows.append((begin, time.perf_counter()))
    finally:
        stop.set()
        t.join()
    assert any(sum(1 for x in ticks if b < x < e) > 0 for b, e in windows)


def test_results_are_deterministic():
    a = cluster_with_free(FREE)
    b = cluster_with_free(FREE)
    for pods in (5, 20, 40):
        pa = place_gang(a, fit_counts(a, pod("p")), pods, TopologyConstraint("soft"), args=NATIVE)
        pb = place_gang(b, fit_counts(b, pod("p")), pods, TopologyConstraint("soft"), args=NATIVE)
        assert np.array_equal(pa.counts, pb.counts)


# -- the native search equals the reference on random trees --------------------------------------------------
def reference_tree(c: vcore.Cluster) -> ref.Tree:
    v = c.topology
    names = c._state.node_names()
    row = {v.domain_names[d]: int(v.domain_row[d]) for d in range(v.n_domains) if v.domain_names[d]}
    parent = {
        v.domain_names[d]: (v.domain_names[p] if p >= 0 else None)
        for d, p in enumerate(v.domain_parent)
        if v.domain_names[d]
    }
    topo = v.node_topo
    column = {
        names[s]: [v.domain_names[d] if d >= 0 else None for d in topo[:, s]] for s in range(len(names)) if names[s]
    }
    bw = {v.domain_names[d]: float(v.domain_bandwidth_gbps[d]) for d in range(v.n_domains) if v.domain_names[d]}
    cg = {v.domain_names[d]: float(v.domain_congestion[d]) for d in range(v.n_domains) if v.domain_names[d]}
    return ref.Tree(v.tiers, row, parent, column, v.tier_names, bw, cg)


@st.composite
def random_trees(draw):
    """A tree with skipped tiers, nodes directly in upper domains and nodes outside it."""
    c = vcore.Cluster()
    n_nodes = draw(st.integers(1, 14))
    names = [f"n{i:02d}" for i in range(n_nodes)]
    for n in names:
        c.add_node(node(n))
    free = list(names)
    hns = []
    n_leaves = draw(st.integers(1, 5))
    leaves = []
    for i in range(n_leaves):
        take = draw(st.integers(0, min(3, len(free))))
        if not take:
            continue
        members, free = free[:take], free[take:]
        tier = draw(st.sampled_from([1, 1, 2]))
        leaves.append((f"l{i}", tier))
        hns.append(
            hn(
                f"l{i}",
                tier,
                nodes=members,
                bandwidth=draw(st.sampled_from([None, 100, 400])),
                congestion=draw(st.sampled_from([None, 0.0, 0.5, 1.0])),
            )
        )
    uppers = []
    pool = [leaf for leaf, t in leaves if t == 1]
    for j in range(draw(st.integers(0, 2))):
        kids = [leaf for leaf in pool if draw(st.booleans())]
        pool = [leaf for leaf in pool if leaf not in kids]
        extra = free[: draw(st.integers(0, min(1, len(free))))]
        free = free[len(extra) :]
        if kids or extra:
            hns.append(hn(f"s{j}", 3, children=kids, nodes=extra))
            uppers.append(f"s{j}")
    if not hns:
        return None
    c.set_hypernodes(hns)
    fit = np.array([draw(st.integers(0, 4)) for _ in names], dtype=np.int32)
    return c, fit


@settings(max_examples=300)
@given(random_trees(), st.integers(1, 20), st.data())
def test_native_search_equals_reference(case, pods, data):
    if case is None:
        return
    c, fit = case
    tree = reference_tree(c)
    rows = len(tree.tiers)
    hard_mode = data.draw(st.booleans())
    start = data.draw(st.integers(0, rows - 1))
    limit = data.draw(st.integers(start, rows)) if hard_mode else rows
    layers = []
    if data.draw(st.booleans()):
        size = data.draw(st.sampled_from([1, 2, 3]))
        layers.append((size, data.draw(st.integers(0, rows - 1 if not hard_mode else min(limit, rows - 1)))))
        if data.draw(st.booleans()):
            layers.append(
                (size * 2, data.draw(st.integers(layers[0][1], rows - 1 if not hard_mode else min(limit, rows - 1))))
            )
        pods = data.draw(st.integers(1, 4)) * layers[-1][0]
    running = None
    if data.draw(st.booleans()):
        running = np.zeros(c._state.n_slots, dtype=np.int32)
        for s in data.draw(st.lists(st.integers(0, c.n_nodes - 1), max_size=2)):
            running[s] = 1
    weights = data.draw(st.sampled_from([(0.0, 0.0, 0), (1.0, 1.0, 0), (0.5, 2.0, 2)]))
    from vcore._native import _core

    got = _core.topology.place_gang(c._state, fit, pods, start, limit, hard_mode, layers, running, *weights)
    names = c._state.node_names()
    want = ref.place_gang(
        tree,
        {names[s]: int(fit[s]) for s in range(len(names)) if names[s]},
        pods,
        start,
        limit,
        hard_mode,
        layers,
        None if running is None else {names[s]: int(running[s]) for s in range(len(names)) if names[s]},
        *weights,
    )
    assert got["placed"] == want.placed, (got, want)
    assert got["reason"] == want.reason
    if want.placed:
        domain = c.topology.domain_names[got["domain"]] if got["domain"] >= 0 else None
        assert (domain, got["row"]) == (want.domain, want.row)
        assert by_name(c, got["counts"]) == want.counts
        from vcore.topology.constraint import ResolvedConstraint

        rc = ResolvedConstraint(start, limit, hard_mode, tuple(layers), pods)
        assert valid_placement(c.topology, fit, rc, got["counts"], running)


@settings(max_examples=100)
@given(random_trees(), st.data())
def test_native_node_scores_equal_reference(case, data):
    if case is None:
        return
    c, _ = case
    names = [n for n in c._state.node_names()]
    job = np.array([data.draw(st.integers(0, 2)) for _ in names], dtype=np.int32)
    tasks = data.draw(st.integers(0, 6))
    got = node_scores(c, job, job_tasks=tasks, weight=1.5)
    want = ref.node_scores(reference_tree(c), names, dict(zip(names, job.tolist())), tasks, 1.5)
    assert got.tolist() == pytest.approx([want[n] for n in names])


@settings(max_examples=100)
@given(random_trees(), st.data())
def test_native_binpack_scores_equal_reference(case, data):
    if case is None:
        return
    c, _ = case
    names = list(c._state.node_names())
    for i, name in enumerate(names):  # some load per node: 0..8 of its 8 cpus
        for j in range(data.draw(st.integers(0, 8))):
            c.bind(pod(f"load-{i}-{j}"), name)
    request = {"cpu": data.draw(st.integers(0, 3000)), "memory": data.draw(st.integers(0, 2**34))}
    weights = {"cpu": data.draw(st.integers(0, 5)), "memory": data.draw(st.integers(0, 5))}
    fading = data.draw(st.sampled_from([0.0, 0.5, 0.8, 1.0, 2.0]))
    got = binpack_scores(c, request, weights=weights, fading=fading, weight=2)
    alloc = {
        n: {"cpu": int(c.allocatable("cpu")[s]), "memory": int(c.allocatable("memory")[s])} for s, n in enumerate(names)
    }
    used = {
        n: {"cpu": int(c.requested("cpu")[s]), "memory": int(c.requested("memory")[s])} for s, n in enumerate(names)
    }
    resources = [(r, request[r], weights[r]) for r in ("cpu", "memory") if request[r] > 0 and weights[r] > 0]
    want = ref.binpack_scores(reference_tree(c), names, alloc, used, resources, fading, 2)
    assert np.abs(got - np.array([want[n] for n in names])).max(initial=0) <= 1e-9 * 200  # float sums, reordered


def test_binpack_scores_prefer_the_fuller_hypernode():
    c = leaf_spine(spines=1, leaves=2, nodes=2, cpu=4)
    c.bind(pod("a"), "s0-l0-n0")
    c.bind(pod("b"), "s0-l0-n0")
    scores = dict(
        zip(c.node_names, binpack_scores(c, {"cpu": 1000}, weights={"cpu": 1}, fading=0.8, weight=1).tolist())
    )
    # leaf-0-0 would be 3/8 full, leaf-0-1 1/8; the spine, the core and Volcano's virtual cluster-wide HyperNode
    # above them 3/16 for both; tiers 1..4 weigh 1, 0.8, 0.64, 0.512:
    # (0.375 + 1.952 * 0.1875) / 2.952 * 100 = 25.10 and (0.125 + 1.952 * 0.1875) / 2.952 * 100 = 16.63.
    fuller, emptier = (0.375 + 1.952 * 0.1875) / 2.952 * 100, (0.125 + 1.952 * 0.1875) / 2.952 * 100
    assert scores == pytest.approx({"s0-l0-n0": fuller, "s0-l0-n1": fuller, "s0-l1-n0": emptier, "s0-l1-n1": emptier})
    with pytest.raises(ValueError, match="fading"):
        binpack_scores(c, {"cpu": 1}, weights={"cpu": 1}, fading=-1, weight=1)


@pytest.mark.parametrize("top, fading", [(60, 1e6), (2**31 - 1, 0.8), (2**31 - 1, 2.0), (10**9, 1.0), (500, 0.0)])
def test_binpack_tier_weights_of_far_apart_tiers(top, fading):
    # Tiers are any int32 and fading up to 1e6: fading ** (tier - 1) overflows and a sum over every tier number
    # in between would take seconds. Per node: the absent tiers' share (each scores 1) plus each row's share times
    # the fullness of the node's HyperNode of that row, plus the share of Volcano's virtual cluster-wide tier
    # (top + 1) times the cluster's fullness; the shares come from the geometric series.
    c = vcore.Cluster()
    for name in ("n0", "n1"):
        c.add_node(node(name, cpu=4))
    c.set_hypernodes([hn("leaf", 1, nodes=["n0"]), hn("top", top, children=["leaf"])])
    got = binpack_scores(c, {"cpu": 1000}, weights={"cpu": 1}, fading=fading, weight=3).tolist()
    full, cluster = 0.25, 0.125  # n0's HyperNodes would hold 1 of 4 cpus, the cluster 1 of 8; n1 is in none
    share = {t: _tier_share(fading, t, 1, top + 1) for t in (1, top, top + 1)}
    absent = 1 - sum(share.values())
    rows = share[1] + share[top]
    assert got[0] == pytest.approx(300 * (absent + full * rows + cluster * share[top + 1]))
    assert got[1] == pytest.approx(300 * (absent + rows + cluster * share[top + 1]))


def _tier_share(fading: float, tier: int, lo: int, hi: int) -> float:
    """fading ** (tier - 1) over the sum of fading ** (t - 1) for t in lo..hi, in closed form."""
    n = hi - lo + 1
    if fading == 0:
        return float(tier == 1)
    if fading == 1:
        return 1 / n
    if fading < 1:
        return fading ** (tier - lo) * (1 - fading) / (1 - fading**n)
    return (1 / fading) ** (hi - tier) * (1 - 1 / fading) / (1 - (1 / fading) ** n)
