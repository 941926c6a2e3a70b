"""The topology model: HyperNode trees (exact, regex and label members), label levels, membership that follows node
changes, the read-only node_topo view, and invalid trees rejected with the HyperNode named and nothing changed."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import vcore
from topology import reference as ref
from topology.trees import hn, leaf_spine, node
from vcore.topology.hypernode import hypernode_spec


def columns(cluster: vcore.Cluster) -> dict[str, list[str | None]]:
    """node name -> domain name per row, from the native view."""
    v = cluster.topology
    names = cluster._state.node_names()
    topo = v.node_topo
    return {
        names[s]: [v.domain_names[d] if d >= 0 else None for d in topo[:, s]] for s in range(topo.shape[1]) if names[s]
    }


def snapshot(cluster: vcore.Cluster):
    v = cluster.topology
    return (
        columns(cluster),
        v.tiers,
        v.tier_names,
        v.domain_names,
        v.domain_parent.tolist(),
        cluster.allocatable_matrix.copy().tolist(),
        cluster.node_names,
    )


def test_leaf_spine_tree():
    c = leaf_spine(spines=2, leaves=2, nodes=2)
    v = c.topology
    assert v.tiers == [1, 2, 3] and v.tier_names == ["leaf", "spine", "core"]
    assert v.node_topo.shape == (3, c.n_nodes) and v.node_topo.dtype == np.int32
    cols = columns(c)
    assert cols["s1-l0-n1"] == ["leaf-1-0", "spine-1", "core"]
    parent = {v.domain_names[d]: (v.domain_names[p] if p >= 0 else None) for d, p in enumerate(v.domain_parent)}
    assert parent["leaf-0-1"] == "spine-0" and parent["spine-1"] == "core" and parent["core"] is None
    assert v.domain_tier[v.domain_index("spine-0")] == 2
    assert v.node_leaf[c.node_index("s0-l1-n0")] == v.domain_index("leaf-0-1")


def test_label_and_regex_membership_follow_node_changes():
    c = vcore.Cluster()
    for i in range(4):
        c.add_node(node(f"gpu-{i}", labels={"rack": "a" if i < 2 else "b"}))
    c.add_node(node("cpu-0"))
    c.add_hypernode(hn("rack-a", 1, labels={"rack": "a"}))
    c.add_hypernode(hn("rack-b", 1, labels={"rack": "b"}))
    c.add_hypernode(hn("cpus", 1, regex="^cpu-"))
    c.add_hypernode(hn("zone", 2, children=["rack-a", "rack-b", "cpus"]))
    view = c.topology.node_topo  # a live view: later node writes show through
    assert columns(c)["gpu-3"] == ["rack-b", "zone"]
    c.add_node(node("gpu-9", labels={"rack": "a"}))  # a new node joins by its labels
    c.add_node(node("cpu-7"))  # ... and by its name
    assert columns(c)["gpu-9"] == ["rack-a", "zone"] and columns(c)["cpu-7"] == ["cpus", "zone"]
    c.update_node(node("gpu-0", labels={"rack": "b"}))  # relabeled: moves
    assert columns(c)["gpu-0"] == ["rack-b", "zone"]
    c.update_node(node("gpu-1", labels={}))  # no longer matched: out of the tree
    assert columns(c)["gpu-1"] == [None, None]
    assert view[0, c.node_index("gpu-0")] == c.topology.domain_index("rack-b")
    slot = c.node_index("gpu-3")
    c.remove_node("gpu-3")
    assert c.topology.node_topo[:, slot].tolist() == [-1, -1]


def test_node_write_that_would_overlap_is_rejected_and_changes_nothing():
    c = vcore.Cluster()
    c.add_node(node("n0", labels={"rack": "a", "row": "1"}))
    c.add_node(node("n1", labels={"rack": "b", "row": "2"}))
    c.add_hypernode(hn("by-rack", 1, labels={"rack": "a"}))
    c.add_hypernode(hn("by-row", 1, labels={"row": "2"}))
    before = snapshot(c)
    with pytest.raises(ValueError, match=r"^node n0: would be in HyperNodes by-rack and by-row of tier row 0"):
        c.update_node(node("n0", cpu=32, labels={"rack": "a", "row": "2"}))
    with pytest.raises(ValueError, match="by-rack"):
        c.add_node(node("n2", labels={"rack": "a", "row": "2"}))
    assert snapshot(c) == before and not c.has_node("n2")


def test_label_levels():
    c = vcore.Cluster()
    nodes = {"n0": ("z1", "b1", "r1"), "n1": ("z1", "b1", "r2"), "n2": ("z1", "b2", "r1"), "n3": ("z2", "b1", "r1")}
    for name, (z, b, r) in nodes.items():
        c.add_node(node(name, labels={"zone": z, "block": b, "rack": r}))
    c.add_node(node("loose", labels={"zone": "z1"}))  # lacks the lower levels: not in the topology (as Kueue)
    c.set_topology_levels(["zone", "block", "rack"])
    v = c.topology
    assert v.tiers == [1, 2, 3] and v.tier_names == ["rack", "block", "zone"] and v.levels == ["zone", "block", "rack"]
    cols = columns(c)
    assert cols["n0"] == ["z1/b1/r1", "z1/b1", "z1"]
    assert cols["n2"][0] == "z1/b2/r1" != cols["n0"][0]  # the same rack value under another block is another rack
    assert cols["n3"] == ["z2/b1/r1", "z2/b1", "z2"] and cols["loose"] == [None, None, None]
    c.add_node(node("n4", labels={"zone": "z3", "block": "b9", "rack": "r9"}))  # new domains on the fly
    assert columns(c)["n4"] == ["z3/b9/r9", "z3/b9", "z3"]
    c.update_node(node("n0", labels={"zone": "z2", "block": "b1", "rack": "r1"}))
    assert columns(c)["n0"] == cols["n3"]
    ref_tree = ref.tree_from_levels(
        ["zone", "block", "rack"], {n: {"zone": z, "block": b, "rack": r} for n, (z, b, r) in nodes.items()}
    )
    assert columns(c)["n1"] == ref_tree.column["n1"]
    c.set_topology_levels([])
    assert c.topology.tiers == [] and c.topology.node_topo.shape == (0, c._state.n_slots)


def test_set_hypernodes_any_order_equals_sequential_adds():
    a = leaf_spine(spines=2, leaves=3, nodes=2)
    b = vcore.Cluster()
    for name in a.node_names:
        b.add_node(node(name))
    hns = [
        hn(f"leaf-{i}-{j}", 1, nodes=[f"s{i}-l{j}-n{k}" for k in range(2)], tier_name="leaf")
        for i in range(2)
        for j in range(3)
    ]
    hns += [hn(f"spine-{i}", 2, children=[f"leaf-{i}-{j}" for j in range(3)], tier_name="spine") for i in range(2)]
    hns.append(hn("core", 3, children=["spine-0", "spine-1"], tier_name="core"))
    for h in hns:  # bottom-up, one at a time
        b.add_hypernode(h)
    assert columns(a) == columns(b)


def test_update_and_remove_hypernode():
    c = leaf_spine(spines=1, leaves=2, nodes=2, core=False)
    # Move a node from leaf-0-0 to leaf-0-1 (two updates: never in two leaves at once).
    c.update_hypernode(hn("leaf-0-0", 1, nodes=["s0-l0-n0"], tier_name="leaf"))
    c.update_hypernode(
        hn("leaf-0-1", 1, nodes=["s0-l1-n0", "s0-l1-n1", "s0-l0-n1"], tier_name="leaf", bandwidth=400, congestion=0.5)
    )
    cols = columns(c)
    assert cols["s0-l0-n1"] == ["leaf-0-1", "spine-0"]
    v = c.topology
    d = v.domain_index("leaf-0-1")
    assert v.domain_bandwidth_gbps[d] == 400 and v.domain_congestion[d] == 0.5
    c.remove_hypernode("spine-0")  # a root: fine; its leaves become roots
    assert c.topology.tiers == [1] and columns(c)["s0-l1-n0"] == ["leaf-0-1"]
    c.remove_hypernode(hn("leaf-0-0", 1))
    assert columns(c)["s0-l0-n0"] == [None]


def _base() -> vcore.Cluster:
    c = vcore.Cluster()
    for i in range(4):
        c.add_node(node(f"n{i}", labels={"rack": "a" if i < 2 else "b"}))
    c.add_hypernode(hn("leaf-a", 1, nodes=["n0", "n1"], tier_name="leaf"))
    c.add_hypernode(hn("leaf-b", 1, nodes=["n2", "n3"], tier_name="leaf"))
    c.add_hypernode(hn("spine", 2, children=["leaf-a", "leaf-b"], tier_name="spine"))
    return c


BAD = [
    ("already-exists", lambda c: c.add_hypernode(hn("leaf-a", 1, nodes=["n0"])), "HyperNode leaf-a: already exists"),
    ("node-in-two-leaves", lambda c: c.add_hypernode(hn("leaf-x", 1, nodes=["n1"])), "leaf-a and leaf-x"),
    (
        "two-parents",
        lambda c: c.add_hypernode(hn("spine2", 2, children=["leaf-a"])),
        "HyperNode leaf-a: is a member of both HyperNode spine and HyperNode spine2",
    ),
    ("cycle", lambda c: c.update_hypernode(hn("leaf-a", 1, nodes=["n0", "n1"], children=["spine"])), "cycle"),
    ("self-member", lambda c: c.add_hypernode(hn("me", 3, children=["me"])), "HyperNode me: lists itself"),
    (
        "unknown-member-type",
        lambda c: c.add_hypernode(
            {
                "metadata": {"name": "bad"},
                "spec": {"tier": 1, "members": [{"type": "Rack", "selector": {"exactMatch": {"name": "n0"}}}]},
            }
        ),
        "HyperNode bad: spec.members[0].type: must be one of Node, HyperNode; got 'Rack'",
    ),
    (
        "child-tier-not-lower",
        lambda c: c.add_hypernode(hn("flat", 1, children=["spine"])),
        "HyperNode flat (tier 1): member HyperNode spine has tier 2",
    ),
    (
        "tier-two-names",
        lambda c: c.add_hypernode(hn("top", 3, children=["spine"], tier_name="leaf")),
        "tierName 'leaf' is tier 1 in HyperNode",
    ),
    (
        "tier-renamed",
        lambda c: c.add_hypernode(hn("top", 2, nodes=[], children=[], regex="^n0$", tier_name="block")),
        "HyperNode top: spec.tierName 'block' but HyperNode spine names tier 2 'spine'",
    ),
    (
        "not-nested",
        lambda c: c.update_hypernode(hn("spine", 2, children=["leaf-b"], nodes=["n0"], tier_name="spine")),
        "n0",
    ),
    (
        "negative-tier",
        lambda c: c.add_hypernode(hn("neg", -1, nodes=["n0"])),
        "HyperNode neg: spec.tier: must be in [0, 2147483647], got -1",
    ),
    (
        "tier-not-int",
        lambda c: c.add_hypernode(hn("neg", 1.5, nodes=["n0"])),
        "HyperNode neg: spec.tier: must be an integer",
    ),
    (
        "no-members",
        lambda c: c.add_hypernode({"metadata": {"name": "empty"}, "spec": {"tier": 1, "members": []}}),
        "HyperNode empty: spec.members: must have at least 1 item",
    ),
    (
        "two-selectors",
        lambda c: c.add_hypernode(
            {
                "metadata": {"name": "two"},
                "spec": {
                    "tier": 1,
                    "members": [
                        {"type": "Node", "selector": {"exactMatch": {"name": "n0"}, "regexMatch": {"pattern": "n"}}}
                    ],
                },
            }
        ),
        "HyperNode two: spec.members[0].selector: exactly one of",
    ),
    (
        "hypernode-by-regex",
        lambda c: c.add_hypernode(
            {
                "metadata": {"name": "rx"},
                "spec": {
                    "tier": 3,
                    "members": [{"type": "HyperNode", "selector": {"regexMatch": {"pattern": "spine"}}}],
                },
            }
        ),
        "exactMatch only",
    ),
    (
        "bad-regex",
        lambda c: c.add_hypernode(hn("rx", 1, regex="(")),
        "HyperNode rx: spec.members[0].selector.regexMatch.pattern: '(' is not a valid RE2 regular expression",
    ),
    (
        "bad-congestion",
        lambda c: c.update_hypernode(hn("leaf-a", 1, nodes=["n0", "n1"], congestion=1.5)),
        "HyperNode leaf-a: metadata.annotations[vcore.io/congestion]: must be in [0, 1]",
    ),
    (
        "bad-bandwidth",
        lambda c: c.update_hypernode(
            {
                **hn("leaf-a", 1, nodes=["n0", "n1"]),
                "metadata": {"name": "leaf-a", "annotations": {"vcore.io/bandwidth-gbps": "fast"}},
            }
        ),
        "vcore.io/bandwidth-gbps]: must be a number",
    ),
    ("levels-with-hypernodes", lambda c: c.set_topology_levels(["rack"]), "has HyperNodes"),
    (
        "set-duplicates",
        lambda c: c.set_hypernodes([hn("x", 1, nodes=["n0"]), hn("x", 1, nodes=["n1"])]),
        "HyperNode x: listed twice",
    ),
    (
        "tier-not-ascii-digits",
        lambda c: c.add_hypernode(hn("sup", "²", nodes=["n0"])),
        "HyperNode sup: spec.tier: must be an integer, got a string '²'",
    ),
    (
        "tier-above-int32",
        lambda c: c.add_hypernode(hn("big", 2**31, nodes=["n0"])),
        "HyperNode big: spec.tier: must be in [0, 2147483647], got 2147483648",
    ),
    (
        "name-not-dns",
        lambda c: c.add_hypernode(hn("Leaf_A", 1, nodes=["n0"])),
        "HyperNode Leaf_A: metadata.name: 'Leaf_A' is not a DNS-1123 subdomain",
    ),
    (
        "name-too-long",
        lambda c: c.add_hypernode(hn("a" * 300, 1, nodes=["n0"])),
        "metadata.name: must be at most 253 characters, got 300",
    ),
    (
        "exact-name-not-dns",
        lambda c: c.add_hypernode(hn("x", 1, nodes=["N0"])),
        "HyperNode x: spec.members[0].selector.exactMatch.name: 'N0' is not a DNS-1123 subdomain",
    ),
    (
        "label-key-not-a-key",
        lambda c: c.add_hypernode(hn("x", 1, labels={"not a key!": "a"})),
        "HyperNode x: spec.members[0].selector.labelMatch.matchLabels.not a key!: "
        "'not a key!' is not a valid label key",
    ),
    (
        "in-without-values",
        lambda c: c.add_hypernode(
            {
                "metadata": {"name": "x"},
                "spec": {
                    "tier": 1,
                    "members": [
                        {
                            "type": "Node",
                            "selector": {"labelMatch": {"matchExpressions": [{"key": "k", "operator": "In"}]}},
                        }
                    ],
                },
            }
        ),
        "HyperNode x: spec.members[0].selector.labelMatch.matchExpressions[0].values: In needs at least one value",
    ),
    (
        "tier-name-not-text",
        lambda c: c.add_hypernode(hn("x", 1, nodes=["n0"], tier_name="\ud800")),
        "HyperNode x: spec.tierName: '\\ud800' is not valid Unicode text",
    ),
    (
        "member-not-mapping",
        lambda c: c.add_hypernode({"metadata": {"name": "x"}, "spec": {"tier": 1, "members": [7]}}),
        "HyperNode x: spec.members[0]: must be a mapping, got an integer",
    ),
    (
        "levels-not-label-keys",
        lambda c: c.set_topology_levels(["not a key!"]),
        "topology levels[0]: 'not a key!' is not a valid label key",
    ),
]


def test_a_member_hypernode_added_after_its_parent_joins_it_and_may_go_first():
    """Volcano's cache sets a missing member's parent first (HyperNodesInfo.addChild): a HyperNode may list a member
    HyperNode not there yet, which joins it when it is added."""
    c = _base()
    c.add_hypernode(hn("top", 3, children=["spine", "spine-2"]))
    assert columns(c)["n0"] == ["leaf-a", "spine", "top"]
    c.add_node(node("n4"))
    c.add_hypernode(hn("leaf-c", 1, nodes=["n4"], tier_name="leaf"))
    assert columns(c)["n4"] == ["leaf-c", None, None]
    c.add_hypernode(hn("spine-2", 2, children=["leaf-c"], tier_name="spine"))
    assert columns(c)["n4"] == ["leaf-c", "spine-2", "top"]
    assert columns(c)["n0"] == ["leaf-a", "spine", "top"]
    # A member may go first: its parent keeps listing it, its own members are roots until it comes back.
    c.remove_hypernode("spine-2")
    assert columns(c)["n4"] == ["leaf-c", None, None] and columns(c)["n0"] == ["leaf-a", "spine", "top"]
    c.add_hypernode(hn("spine-2", 2, children=["leaf-c"], tier_name="spine"))
    assert columns(c)["n4"] == ["leaf-c", "spine-2", "top"]


@pytest.mark.parametrize(
    "member",
    [{"nodes": ["zz0"]}, {"regex": "^zz"}, {"labels": {"rack": "zz"}}],
    ids=["exactMatch", "regexMatch", "labelMatch"],
)
def test_a_member_matching_no_node_leaves_the_hypernode_empty_until_the_node_comes(member):
    """Volcano's member selection: a member that matches no node is no error; the HyperNode is kept without nodes,
    and a node added later that the member matches joins it."""
    c = _base()
    c.add_hypernode(hn("ghost", 1, **member))
    assert "ghost" in c.topology.domain_names
    assert "ghost" not in {leaf for leaf, *_ in columns(c).values()}
    c.add_node(node("zz0", labels={"rack": "zz"}))
    assert columns(c)["zz0"] == ["ghost", None]  # a tier-1 root: no spine above it
    assert columns(c)["n0"] == ["leaf-a", "spine"]  # the rest of the tree is as it was


@pytest.mark.parametrize("action, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_invalid_tree_is_rejected_naming_the_hypernode_and_changes_nothing(action, message):
    c = _base()
    before = snapshot(c)
    with pytest.raises(vcore.TopologyError) as info:
        action(c)
    assert message in str(info.value)
    assert snapshot(c) == before


def test_not_found_errors():
    c = _base()
    with pytest.raises(vcore.HyperNodeNotFoundError, match="HyperNode nope: not found"):
        c.update_hypernode(hn("nope", 1, nodes=["n0"]))
    with pytest.raises(KeyError):
        c.remove_hypernode("nope")


def test_hypernodes_while_levels_are_set_are_rejected():
    c = vcore.Cluster()
    c.add_node(node("n0", labels={"rack": "a"}))
    c.set_topology_levels(["rack"])
    with pytest.raises(vcore.TopologyError, match="label levels"):
        c.add_hypernode(hn("leaf", 1, nodes=["n0"]))
    with pytest.raises(vcore.TopologyError, match="topology levels\\[1\\]"):
        c.set_topology_levels(["rack", ""])
    with pytest.raises(TypeError):
        c.set_topology_levels("rack")


def test_legacy_string_tier_and_selector_type_are_read():
    c = vcore.Cluster()
    c.add_node(node("n0"))
    c.add_hypernode(
        {
            "metadata": {"name": "old"},
            "spec": {
                "tier": "1",
                "members": [{"type": "Node", "selector": {"type": "Exact", "exactMatch": {"name": "n0"}}}],
            },
        }
    )
    assert c.topology.tiers == [1]


def test_node_topo_view_is_read_only_and_keeps_its_buffer():
    c = leaf_spine(spines=1, leaves=1, nodes=2, core=False)
    view = c.topology.node_topo
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0, 0] = 5
    del c
    assert view.tolist() == [[0, 0], [1, 1]]


# -- the native tree equals the reference on random HyperNode sets -------------------------------------------
@st.composite
def hypernode_sets(draw):
    n_nodes = draw(st.integers(1, 8))
    nodes = {f"n{i}": {"k": draw(st.sampled_from(["a", "b", "c"]))} for i in range(n_nodes)}
    n_hn = draw(st.integers(1, 7))
    hns = []
    for h in range(n_hn):
        tier = draw(st.integers(1, 3))
        kind = draw(st.sampled_from(["exact", "regex", "labels", "children"]))
        if kind == "exact":
            members = [hn(f"h{h}", tier, nodes=draw(st.lists(st.sampled_from(list(nodes)), min_size=1, max_size=3)))]
        elif kind == "regex":
            members = [hn(f"h{h}", tier, regex=draw(st.sampled_from(["^n[0-2]$", "^n[3-9]$", "1", "^n"])))]
        elif kind == "labels":
            members = [hn(f"h{h}", tier, labels={"k": draw(st.sampled_from(["a", "b", "c"]))})]
        else:
            kids = draw(st.lists(st.sampled_from([f"h{i}" for i in range(n_hn) if i != h] or ["h0"]), max_size=2))
            members = [hn(f"h{h}", tier, children=kids, nodes=draw(st.lists(st.sampled_from(list(nodes)), max_size=1)))]
        hns.extend(members)
    return nodes, hns


@settings(max_examples=150)
@given(hypernode_sets())
def test_native_tree_equals_reference(case):
    nodes, hns = case
    c = vcore.Cluster()
    for name, labels in nodes.items():
        c.add_node(node(name, labels=labels))
    specs = []
    for h in hns:
        if not h["spec"]["members"]:
            return
        specs.append(hypernode_spec(h))
    try:
        expected = ref.tree_from_hypernodes(copy.deepcopy(specs), nodes)
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(vcore.TopologyError):
            c.set_hypernodes(hns)
        assert c.topology.tiers == []
        return
    c.set_hypernodes(hns)
    assert c.topology.tiers == expected.tiers
    assert columns(c) == expected.column
