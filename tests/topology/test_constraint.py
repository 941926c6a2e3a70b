"""Constraints: Volcano PodGroup networkTopology / subGroupPolicy and Kueue TAS annotations onto one type, their
resolution against a tree, the profile arguments, and bad input named by owner and field."""

from __future__ import annotations

import re

import pytest

import vcore
from topology.trees import hn, leaf_spine, node
from vcore.topology import (
    SubGroup,
    TierRef,
    TopologyConstraint,
    TopologyPlacementArgs,
    kueue_constraint,
    parse_topology_args,
    podgroup_topology,
)


def pg(spec: dict, name: str = "train") -> dict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
    }


VOLCANO = [
    (
        "hard-tier",
        {"networkTopology": {"mode": "hard", "highestTierAllowed": 2}},
        TopologyConstraint("hard", TierRef(tier=2, above_is_cluster=True), owner="PodGroup ml/train"),
    ),
    (
        "hard-by-default",
        {"networkTopology": {"highestTierAllowed": 1}},
        TopologyConstraint("hard", TierRef(tier=1, above_is_cluster=True), owner="PodGroup ml/train"),
    ),
    (
        "hard-tier-name",
        {"networkTopology": {"mode": "hard", "highestTierName": "spine"}},
        TopologyConstraint("hard", TierRef(name="spine"), owner="PodGroup ml/train"),
    ),
    (
        "hard-without-a-tier-is-none",
        {"networkTopology": {"mode": "hard"}},
        TopologyConstraint("none", owner="PodGroup ml/train"),
    ),
    (
        "soft",
        {"networkTopology": {"mode": "soft", "highestTierAllowed": 1}},
        TopologyConstraint("soft", owner="PodGroup ml/train"),
    ),
    ("no-topology", {"minMember": 4}, TopologyConstraint("none", owner="PodGroup ml/train")),
]


@pytest.mark.parametrize("spec, expected", [v[1:] for v in VOLCANO], ids=[v[0] for v in VOLCANO])
def test_volcano_podgroup(spec, expected):
    assert podgroup_topology(pg(spec)).constraint == expected


def test_volcano_subgroup_policy():
    topo = podgroup_topology(
        pg(
            {
                "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
                "subGroupPolicy": [
                    {
                        "name": "decode",
                        "subGroupSize": 4,
                        "minSubGroups": 2,
                        "matchLabelKeys": ["volcano.sh/partition"],
                        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                    },
                    {"name": "prefill", "labelSelector": {"matchLabels": {"role": "prefill"}}},
                    {"name": "near", "subGroupSize": 2, "networkTopology": {"mode": "soft"}},
                ],
            }
        )
    )
    decode, prefill, near = topo.policies
    assert decode == SubGroup(
        size=4,
        limit=TierRef(tier=1, above_is_cluster=True),
        name="decode",
        min_sub_groups=2,
        match_label_keys=("volcano.sh/partition",),
    )
    assert near.limit is None  # soft: bounded by the job's own tier (Volcano v1.14), no layer of its own
    assert (
        prefill.limit is None
        and prefill.size is None
        and prefill.label_selector == {"matchLabels": {"role": "prefill"}}
    )
    assert topo.constraint.with_subgroups(decode).subgroups == (decode,)


BAD_VOLCANO = [
    (
        "both-tier-fields",
        {"networkTopology": {"highestTierAllowed": 1, "highestTierName": "leaf"}},
        "PodGroup ml/train: spec.networkTopology: highestTierAllowed and highestTierName cannot be set together",
    ),
    (
        "unknown-field",
        {"networkTopology": {"mode": "hard", "tier": 1}},
        "PodGroup ml/train: spec.networkTopology.tier: unknown key",
    ),
    (
        "bad-mode",
        {"networkTopology": {"mode": "strict"}},
        "spec.networkTopology.mode: must be one of hard, soft; got 'strict'",
    ),
    (
        "negative-tier",
        {"networkTopology": {"highestTierAllowed": -1}},
        "highestTierAllowed: must be in [0, 2147483647], got -1",
    ),
    (
        "tier-not-int",
        {"networkTopology": {"highestTierAllowed": "2"}},
        "highestTierAllowed: must be an integer, got a string '2'",
    ),
    (
        "subgroup-size-zero",
        {"subGroupPolicy": [{"subGroupSize": 0}]},
        "spec.subGroupPolicy[0].subGroupSize: must be in [1, 2147483647], got 0",
    ),
    ("subgroup-unknown-field", {"subGroupPolicy": [{"size": 2}]}, "spec.subGroupPolicy[0].size: unknown key"),
]


@pytest.mark.parametrize("spec, message", [b[1:] for b in BAD_VOLCANO], ids=[b[0] for b in BAD_VOLCANO])
def test_bad_podgroup(spec, message):
    with pytest.raises(vcore.TopologyError) as info:
        podgroup_topology(pg(spec))
    assert message in str(info.value)


R, P, U = (
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-preferred-topology",
    "kueue.x-k8s.io/podset-unconstrained-topology",
)
S, Z, L = (
    "kueue.x-k8s.io/podset-slice-required-topology",
    "kueue.x-k8s.io/podset-slice-size",
    "kueue.x-k8s.io/podset-slice-required-topology-constraints",
)

KUEUE = [
    ("required", {R: "rack"}, TopologyConstraint("hard", TierRef(name="rack"), TierRef(name="rack"), owner="t")),
    ("preferred", {P: "rack"}, TopologyConstraint("soft", None, TierRef(name="rack"), owner="t")),
    ("unconstrained", {U: "true"}, TopologyConstraint("none", owner="t")),
    ("none", {}, TopologyConstraint("none", owner="t")),
    (
        "required-with-slices",
        {R: "block", S: "rack", Z: "4"},
        TopologyConstraint(
            "hard",
            TierRef(name="block"),
            TierRef(name="block"),
            (SubGroup(size=4, limit=TierRef(name="rack")),),
            owner="t",
        ),
    ),
    (
        "slices-only",
        {S: "rack", Z: 8},
        TopologyConstraint("none", subgroups=(SubGroup(8, TierRef(name="rack")),), owner="t"),
    ),
    (
        "multi-layer",
        {R: "dc", L: '[{"topology": "block", "size": "32"}, {"topology": "rack", "size": "16"}]'},
        TopologyConstraint(
            "hard",
            TierRef(name="dc"),
            TierRef(name="dc"),
            (SubGroup(32, TierRef(name="block")), SubGroup(16, TierRef(name="rack"))),
            owner="t",
        ),
    ),
]


@pytest.mark.parametrize("annotations, expected", [k[1:] for k in KUEUE], ids=[k[0] for k in KUEUE])
def test_kueue_annotations(annotations, expected):
    assert kueue_constraint(annotations, owner="t") == expected


def test_kueue_reads_a_pod_template():
    template = {"metadata": {"name": "worker", "annotations": {R: "rack"}}, "spec": {}}
    assert kueue_constraint(template).owner == "pod template worker"
    job_template = {"template": template}
    assert kueue_constraint(job_template).mode == "hard"


BAD_KUEUE = [
    ("required-and-preferred", {R: "rack", P: "block"}, "are mutually exclusive"),
    ("slice-without-size", {R: "block", S: "rack"}, f"annotation {S} needs {Z}"),
    ("size-without-slice", {R: "block", Z: "4"}, f"annotation {Z} needs {S}"),
    ("size-zero", {S: "rack", Z: "0"}, f"annotation {Z}: must be in [1, 2147483647], got 0"),
    ("size-text", {S: "rack", Z: "four"}, f"annotation {Z}: must be an integer, got a string 'four'"),
    ("layers-and-slice", {L: '[{"topology": "rack", "size": "4"}]', S: "rack", Z: "4"}, "excludes"),
    ("layers-not-json", {L: "[{"}, "not valid JSON"),
    (
        "layers-not-dividing",
        {L: '[{"topology": "block", "size": "6"}, {"topology": "rack", "size": "4"}]'},
        "4 does not divide the coarser layer's 6",
    ),
    ("layers-repeat", {L: '[{"topology": "rack", "size": "8"}, {"topology": "rack", "size": "4"}]'}, "listed twice"),
    ("layers-keys", {L: '[{"topology": "rack"}]'}, f"annotation {L}[0].size: required"),
]


@pytest.mark.parametrize("annotations, message", [b[1:] for b in BAD_KUEUE], ids=[b[0] for b in BAD_KUEUE])
def test_bad_kueue_annotations(annotations, message):
    with pytest.raises(vcore.TopologyError) as info:
        kueue_constraint(annotations, owner="pod template w")
    assert message in str(info.value) and "pod template w" in str(info.value)


def levels_cluster() -> vcore.Cluster:
    c = vcore.Cluster()
    c.add_node(node("n0", labels={"dc": "d", "block": "b", "rack": "r"}))
    c.set_topology_levels(["dc", "block", "rack"])
    return c


def test_resolution():
    tree = leaf_spine(spines=1, leaves=1, nodes=1)  # tiers 1, 2, 3
    rc = TopologyConstraint("hard", TierRef(tier=2)).resolve(tree.topology, 8)
    assert (rc.start_row, rc.limit_row, rc.hard, rc.layers) == (0, 1, True, ())
    rc = TopologyConstraint("soft").resolve(tree.topology, 8)
    assert (rc.start_row, rc.limit_row, rc.hard) == (0, 3, False)
    c = levels_cluster()
    rc = kueue_constraint({R: "block", S: "rack", Z: "2"}).resolve(c.topology, 8)
    assert (rc.start_row, rc.limit_row, rc.hard, rc.layers) == (1, 1, True, ((2, 0),))
    rc = kueue_constraint({P: "rack"}).resolve(c.topology, 3)
    assert (rc.start_row, rc.limit_row, rc.hard) == (0, 3, False)
    gaps = vcore.Cluster()  # tiers 1 and 3: a limit of 2 means tier 1
    gaps.add_node(node("a"))
    gaps.set_hypernodes([hn("l", 1, nodes=["a"]), hn("top", 3, children=["l"])])
    assert TopologyConstraint("hard", TierRef(tier=2)).resolve(gaps.topology, 1).limit_row == 0


BAD_RESOLVE = [
    (
        "tier-above-the-tree",
        TopologyConstraint("hard", TierRef(tier=4), owner="PodGroup ml/x"),
        4,
        "PodGroup ml/x: tier 4 is above the topology (highest tier 3)",
    ),
    (
        "tier-below-the-tree",
        TopologyConstraint("hard", TierRef(tier=0), owner="PodGroup ml/x"),
        4,
        "PodGroup ml/x: tier 0 is below the topology (lowest tier 1)",
    ),
    (
        "unknown-name",
        TopologyConstraint("hard", TierRef(name="rack"), owner="PodGroup ml/x"),
        4,
        "PodGroup ml/x: no tier named 'rack' in the topology (tier names: 'leaf', 'spine', 'core')",
    ),
    (
        "subgroup-above-the-gang",
        TopologyConstraint(
            "hard", TierRef(tier=1), owner="PodGroup ml/x", subgroups=(SubGroup(2, TierRef(tier=2), "g"),)
        ),
        4,
        "PodGroup ml/x: sub-group g: its tier 2 is above the gang's limit tier 1",
    ),
    (
        "not-whole-groups",
        TopologyConstraint("hard", TierRef(tier=2), owner="PodGroup ml/x", subgroups=(SubGroup(3, TierRef(tier=1)),)),
        4,
        "PodGroup ml/x: 4 pods are not whole groups of 3",
    ),
    (
        "layers-do-not-nest",
        TopologyConstraint(
            "hard",
            TierRef(tier=3),
            owner="PodGroup ml/x",
            subgroups=(SubGroup(4, TierRef(tier=1)), SubGroup(6, TierRef(tier=2))),
        ),
        12,
        "sub-groups must nest",
    ),
    ("no-pods", TopologyConstraint("soft", owner="PodGroup ml/x"), 0, "the number of pods must be a positive integer"),
]


@pytest.mark.parametrize("constraint, pods, message", [b[1:] for b in BAD_RESOLVE], ids=[b[0] for b in BAD_RESOLVE])
def test_bad_resolution(constraint, pods, message):
    tree = leaf_spine(spines=1, leaves=1, nodes=1)
    with pytest.raises(vcore.TopologyError) as info:
        constraint.resolve(tree.topology, pods)
    assert message in str(info.value)


def test_kueue_slice_above_its_level_is_rejected():
    c = levels_cluster()
    with pytest.raises(vcore.TopologyError, match="slice: its 'block' is above the gang's level 'rack'"):
        kueue_constraint({P: "rack", S: "block", Z: "2"}, owner="t").resolve(c.topology, 4)


def test_constraint_type_checks():
    with pytest.raises(vcore.TopologyError, match="topology mode must be one of"):
        TopologyConstraint("strict")
    with pytest.raises(vcore.TopologyError, match="needs a tier limit"):
        TopologyConstraint("hard")


# -- profile arguments ----------------------------------------------------------------------------------------
def test_args_defaults_and_round_trip():
    a = parse_topology_args(None)
    assert a == TopologyPlacementArgs() and a.solver == "auto"
    a = parse_topology_args(
        {
            "solver": "cpsat",
            "timeLimitSeconds": 0.1,
            "relativeGap": 0.05,
            "workers": 2,
            "bandwidthWeight": 1,
            "congestionWeight": 2.5,
            "tieSlack": 3,
            "objective": "weighted",
            "objectiveWeights": {"tierSpans": [1, 10], "nodes": 0, "fragmentation": 2},
            "weight": 10,
        }
    )
    assert (a.solver, a.time_limit_seconds, a.relative_gap, a.workers, a.tie_slack) == ("cpsat", 0.1, 0.05, 2, 3)
    assert a.tier_span_weights == (1, 10) and a.fragmentation_weight == 2 and a.node_score_weight == 10
    assert parse_topology_args(a.to_dict()) == a


def test_volcano_network_topology_aware_arguments():
    # The arguments volcano-sh/volcano documents for the plugin (network_topology_aware.go).
    a = parse_topology_args(
        {
            "weight": 10,
            "hypernode.binpack.cpu": 5,
            "hypernode.binpack.memory": 1,
            "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
            "hypernode.binpack.resources.nvidia.com/gpu": 2,
            "hypernode.binpack.normal-pod.enable": False,
            "hypernode.binpack.normal-pod.fading": 0.5,
        }
    )
    assert a.node_score_weight == 10 and not a.normal_pod_binpack and a.normal_pod_fading == 0.5
    assert a.binpack_weights == (("cpu", 5), ("memory", 1), ("nvidia.com/gpu", 2), ("example.com/foo", 1))
    assert parse_topology_args(a.to_dict()) == a
    d = parse_topology_args({})
    assert d.binpack_weights == (("cpu", 1), ("memory", 1)) and d.normal_pod_binpack and d.normal_pod_fading == 0.8


#: Values of Volcano's keys that Volcano's plugin cannot use: its default, with a warning naming the field.
VOLCANO_DEFAULTED = [
    ({"weight": -1}, "weight", "node_score_weight", 1),
    ({"weight": True}, "weight", "node_score_weight", 1),
    ({"hypernode.binpack.cpu": 1.5}, "hypernode.binpack.cpu", "binpack_weights", (("cpu", 1), ("memory", 1))),
    (
        {"hypernode.binpack.resources.nvidia.com/gpu": 2},
        "hypernode.binpack.resources.nvidia.com/gpu",
        "binpack_weights",
        (("cpu", 1), ("memory", 1)),
    ),
    (
        {"hypernode.binpack.resources": "nvidia.com/gpu", "hypernode.binpack.resources.nvidia.com/gpu": "2"},
        "hypernode.binpack.resources.nvidia.com/gpu",
        "binpack_weights",
        (("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1)),
    ),
    (
        {"hypernode.binpack.resources": ["nvidia.com/gpu"]},
        "hypernode.binpack.resources",
        "binpack_weights",
        (("cpu", 1), ("memory", 1)),
    ),
    (
        {"hypernode.binpack.resources": "cpu, a.io/x, a.io/x", "hypernode.binpack.cpu": 3},
        "hypernode.binpack.resources",
        "binpack_weights",
        (("cpu", 3), ("memory", 1), ("a.io/x", 1)),
    ),
    ({"hypernode.binpack.normal-pod.enable": "yes"}, "hypernode.binpack.normal-pod.enable", "normal_pod_binpack", True),
    ({"hypernode.binpack.normal-pod.fading": -0.1}, "hypernode.binpack.normal-pod.fading", "normal_pod_fading", 0.8),
    ({"hypernode.binpack.normal-pod.fading": "0.5"}, "hypernode.binpack.normal-pod.fading", "normal_pod_fading", 0.8),
]


@pytest.mark.parametrize("args, key, field, value", VOLCANO_DEFAULTED, ids=[k for _, k, _, _ in VOLCANO_DEFAULTED])
def test_volcano_keys_volcano_cannot_use_take_its_defaults_with_a_warning(args, key, field, value):
    with pytest.warns(vcore.ProfileWarning, match=re.escape(f"pluginConfig[x].args.{key}: ")):
        parsed = parse_topology_args(args, "pluginConfig[x].args")
    assert getattr(parsed, field) == value


def test_volcano_reads_boolean_strings_as_go_does():
    assert not parse_topology_args({"hypernode.binpack.normal-pod.enable": "false"}).normal_pod_binpack
    assert parse_topology_args({"hypernode.binpack.normal-pod.enable": "T"}).normal_pod_binpack
    assert parse_topology_args({"hypernode.binpack.normal-pod.fading": 2}).normal_pod_fading == 2.0


BAD_ARGS = [
    ({"solvers": "cpsat"}, "pluginConfig[x].args.solvers: unknown key (did you mean 'solver'?)"),
    ({"solver": "gurobi"}, "pluginConfig[x].args.solver: must be one of native, cpsat, auto"),
    ({"timeLimitSeconds": 0}, "pluginConfig[x].args.timeLimitSeconds: must be > 0, got 0"),
    ({"timeLimitSeconds": "1s"}, "pluginConfig[x].args.timeLimitSeconds: must be a number, got a string '1s'"),
    ({"relativeGap": 1.5}, "pluginConfig[x].args.relativeGap: must be in [0, 1]"),
    ({"workers": 0}, "pluginConfig[x].args.workers: must be in [1, 64]"),
    ({"workers": 1.5}, "pluginConfig[x].args.workers: must be an integer, got a number 1.5"),
    ({"congestionWeight": -1}, "pluginConfig[x].args.congestionWeight: must be in [0, 1000000], got -1"),
    ({"tieSlack": True}, "pluginConfig[x].args.tieSlack: must be an integer, got a boolean True"),
    ({"objective": "pareto"}, "pluginConfig[x].args.objective: must be one of lexicographic, weighted"),
    ({"objectiveWeights": {"nodes": 1}}, "pluginConfig[x].args.objectiveWeights: only with objective: weighted"),
    (
        {"objective": "weighted", "objectiveWeights": {"spans": [1]}},
        "pluginConfig[x].args.objectiveWeights.spans: unknown key",
    ),
    (
        {"objective": "weighted", "objectiveWeights": {"tierSpans": [1, -2]}},
        "pluginConfig[x].args.objectiveWeights.tierSpans[1]: must be in",
    ),
    ({"nodeScoreWeight": 1}, "pluginConfig[x].args.nodeScoreWeight: unknown key"),
]


BAD_ARGS += [
    ({1: 2}, "pluginConfig[x].args: keys must be strings, got an integer 1"),
    (
        {"objective": "weighted", "objectiveWeights": {"tierSpans": "1,2"}},
        "pluginConfig[x].args.objectiveWeights.tierSpans: must be a list",
    ),
    ({"relativeGap": float("nan")}, "pluginConfig[x].args.relativeGap: must be a finite number, got nan"),
]


@pytest.mark.parametrize(
    "args, message", BAD_ARGS, ids=[str(next(iter(a))) + str(i) for i, (a, _) in enumerate(BAD_ARGS)]
)
def test_bad_args(args, message):
    with pytest.raises(vcore.ProfileError) as info:
        parse_topology_args(args, "pluginConfig[x].args")
    assert message in str(info.value)
