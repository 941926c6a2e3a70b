"""HyperNode regexMatch members: RE2 (Go's regexp) syntax and semantics, linear-time matching outside the native
tree, membership that follows node writes, and the native side refusing results computed against other state."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import re2
from hypothesis import given, settings, strategies as st

import vcore
from topology.trees import hn, node
from vcore._native import _core
from vcore.topology import patterns as P
from vcore.topology.hypernode import hypernode_spec

ROOT = Path(__file__).resolve().parents[2]


def members_of(c: vcore.Cluster) -> dict[str, str | None]:
    """node name -> its lowest domain's name."""
    v = c.topology
    names = c._state.node_names()
    return {names[s]: (v.domain_names[d] if d >= 0 else None) for s, d in enumerate(v.node_leaf) if names[s]}


def cluster(*names: str) -> vcore.Cluster:
    c = vcore.Cluster()
    for n in names:
        c.add_node(node(n))
    return c


# -- catastrophic patterns are linear, in a child process so that a regression hangs or crashes only it ----------
_PRELUDE = """
import vcore
def node(name):
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "1"}}}
def regex(name, pattern):
    return {"metadata": {"name": name}, "spec": {"tier": 1, "members": [
        {"type": "Node", "selector": {"regexMatch": {"pattern": pattern}}}]}}
def leaves(c):
    v, names = c.topology, c._state.node_names()
    return sorted((names[s][:6], v.domain_names[d]) for s, d in enumerate(v.node_leaf) if d >= 0)
c = vcore.Cluster()
"""


def run_isolated(script: str) -> list[str]:
    try:
        run = subprocess.run(
            [sys.executable, "-c", _PRELUDE + textwrap.dedent(script)],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
        )
    except subprocess.TimeoutExpired:
        pytest.fail("matching did not finish: backtracking is back")
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-2000:]}"
    return run.stdout.splitlines()


def test_nested_quantifiers_match_in_linear_time():
    # Before RE2 this backtracked 2**60 ways with the GIL held (2.7 s at 26 characters, doubling with each one).
    out = run_isolated("""
        c.add_node(node("aaaa"))
        c.add_node(node("a" * 60 + "b"))
        c.add_hypernode(regex("nested", "(a+)+$"))  # matches aaaa only
        c.add_node(node("a" * 200 + "c"))  # a node write matches its name against the patterns in use
        c.add_node(node("a" * 250))
        print(leaves(c))
    """)
    assert out == [str([("aaaa", "nested"), ("aaaaaa", "nested")])]


def test_long_names_never_reach_a_recursive_matcher():
    # Before, std::regex recursed once per character: a 12,000-character name crashed the interpreter (SIGSEGV).
    # Now such a name is refused as Kubernetes refuses it, and RE2 does not recurse on the names it does match.
    out = run_isolated("""
        c.add_node(node("ab"))
        c.add_hypernode(regex("alternation", "^(a|b)*$"))
        try:
            c.add_node(node("a" * 12000))
        except ValueError as e:
            print("refused:", str(e).split("metadata.name: ")[1])
        c.add_node(node("a" * 253))
        print(leaves(c))
    """)
    assert out == [
        "refused: must be at most 253 characters, got 12000",
        str([("aaaaaa", "alternation"), ("ab", "alternation")]),
    ]


# -- RE2 syntax and Go's MatchString semantics ---------------------------------------------------------------
GO_SYNTAX = [
    ("case-insensitive flag", "(?i)N0", ["n0"]),
    ("named group", "(?P<rack>n[01])$", ["n0", "n1"]),
    ("unicode class", r"^\pL\d$", ["n0", "n1", "n2"]),
    ("ascii class", "^n[[:digit:]]{2}$", ["n10"]),
    ("quoted literal", r"\Qn1\E", ["n1", "n10"]),
    ("unanchored search", "1", ["n1", "n10"]),
    ("end of text only", "0$", ["n0", "n10"]),
    ("word boundary", r"\bn1\b", ["n1"]),
    ("non-greedy flag", "(?U)n.+", ["n0", "n1", "n2", "n10"]),
]


@pytest.mark.parametrize("pattern, matched", [g[1:] for g in GO_SYNTAX], ids=[g[0] for g in GO_SYNTAX])
def test_patterns_are_go_regexp_searched_against_node_names(pattern, matched):
    c = cluster("n0", "n1", "n2", "n10")
    c.add_hypernode(hn("rx", 1, regex=pattern))
    assert sorted(n for n, d in members_of(c).items() if d == "rx") == sorted(matched)


NOT_RE2 = [
    ("backreference", r"(n)\1", r"invalid escape sequence: \1"),
    ("lookahead", "n(?=0)", "invalid perl operator: (?="),
    ("negative lookbehind", "(?<!x)n", "invalid perl operator: (?<!"),
    ("possessive", "n++", "bad repetition operator: ++"),
    ("atomic group", "(?>n)", "invalid perl operator: (?>"),
    ("unbalanced", "(n", "missing ): (n"),
    ("python end anchor", r"n\Z", r"invalid escape sequence: \Z"),
    ("repeat over 1000", "n{1001}", "invalid repetition size: {1001}"),
]


@pytest.mark.parametrize("pattern, reason", [n[1:] for n in NOT_RE2], ids=[n[0] for n in NOT_RE2])
def test_a_pattern_go_would_refuse_is_a_topology_error_naming_the_field(pattern, reason):
    c = cluster("n0")
    c.add_hypernode(hn("ok", 1, nodes=["n0"]))
    before = (members_of(c), c.topology.tiers)
    bad = hn("leaf", 2, children=["ok"], regex=pattern)
    with pytest.raises(vcore.TopologyError) as info:
        c.add_hypernode(bad)
    assert str(info.value) == (
        f"HyperNode leaf: spec.members[1].selector.regexMatch.pattern: {pattern!r} is not a "
        f"valid RE2 regular expression (Go's regexp syntax): {reason}"
    )
    with pytest.raises(vcore.TopologyError, match="regexMatch.pattern"):
        c.set_hypernodes([hn("ok", 1, nodes=["n0"]), bad])
    assert (members_of(c), c.topology.tiers) == before


# -- membership follows node writes ---------------------------------------------------------------------------
def test_nodes_join_and_leave_regex_hypernodes_as_they_are_written():
    c = cluster("gpu-0", "cpu-0")
    c.add_hypernode(hn("gpus", 1, regex="^gpu-"))  # the cluster's copy of the pattern table is now stale
    c.add_node(node("gpu-1"))  # ... so this write is refused natively once and matched again
    c.add_node(node("cpu-1"))
    c.add_hypernode(hn("ones", 1, regex="^cpu-1$"))
    assert members_of(c) == {"gpu-0": "gpus", "cpu-0": None, "gpu-1": "gpus", "cpu-1": "ones"}
    c.update_node(node("gpu-1", cpu=16))  # an update keeps the memberships its name gives it
    c.remove_node("gpu-0")
    c.add_node(node("gpu-2"))  # reuses gpu-0's slot
    assert members_of(c) == {"gpu-2": "gpus", "cpu-0": None, "gpu-1": "gpus", "cpu-1": "ones"}
    c.update_hypernode(hn("gpus", 1, regex="^gpu-2$"))
    assert members_of(c)["gpu-1"] is None and members_of(c)["gpu-2"] == "gpus"
    c.remove_hypernode("gpus")
    c.remove_hypernode("ones")
    assert _core.topology.patterns(c._state)[1] == []
    c.add_node(node("gpu-3"))
    assert set(members_of(c).values()) == {None}


def test_a_node_in_two_regex_hypernodes_of_one_tier_is_refused_and_changes_nothing():
    c = cluster("n0", "n9", "n1")
    c.add_hypernode(hn("zeros", 1, regex="^n0"))
    c.add_hypernode(hn("nines", 1, regex="9$"))
    with pytest.raises(ValueError, match="^node n09: would be in HyperNodes zeros and nines of tier row 0"):
        c.add_node(node("n09"))
    assert not c.has_node("n09") and members_of(c) == {"n0": "zeros", "n9": "nines", "n1": None}


# -- the native side refuses results computed against other state --------------------------------------------
def test_regex_slots_computed_at_another_membership_are_stale():
    c = cluster("n0", "n1")
    specs, membership = P.with_slots(c._state, [hypernode_spec(hn("rx", 1, regex="^n"))])
    assert specs[0]["members"][0][4] == [0, 1]
    c.add_node(node("n2"))  # n2 would be missed
    with pytest.raises(_core.StaleError):
        _core.topology.add_hypernode(c._state, specs[0], membership)
    with pytest.raises(_core.StaleError):
        _core.topology.set_hypernodes(c._state, specs, membership)
    assert c.topology.tiers == []
    c.add_hypernode(hn("rx", 1, regex="^n"))  # through vcore: computed at the current membership
    assert members_of(c) == {"n0": "rx", "n1": "rx", "n2": "rx"}


def test_node_matches_under_another_pattern_table_are_stale_and_write_nothing():
    c = cluster("n0")
    c.add_hypernode(hn("rx", 1, regex="^n"))
    version, patterns = _core.topology.patterns(c._state)
    assert patterns == ["^n"]
    spec = {"name": "n1", "allocatable": {"cpu": 1000}}
    with pytest.raises(_core.StaleError):
        c._state.add_node({**spec, "pattern_version": version - 1, "pattern_ids": [0]})
    with pytest.raises(ValueError, match="pattern id 1 out of range"):
        c._state.add_node({**spec, "pattern_version": version, "pattern_ids": [1]})
    assert not c.has_node("n1")
    c._state.add_node({**spec, "pattern_version": version, "pattern_ids": [0]})
    assert members_of(c)["n1"] == "rx"


def test_regex_members_need_the_membership_they_were_matched_at():
    c = cluster("n0")
    spec = {"name": "rx", "tier": 1, "members": [("Node", "regexMatch", "^n", [], [0])]}
    with pytest.raises(ValueError, match="HyperNode rx: regexMatch members need the node membership"):
        _core.topology.add_hypernode(c._state, spec)


# -- one pass for many patterns equals one search per pattern --------------------------------------------------
_ATOMS = ["n", "0", "1", "-", ".", "[0-9]", r"\d", "a", "(?i)N", "x|y", "^", "$", r"\b", ".*", "(n|0)+", "[^-]"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(
        st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=4).map("".join), min_size=1, max_size=8, unique=True
    ),
    st.lists(st.text("n01-.ax", min_size=1, max_size=12), min_size=1, max_size=10),
)
def test_pattern_set_equals_one_search_per_pattern(patterns, names):
    valid = [p for p in patterns if _compiles(p)]
    matcher = P.PatternSet(valid)
    for name in names:
        assert matcher.ids(name) == [i for i, p in enumerate(valid) if re2.search(p, name) is not None]


def _compiles(pattern: str) -> bool:
    try:
        P.compile_pattern(pattern)
    except re2.error:
        return False
    return True
