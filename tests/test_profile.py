"""Tests of vcore.profile (profile validation and kube-scheduler v1 resolution) and vcore.plugins (names).

Expected resolutions follow kube-scheduler v1: pkg/scheduler/apis/config/v1 (defaults, mergePluginSet),
the framework's multiPoint expansion and getScoreWeights, and validation_pluginargs.go.
"""

from __future__ import annotations

import dataclasses
import pathlib

import pytest
import yaml

from vcore import plugins as P
from vcore.errors import ProfileError
from vcore.plugins.balanced_allocation import NodeResourcesBalancedAllocationArgs
from vcore.plugins.binpack import BinpackArgs
from vcore.plugins.node_resources_fit import NodeResourcesFitArgs
from vcore.profile import API_VERSION, Profile

FIT = "NodeResourcesFit"
BAL = "NodeResourcesBalancedAllocation"
TT = "TaintToleration"
NA = "NodeAffinity"
NU = "NodeUnschedulable"
BP = "binpack"
GDF = "GPUDeviceFit"
GPL = "GPUPlacement"

NN = "NodeName"
PTS = "PodTopologySpread"
IPA = "InterPodAffinity"
NP = "NodePorts"
IL = "ImageLocality"
DP = "DefaultPreemption"
VR = "VolumeRestrictions"
NVL = "NodeVolumeLimits"
VB = "VolumeBinding"
VZ = "VolumeZone"
DEFAULT_FILTERS = [NU, NN, TT, NA, NP, FIT, VR, NVL, VB, VZ, PTS, IPA, GDF]
# VolumeBinding implements Score, so the framework gives it weight 1; with StorageCapacityScoring off (v1.34's
# default) its PreScore skips and it adds nothing.
DEFAULT_SCORES = [(TT, 3), (NA, 2), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)]

ISSUE_EXAMPLE = {
    "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 1}], "disabled": [{"name": "*"}]}},
    "pluginConfig": [
        {
            "name": "NodeResourcesFit",
            "args": {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                }
            },
        }
    ],
}


def fit_args(args):
    return {"pluginConfig": [{"name": FIT, "args": args}]}


def strategy(**kw):
    return fit_args({"scoringStrategy": kw})


def binpack_args(args):
    return {"pluginConfig": [{"name": BP, "args": args}]}


# --------------------------------------------------------------------------------------------------------
# Plugin resolution (filters and scores)
# --------------------------------------------------------------------------------------------------------

RESOLUTION_CASES = [
    pytest.param(None, DEFAULT_FILTERS, DEFAULT_SCORES, id="default-none"),
    pytest.param({}, DEFAULT_FILTERS, DEFAULT_SCORES, id="default-empty-dict"),
    pytest.param({"plugins": None, "pluginConfig": None}, DEFAULT_FILTERS, DEFAULT_SCORES, id="default-nulls"),
    pytest.param(ISSUE_EXAMPLE, DEFAULT_FILTERS, [(FIT, 1)], id="issue-example-only-fit-scores"),
    pytest.param(
        {"plugins": {"filter": {"disabled": [{"name": TT}]}}},
        [NU, NN, NA, NP, FIT, VR, NVL, VB, VZ, PTS, IPA, GDF],
        DEFAULT_SCORES,
        id="disable-one-filter-keeps-its-score",
    ),
    pytest.param({"plugins": {"filter": {"disabled": [{"name": "*"}]}}}, [], DEFAULT_SCORES, id="disable-all-filters"),
    pytest.param({"plugins": {"score": {"disabled": [{"name": "*"}]}}}, DEFAULT_FILTERS, [], id="disable-all-scores"),
    pytest.param(
        {"plugins": {"score": {"disabled": [{"name": BAL}]}}},
        DEFAULT_FILTERS,
        [(TT, 3), (NA, 2), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (IL, 1)],
        id="disable-one-score",
    ),
    # kube-scheduler framework: a plugin re-configured at a specific point moves to the front of that point.
    pytest.param(
        {"plugins": {"score": {"enabled": [{"name": NA, "weight": 5}]}}},
        DEFAULT_FILTERS,
        [(NA, 5), (TT, 3), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)],
        id="score-weight-override",
    ),
    pytest.param(
        {"plugins": {"score": {"enabled": [{"name": TT}]}}},
        DEFAULT_FILTERS,
        [(TT, 1), (NA, 2), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)],
        id="score-override-without-weight-is-1",
    ),
    pytest.param(
        {"plugins": {"score": {"enabled": [{"name": TT, "weight": 0}]}}},
        DEFAULT_FILTERS,
        [(TT, 1), (NA, 2), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)],
        id="score-override-weight-0-is-1",
    ),
    # mergePluginSet: a default re-configured in multiPoint is replaced in place.
    pytest.param(
        {"plugins": {"multiPoint": {"enabled": [{"name": NA, "weight": 7}]}}},
        DEFAULT_FILTERS,
        [(TT, 3), (NA, 7), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)],
        id="multipoint-weight-override-in-place",
    ),
    pytest.param(
        {"plugins": {"multiPoint": {"enabled": [{"name": TT}]}}},
        DEFAULT_FILTERS,
        [(TT, 1), (NA, 2), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)],
        id="multipoint-override-without-weight-is-1",
    ),
    pytest.param(
        {"plugins": {"multiPoint": {"enabled": [{"name": BP, "weight": 4}]}}},
        DEFAULT_FILTERS,
        DEFAULT_SCORES + [(BP, 4)],
        id="multipoint-enable-binpack",
    ),
    pytest.param(
        {"plugins": {"score": {"enabled": [{"name": BP}]}}},
        DEFAULT_FILTERS,
        DEFAULT_SCORES + [(BP, 1)],
        id="score-enable-binpack-appended-weight-1",
    ),
    pytest.param(
        {"plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": FIT, "weight": 4}]}}},
        [FIT],
        [(FIT, 4)],
        id="multipoint-disable-all-enable-fit",
    ),
    pytest.param(
        {"plugins": {"multiPoint": {"disabled": [{"name": TT}]}}},
        [NU, NN, NA, NP, FIT, VR, NVL, VB, VZ, PTS, IPA, GDF],
        [(NA, 2), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)],
        id="multipoint-disable-one",
    ),
    pytest.param(
        {"plugins": {"multiPoint": {"disabled": [{"name": TT}], "enabled": [{"name": TT, "weight": 9}]}}},
        [NU, NN, NA, NP, FIT, VR, NVL, VB, VZ, PTS, IPA, GDF, TT],
        [(NA, 2), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1), (TT, 9)],
        id="multipoint-disable-then-reenable-appends",
    ),
    pytest.param(
        {"plugins": {"multiPoint": {"enabled": [{"name": BP, "weight": 2}]}, "score": {"disabled": [{"name": BP}]}}},
        DEFAULT_FILTERS,
        DEFAULT_SCORES,
        id="multipoint-plugin-disabled-at-score",
    ),
    # framework: "*" at a point skips the multiPoint expansion there, even for user multiPoint plugins.
    pytest.param(
        {"plugins": {"multiPoint": {"enabled": [{"name": BP}]}, "score": {"disabled": [{"name": "*"}]}}},
        DEFAULT_FILTERS,
        [],
        id="star-skips-multipoint-expansion",
    ),
    pytest.param(
        {"plugins": {"filter": {"disabled": [{"name": "*"}], "enabled": [{"name": FIT}, {"name": NU}]}}},
        [FIT, NU],
        DEFAULT_SCORES,
        id="filter-explicit-order",
    ),
    pytest.param(
        {"plugins": {"filter": {"enabled": [{"name": FIT}]}}},
        [FIT, NU, NN, TT, NA, NP, VR, NVL, VB, VZ, PTS, IPA, GDF],
        DEFAULT_SCORES,
        id="filter-override-moves-first",
    ),
    pytest.param(
        {"plugins": {"filter": {"disabled": [{"name": GDF}]}}},
        [NU, NN, TT, NA, NP, FIT, VR, NVL, VB, VZ, PTS, IPA],
        DEFAULT_SCORES,
        id="gpu-device-fit-can-be-disabled",
    ),
    pytest.param(
        {"plugins": {"score": {"enabled": [{"name": GPL, "weight": 3}]}}},
        DEFAULT_FILTERS,
        DEFAULT_SCORES + [(GPL, 3)],
        id="gpu-placement-opt-in",
    ),
    pytest.param(
        {
            "plugins": {
                "score": {"enabled": [{"name": FIT, "weight": 2}]},
                "multiPoint": {"enabled": [{"name": FIT, "weight": 6}]},
            }
        },
        DEFAULT_FILTERS,
        [(FIT, 2), (TT, 3), (NA, 2), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)],
        id="score-weight-wins-over-multipoint",
    ),
    pytest.param(
        {
            "plugins": {
                "filter": {"disabled": [{"name": "DynamicResources"}, {"name": "DefaultBinder"}]},
                "multiPoint": {"disabled": [{"name": "DefaultPreemption"}, {"name": "EBSLimits"}]},
                "queueSort": {"disabled": [{"name": "PrioritySort"}]},
                "bind": {"disabled": [{"name": "*"}]},
            }
        },
        DEFAULT_FILTERS,
        DEFAULT_SCORES,
        id="disabling-unimplemented-is-noop",
    ),
    pytest.param(
        {"plugins": {"preFilter": {"disabled": [{"name": "*"}]}, "preScore": {"disabled": [{"name": "*"}]}}},
        DEFAULT_FILTERS,
        DEFAULT_SCORES,
        id="pre-points-do-not-change-filter-score",
    ),
    pytest.param(
        {"plugins": {k: {"enabled": [], "disabled": []} for k in P.EXTENSION_POINTS}},
        DEFAULT_FILTERS,
        DEFAULT_SCORES,
        id="every-point-empty",
    ),
    pytest.param(
        {"plugins": {"score": {"enabled": [{"name": FIT, "weight": P.MAX_WEIGHT}]}}},
        DEFAULT_FILTERS,
        [(FIT, P.MAX_WEIGHT), (TT, 3), (NA, 2), (VB, 1), (PTS, 2), (IPA, 2), (BAL, 1), (IL, 1)],
        id="max-int32-weight",
    ),
]


@pytest.mark.parametrize("config, filters, scores", RESOLUTION_CASES)
def test_resolution(config, filters, scores):
    native = Profile.from_config(config).native()
    assert native["filters"] == filters
    assert native["scores"] == scores


def test_default_profile_native_exactly():
    assert Profile.from_config(None).native() == {
        "filters": [
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity",
            "GPUDeviceFit",
        ],
        "scores": [
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 1),
            ("VolumeBinding", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("NodeResourcesBalancedAllocation", 1),
            ("ImageLocality", 1),
        ],
        "fit": {
            "ignored_resources": [],
            "ignored_resource_groups": [],
            "strategy": "LeastAllocated",
            "resources": [("cpu", 1), ("memory", 1)],
            "shape": [],
        },
        "balanced": {"resources": [("cpu", 1), ("memory", 1)]},
        "binpack": {"weight": 1, "resources": [("cpu", 1), ("memory", 1)]},
        "gpu": {
            "policy": "vcore",
            "coverage": 95.0,
            "learn": True,
            "target": [],
            "vcore_scale": 1000.0,
            "vcore_pack_points": 1.0,
            "vcore_balance_points": 10.0,
            "tie_break": "Random",
        },
        "args": {
            "NodeName": {},
            "NodePorts": {},
            "ImageLocality": {},
            "VolumeRestrictions": {},
            "NodeVolumeLimits": {},
            "VolumeBinding": {},
            "VolumeZone": {},
            "InterPodAffinity": {"hard_pod_affinity_weight": 1, "ignore_preferred_terms_of_existing_pods": False},
            "PodTopologySpread": {
                "system_defaulting": True,
                "default_keys": [],
                "default_max_skews": [],
                "default_hard": [],
                "default_min_domains": [],
                "default_honor_node_affinity": [],
                "default_honor_taints": [],
            },
        },
        "percentage_of_nodes_to_score": 0,
    }


def test_default_profile_fields():
    p = Profile.from_config(None)
    assert p.scheduler_name == "default-scheduler"
    assert p.pre_filters == (NA, NP, FIT, VR, NVL, VB, VZ, PTS, IPA)
    assert p.pre_scores == (TT, NA, FIT, VB, PTS, IPA, BAL)
    assert p.args[FIT] == NodeResourcesFitArgs()
    assert p.args[BAL] == NodeResourcesBalancedAllocationArgs()
    assert p.args[BP] == BinpackArgs()


def test_issue_example_native():
    native = Profile.from_config(ISSUE_EXAMPLE).native()
    assert native["scores"] == [("NodeResourcesFit", 1)]
    assert native["filters"] == DEFAULT_FILTERS
    assert native["fit"]["strategy"] == "LeastAllocated"
    assert native["fit"]["resources"] == [("cpu", 1), ("memory", 1)]


@pytest.mark.parametrize(
    "config, expected",
    [
        pytest.param({}, 0, id="default-adaptive"),
        pytest.param({"percentageOfNodesToScore": 0}, 0, id="zero"),
        pytest.param({"percentageOfNodesToScore": 50}, 50, id="fifty"),
        pytest.param({"percentageOfNodesToScore": 100}, 100, id="hundred"),
        pytest.param(
            {
                "apiVersion": API_VERSION,
                "kind": "KubeSchedulerConfiguration",
                "percentageOfNodesToScore": 30,
                "profiles": [{"schedulerName": "s"}],
            },
            30,
            id="global-fallback",
        ),
        pytest.param(
            {
                "apiVersion": API_VERSION,
                "kind": "KubeSchedulerConfiguration",
                "percentageOfNodesToScore": 30,
                "profiles": [{"percentageOfNodesToScore": 70}],
            },
            70,
            id="profile-beats-global",
        ),
    ],
)
def test_percentage_of_nodes_to_score(config, expected):
    assert Profile.from_config(config).native()["percentage_of_nodes_to_score"] == expected


def test_scheduler_name():
    assert Profile.from_config({"schedulerName": "vcore"}).scheduler_name == "vcore"


def test_full_configuration_dict():
    config = {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration", "profiles": [ISSUE_EXAMPLE]}
    assert Profile.from_config(config) == Profile.from_config(ISSUE_EXAMPLE)


def test_full_configuration_without_profiles_is_default():
    config = {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration"}
    assert Profile.from_config(config) == Profile.from_config(None)


# --------------------------------------------------------------------------------------------------------
# pluginConfig arguments
# --------------------------------------------------------------------------------------------------------

FIT_ARGS_CASES = [
    pytest.param(fit_args({}), NodeResourcesFitArgs(), id="empty-args"),
    pytest.param(fit_args(None), NodeResourcesFitArgs(), id="null-args"),
    pytest.param({"pluginConfig": [{"name": FIT}]}, NodeResourcesFitArgs(), id="no-args-key"),
    pytest.param(strategy(type="MostAllocated"), NodeResourcesFitArgs(strategy="MostAllocated"), id="most-allocated"),
    pytest.param(
        strategy(
            resources=[
                {"name": "cpu", "weight": 3},
                {"name": "memory", "weight": 1},
                {"name": "nvidia.com/gpu", "weight": 100},
            ]
        ),
        NodeResourcesFitArgs(resources=(("cpu", 3), ("memory", 1), ("nvidia.com/gpu", 100))),
        id="resource-weights",
    ),
    pytest.param(
        strategy(type="LeastAllocated", resources=[{"name": "cpu", "weight": 0}, {"name": "memory"}]),
        NodeResourcesFitArgs(resources=(("cpu", 1), ("memory", 1))),
        id="weight-0-or-absent-defaults-to-1",
    ),
    pytest.param(
        strategy(type="MostAllocated", resources=[]),
        NodeResourcesFitArgs(strategy="MostAllocated"),
        id="empty-resources-default",
    ),
    pytest.param(
        strategy(resources=[{"name": "cpu", "weight": 2}]),
        NodeResourcesFitArgs(resources=(("cpu", 2),)),
        id="type-absent-least-allocated",
    ),
    pytest.param(
        strategy(
            type="RequestedToCapacityRatio",
            requestedToCapacityRatio={"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]},
        ),
        NodeResourcesFitArgs(strategy="RequestedToCapacityRatio", shape=((0, 10), (100, 0))),
        id="requested-to-capacity-ratio",
    ),
    pytest.param(
        strategy(
            type="RequestedToCapacityRatio",
            requestedToCapacityRatio={"shape": [{"score": 1}, {"utilization": 90, "score": 9}]},
        ),
        NodeResourcesFitArgs(strategy="RequestedToCapacityRatio", shape=((0, 1), (90, 9))),
        id="shape-utilization-absent-is-0",
    ),
    pytest.param(
        fit_args({"ignoredResources": ["example.com/foo", "bar"], "ignoredResourceGroups": ["example.com"]}),
        NodeResourcesFitArgs(ignored_resources=("example.com/foo", "bar"), ignored_resource_groups=("example.com",)),
        id="ignored",
    ),
    pytest.param(
        fit_args({"apiVersion": API_VERSION, "kind": "NodeResourcesFitArgs"}), NodeResourcesFitArgs(), id="type-meta"
    ),
]


@pytest.mark.parametrize("config, expected", FIT_ARGS_CASES)
def test_fit_args(config, expected):
    assert Profile.from_config(config).args[FIT] == expected


def test_fit_args_native():
    native = Profile.from_config(
        fit_args(
            {
                "ignoredResources": ["a"],
                "ignoredResourceGroups": ["g"],
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "cpu", "weight": 2}],
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 10, "score": 1}, {"utilization": 90, "score": 9}]
                    },
                },
            }
        )
    ).native()
    assert native["fit"] == {
        "ignored_resources": ["a"],
        "ignored_resource_groups": ["g"],
        "strategy": "RequestedToCapacityRatio",
        "resources": [("cpu", 2)],
        "shape": [(10, 1), (90, 9)],
    }


@pytest.mark.parametrize(
    "args, expected",
    [
        pytest.param({}, (("cpu", 1), ("memory", 1)), id="default"),
        pytest.param({"resources": []}, (("cpu", 1), ("memory", 1)), id="empty-list-default"),
        pytest.param(
            {"resources": [{"name": "cpu"}, {"name": "memory", "weight": 0}, {"name": "nvidia.com/gpu", "weight": 1}]},
            (("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1)),
            id="three-resources",
        ),
    ],
)
def test_balanced_args(args, expected):
    p = Profile.from_config({"pluginConfig": [{"name": BAL, "args": args}]})
    assert p.args[BAL].resources == expected
    assert p.native()["balanced"] == {"resources": list(expected)}


@pytest.mark.parametrize(
    "name, args",
    [
        pytest.param(NA, {}, id="node-affinity-empty"),
        pytest.param(NA, {"addedAffinity": None}, id="node-affinity-null"),
        pytest.param(TT, {}, id="taint-toleration-empty"),
        pytest.param(NU, None, id="node-unschedulable-null"),
    ],
)
def test_argless_plugins_accept_empty_args(name, args):
    assert Profile.from_config({"pluginConfig": [{"name": name, "args": args}]}) == Profile.from_config(None)


BINPACK_CASES = [
    pytest.param({}, {"weight": 1, "resources": [("cpu", 1), ("memory", 1)]}, id="defaults"),
    pytest.param(None, {"weight": 1, "resources": [("cpu", 1), ("memory", 1)]}, id="null"),
    pytest.param(  # the example in Volcano's binpack plugin
        {
            "binpack.weight": 10,
            "binpack.cpu": 5,
            "binpack.memory": 1,
            "binpack.resources": "nvidia.com/gpu, example.com/foo",
            "binpack.resources.nvidia.com/gpu": 2,
            "binpack.resources.example.com/foo": 3,
        },
        {"weight": 10, "resources": [("cpu", 5), ("memory", 1), ("nvidia.com/gpu", 2), ("example.com/foo", 3)]},
        id="volcano-example",
    ),
    pytest.param(
        {"binpack.resources": "nvidia.com/gpu"},
        {"weight": 1, "resources": [("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1)]},
        id="listed-resource-defaults-to-1",
    ),
    pytest.param(
        {"binpack.resources": " ,nvidia.com/gpu,, ", "binpack.resources.nvidia.com/gpu": 0},
        {"weight": 1, "resources": [("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 0)]},
        id="blank-items-skipped-weight-0",
    ),
    pytest.param(
        {"binpack.weight": 0, "binpack.cpu": 0, "binpack.memory": 7},
        {"weight": 0, "resources": [("cpu", 0), ("memory", 7)]},
        id="zeros-allowed",
    ),
    pytest.param(
        {"binpack.resources": ""}, {"weight": 1, "resources": [("cpu", 1), ("memory", 1)]}, id="empty-resource-list"
    ),
]


@pytest.mark.parametrize("args, expected", BINPACK_CASES)
def test_binpack_args(args, expected):
    config = binpack_args(args)
    config["plugins"] = {"score": {"enabled": [{"name": BP, "weight": 2}]}}
    native = Profile.from_config(config).native()
    assert native["binpack"] == expected
    assert native["scores"][-1] == (BP, 2)


def test_binpack_args_without_enabling_binpack():
    native = Profile.from_config(binpack_args({"binpack.weight": 3})).native()
    assert native["binpack"]["weight"] == 3
    assert [n for n, _ in native["scores"]] == [TT, NA, FIT, VB, PTS, IPA, BAL, IL]


# --------------------------------------------------------------------------------------------------------
# Errors: every one names the field
# --------------------------------------------------------------------------------------------------------


def en(point, *entries):
    return {"plugins": {point: {"enabled": list(entries)}}}


ERROR_CASES = [
    # top level
    pytest.param({"plugin": {}}, "plugin", "unknown key (did you mean 'plugins'?)", id="unknown-profile-key"),
    pytest.param({"schedulerName": 3}, "schedulerName", "must be a string, got an integer", id="scheduler-name-int"),
    pytest.param({"schedulerName": ""}, "schedulerName", "required", id="scheduler-name-empty"),
    pytest.param(
        {"percentageOfNodesToScore": 101}, "percentageOfNodesToScore", "must be in [0, 100], got 101", id="pct-101"
    ),
    pytest.param({"percentageOfNodesToScore": -1}, "percentageOfNodesToScore", "must be in [", id="pct-negative"),
    pytest.param(
        {"percentageOfNodesToScore": True},
        "percentageOfNodesToScore",
        "must be an integer, got a boolean",
        id="pct-bool",
    ),
    pytest.param(
        {"percentageOfNodesToScore": "50"}, "percentageOfNodesToScore", "must be an integer, got a string", id="pct-str"
    ),
    pytest.param(
        {"percentageOfNodesToScore": 50.0},
        "percentageOfNodesToScore",
        "must be an integer, got a number",
        id="pct-float",
    ),
    # plugins shape
    pytest.param({"plugins": []}, "plugins", "must be a mapping, got a list", id="plugins-list"),
    pytest.param(
        {"plugins": {"scores": {}}},
        "plugins.scores",
        "unknown key (did you mean 'score'?)",
        id="unknown-extension-point",
    ),
    pytest.param({"plugins": {"score": []}}, "plugins.score", "must be a mapping", id="plugin-set-list"),
    pytest.param(
        {"plugins": {"score": {"enable": []}}},
        "plugins.score.enable",
        "unknown key (did you mean 'enabled'?)",
        id="plugin-set-unknown-key",
    ),
    pytest.param(
        {"plugins": {"score": {"enabled": {"name": FIT}}}},
        "plugins.score.enabled",
        "must be a list",
        id="enabled-not-list",
    ),
    pytest.param(
        {"plugins": {"filter": {"disabled": "*"}}}, "plugins.filter.disabled", "must be a list", id="disabled-not-list"
    ),
    pytest.param(en("score", FIT), "plugins.score.enabled[0]", "must be a mapping, got a string", id="entry-str"),
    pytest.param(en("score", {"weight": 1}), "plugins.score.enabled[0].name", "required", id="entry-no-name"),
    pytest.param(en("score", {"name": ""}), "plugins.score.enabled[0].name", "required", id="entry-empty-name"),
    pytest.param(en("score", {"name": 5}), "plugins.score.enabled[0].name", "must be a string", id="entry-name-int"),
    pytest.param(
        en("score", {"name": FIT, "wieght": 2}),
        "plugins.score.enabled[0].wieght",
        "unknown key (did you mean 'weight'?)",
        id="entry-unknown-key",
    ),
    # plugin names
    pytest.param(
        en("score", {"name": "Foo"}),
        "plugins.score.enabled[0].name",
        "unknown plugin 'Foo'",
        id="unknown-plugin-enabled",
    ),
    pytest.param(
        en("filter", {"name": "NodeResourceFit"}),
        "plugins.filter.enabled[0].name",
        "unknown plugin 'NodeResourceFit' (did you mean 'NodeResourcesFit'?)",
        id="typo-plugin",
    ),
    pytest.param(
        {"plugins": {"filter": {"disabled": [{"name": "Foo"}]}}},
        "plugins.filter.disabled[0].name",
        "unknown plugin 'Foo'",
        id="unknown-plugin-disabled",
    ),
    pytest.param(
        en("multiPoint", {"name": "Binpack"}),
        "plugins.multiPoint.enabled[0].name",
        "unknown plugin 'Binpack'",
        id="binpack-is-lower-case",
    ),
    pytest.param(
        en("score", {"name": "DynamicResources"}),
        "plugins.score.enabled[0].name",
        "vcore does not implement plugin 'DynamicResources'",
        id="unimplemented-score",
    ),
    pytest.param(
        en("multiPoint", {"name": "DynamicResources"}),
        "plugins.multiPoint.enabled[0].name",
        "vcore does not implement plugin 'DynamicResources'",
        id="unimplemented-multipoint",
    ),
    pytest.param(
        en("queueSort", {"name": "PrioritySort"}),
        "plugins.queueSort.enabled[0].name",
        "vcore does not implement plugin 'PrioritySort'",
        id="unimplemented-queue-sort",
    ),
    pytest.param(
        en("filter", {"name": "EBSLimits"}),
        "plugins.filter.enabled[0].name",
        "was removed from kube-scheduler",
        id="removed-plugin",
    ),
    pytest.param(
        en("score", {"name": "*"}),
        "plugins.score.enabled[0].name",
        "'*' is only valid in a disabled list",
        id="star-enabled",
    ),
    pytest.param(
        en("score", {"name": NU}),
        "plugins.score.enabled[0].name",
        "plugin 'NodeUnschedulable' does not implement the score extension point",
        id="filter-only-at-score",
    ),
    pytest.param(
        en("filter", {"name": BP}),
        "plugins.filter.enabled[0].name",
        "plugin 'binpack' does not implement the filter extension point",
        id="binpack-at-filter",
    ),
    pytest.param(
        en("filter", {"name": BAL}),
        "plugins.filter.enabled[0].name",
        "does not implement the filter",
        id="balanced-at-filter",
    ),
    pytest.param(
        en("preFilter", {"name": TT}),
        "plugins.preFilter.enabled[0].name",
        "does not implement the preFilter",
        id="taint-at-prefilter",
    ),
    pytest.param(
        en("bind", {"name": FIT}), "plugins.bind.enabled[0].name", "does not implement the bind", id="fit-at-bind"
    ),
    pytest.param(
        en("score", {"name": FIT}, {"name": FIT, "weight": 2}),
        "plugins.score.enabled[1].name",
        "enabled twice (also at plugins.score.enabled[0])",
        id="duplicate-enabled",
    ),
    pytest.param(
        en("multiPoint", {"name": BP}, {"name": BP}),
        "plugins.multiPoint.enabled[1].name",
        "enabled twice",
        id="duplicate-multipoint",
    ),
    # weights
    pytest.param(
        en("score", {"name": FIT, "weight": -1}),
        "plugins.score.enabled[0].weight",
        "must be positive",
        id="weight-negative",
    ),
    pytest.param(
        en("score", {"name": FIT, "weight": True}),
        "plugins.score.enabled[0].weight",
        "must be an integer, got a boolean",
        id="weight-bool",
    ),
    pytest.param(
        en("score", {"name": FIT, "weight": 1.5}),
        "plugins.score.enabled[0].weight",
        "must be an integer, got a number",
        id="weight-float",
    ),
    pytest.param(
        en("score", {"name": FIT, "weight": "2"}),
        "plugins.score.enabled[0].weight",
        "must be an integer, got a string",
        id="weight-str",
    ),
    pytest.param(
        en("score", {"name": FIT, "weight": 2**31}),
        "plugins.score.enabled[0].weight",
        "must be in [0, 2147483647], got 2147483648",
        id="weight-over-int32",
    ),
    pytest.param(
        {
            "plugins": {"score": {"enabled": [{"name": BP, "weight": 2**31 - 1}]}},
            "pluginConfig": [{"name": BP, "args": {"binpack.weight": 2**31 - 1}}],
        },
        "plugins.score",
        "total score of Score plugins could overflow",
        id="total-score-overflow",
    ),
    # pluginConfig shape
    pytest.param({"pluginConfig": {"name": FIT}}, "pluginConfig", "must be a list", id="plugin-config-mapping"),
    pytest.param({"pluginConfig": [FIT]}, "pluginConfig[0]", "must be a mapping", id="plugin-config-entry-str"),
    pytest.param({"pluginConfig": [{"args": {}}]}, "pluginConfig[0].name", "required", id="plugin-config-no-name"),
    pytest.param(
        {"pluginConfig": [{"name": FIT, "arg": {}}]},
        "pluginConfig[0].arg",
        "unknown key (did you mean 'args'?)",
        id="plugin-config-unknown-key",
    ),
    pytest.param(
        {"pluginConfig": [{"name": "Foo", "args": {}}]},
        "pluginConfig[0].name",
        "unknown plugin 'Foo'",
        id="plugin-config-unknown-plugin",
    ),
    pytest.param(
        {"pluginConfig": [{"name": "DynamicResources", "args": {}}]},
        "pluginConfig[0].name",
        "vcore does not implement plugin 'DynamicResources'",
        id="plugin-config-unimplemented",
    ),
    pytest.param(
        {
            "pluginConfig": [
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                }
            ]
        },
        "pluginConfig[0] (DefaultPreemption).args.minCandidateNodesPercentage",
        "cannot be zero at the same time as minCandidateNodesAbsolute",
        id="preemption-candidates-zero",
    ),
    pytest.param(
        {"pluginConfig": [{"name": FIT}, {"name": TT}, {"name": FIT}]},
        "pluginConfig[2].name",
        "duplicate entry for plugin 'NodeResourcesFit' (first at pluginConfig[0])",
        id="plugin-config-duplicate",
    ),
    pytest.param(
        fit_args([]), "pluginConfig[0] (NodeResourcesFit).args", "must be a mapping, got a list", id="args-list"
    ),
    # NodeResourcesFit
    pytest.param(
        fit_args({"scoringStrategy": {"type": "LeastAllocated", "reosurces": []}}),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.reosurces",
        "unknown key",
        id="fit-issue-typo",
    ),
    pytest.param(
        fit_args({"scoringstrategy": {}}),
        "pluginConfig[0] (NodeResourcesFit).args.scoringstrategy",
        "unknown key (did you mean 'scoringStrategy'?)",
        id="fit-unknown-key",
    ),
    pytest.param(
        fit_args({"scoringStrategy": "LeastAllocated"}),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy",
        "must be a mapping, got a string",
        id="fit-strategy-str",
    ),
    pytest.param(
        strategy(type="Balanced"),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.type",
        "unsupported value 'Balanced'",
        id="fit-bad-type",
    ),
    pytest.param(
        strategy(type=1),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.type",
        "must be a string",
        id="fit-type-int",
    ),
    pytest.param(
        strategy(resources={"cpu": 1}),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.resources",
        "must be a list",
        id="fit-resources-mapping",
    ),
    pytest.param(
        strategy(resources=[{"name": "cpu", "weight": 101}]),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.resources[0].weight",
        "resource weight of cpu not in valid range (0, 100]",
        id="fit-weight-101",
    ),
    pytest.param(
        strategy(resources=[{"name": "cpu", "weight": -2}]),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.resources[0].weight",
        "not in valid range",
        id="fit-weight-negative",
    ),
    pytest.param(
        strategy(resources=[{"name": "cpu", "weight": False}]),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.resources[0].weight",
        "must be an integer, got a boolean",
        id="fit-weight-bool",
    ),
    pytest.param(
        strategy(resources=[{"name": "cpu", "weight": 1.0}]),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.resources[0].weight",
        "must be an integer, got a number",
        id="fit-weight-float",
    ),
    pytest.param(
        strategy(resources=[{"name": "cpu"}, {"name": "cpu", "weight": 2}]),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.resources[1].name",
        "duplicate resource 'cpu'",
        id="fit-duplicate-resource",
    ),
    pytest.param(
        strategy(resources=[{"weight": 2}]),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.resources[0].name",
        "required",
        id="fit-resource-no-name",
    ),
    pytest.param(
        strategy(resources=[{"name": "cpu", "wieght": 2}]),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.resources[0].wieght",
        "unknown key",
        id="fit-resource-unknown-key",
    ),
    pytest.param(
        strategy(type="RequestedToCapacityRatio"),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.requestedToCapacityRatio",
        "required",
        id="rtcr-missing",
    ),
    pytest.param(
        strategy(type="RequestedToCapacityRatio", requestedToCapacityRatio={}),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.requestedToCapacityRatio.shape",
        "at least one point",
        id="rtcr-no-shape",
    ),
    pytest.param(
        strategy(type="RequestedToCapacityRatio", requestedToCapacityRatio={"shape": []}),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.requestedToCapacityRatio.shape",
        "at least one point",
        id="rtcr-empty-shape",
    ),
    pytest.param(
        strategy(
            type="RequestedToCapacityRatio",
            requestedToCapacityRatio={"shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]},
        ),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
        "strictly increasing",
        id="rtcr-not-increasing",
    ),
    pytest.param(
        strategy(
            type="RequestedToCapacityRatio", requestedToCapacityRatio={"shape": [{"utilization": 101, "score": 1}]}
        ),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.requestedToCapacityRatio.shape[0].utilization",
        "must be in [0, 100], got 101",
        id="rtcr-utilization-101",
    ),
    pytest.param(
        strategy(
            type="RequestedToCapacityRatio", requestedToCapacityRatio={"shape": [{"utilization": 10, "score": 11}]}
        ),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.requestedToCapacityRatio.shape[0].score",
        "must be in [0, 10], got 11",
        id="rtcr-score-11",
    ),
    pytest.param(
        strategy(
            type="RequestedToCapacityRatio", requestedToCapacityRatio={"shape": [{"utilisation": 10, "score": 1}]}
        ),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.requestedToCapacityRatio.shape[0].utilisation",
        "unknown key (did you mean 'utilization'?)",
        id="rtcr-unknown-key",
    ),
    pytest.param(
        strategy(type="LeastAllocated", requestedToCapacityRatio={"shape": [{"utilization": 0, "score": 0}]}),
        "pluginConfig[0] (NodeResourcesFit).args.scoringStrategy.requestedToCapacityRatio",
        "forbidden",
        id="rtcr-with-least-allocated",
    ),
    pytest.param(
        fit_args({"ignoredResources": "nvidia.com/gpu"}),
        "pluginConfig[0] (NodeResourcesFit).args.ignoredResources",
        "must be a list",
        id="ignored-not-list",
    ),
    pytest.param(
        fit_args({"ignoredResources": [1]}),
        "pluginConfig[0] (NodeResourcesFit).args.ignoredResources[0]",
        "must be a string",
        id="ignored-int",
    ),
    pytest.param(
        fit_args({"ignoredResources": ["bad name"]}),
        "pluginConfig[0] (NodeResourcesFit).args.ignoredResources[0]",
        "is not a valid label key",
        id="ignored-invalid-name",
    ),
    pytest.param(
        fit_args({"ignoredResourceGroups": ["example.com/gpu"]}),
        "pluginConfig[0] (NodeResourcesFit).args.ignoredResourceGroups[0]",
        "can't contain '/'",
        id="ignored-group-slash",
    ),
    pytest.param(
        fit_args({"kind": "NodeAffinityArgs"}),
        "pluginConfig[0] (NodeResourcesFit).args.kind",
        "must be 'NodeResourcesFitArgs'",
        id="fit-wrong-kind",
    ),
    pytest.param(
        fit_args({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}),
        "pluginConfig[0] (NodeResourcesFit).args.apiVersion",
        "must be",
        id="fit-wrong-api-version",
    ),
    # NodeResourcesBalancedAllocation
    pytest.param(
        {"pluginConfig": [{"name": BAL, "args": {"resources": [{"name": "cpu", "weight": 2}]}}]},
        "pluginConfig[0] (NodeResourcesBalancedAllocation).args.resources[0].weight",
        "2 must be 1",
        id="balanced-weight-2",
    ),
    pytest.param(
        {"pluginConfig": [{"name": BAL, "args": {"resources": [{"name": "cpu"}, {"name": "cpu"}]}}]},
        "pluginConfig[0] (NodeResourcesBalancedAllocation).args.resources[1].name",
        "duplicate resource",
        id="balanced-duplicate",
    ),
    pytest.param(
        {"pluginConfig": [{"name": BAL, "args": {"resource": []}}]},
        "pluginConfig[0] (NodeResourcesBalancedAllocation).args.resource",
        "unknown key (did you mean 'resources'?)",
        id="balanced-unknown-key",
    ),
    # NodeAffinity, TaintToleration, NodeUnschedulable
    pytest.param(
        {
            "pluginConfig": [
                {"name": NA, "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}}
            ]
        },
        "pluginConfig[0] (NodeAffinity).args.addedAffinity",
        "not supported by vcore yet",
        id="node-affinity-added-affinity",
    ),
    pytest.param(
        {"pluginConfig": [{"name": NA, "args": {"foo": 1}}]},
        "pluginConfig[0] (NodeAffinity).args.foo",
        "unknown key",
        id="node-affinity-unknown-key",
    ),
    pytest.param(
        {"pluginConfig": [{"name": TT, "args": {"foo": 1}}]},
        "pluginConfig[0] (TaintToleration).args.foo",
        "unknown key",
        id="taint-toleration-args",
    ),
    pytest.param(
        {"pluginConfig": [{"name": TT}, {"name": NU, "args": {"x": 1}}]},
        "pluginConfig[1] (NodeUnschedulable).args.x",
        "unknown key",
        id="node-unschedulable-args",
    ),
    # binpack
    pytest.param(
        binpack_args({"binpack.weight": -1}),
        "pluginConfig[0] (binpack).args.binpack.weight",
        "must be in [",
        id="binpack-weight-negative",
    ),
    pytest.param(
        binpack_args({"binpack.weight": "10"}),
        "pluginConfig[0] (binpack).args.binpack.weight",
        "must be an integer, got a string",
        id="binpack-weight-str",
    ),
    pytest.param(
        binpack_args({"binpack.weight": True}),
        "pluginConfig[0] (binpack).args.binpack.weight",
        "must be an integer, got a boolean",
        id="binpack-weight-bool",
    ),
    pytest.param(
        binpack_args({"binpack.cpu": 1.5}),
        "pluginConfig[0] (binpack).args.binpack.cpu",
        "must be an integer, got a number",
        id="binpack-cpu-float",
    ),
    pytest.param(
        binpack_args({"binpack.memory": -3}),
        "pluginConfig[0] (binpack).args.binpack.memory",
        "must be in [",
        id="binpack-memory-negative",
    ),
    pytest.param(
        binpack_args({"binpack.resources": ["nvidia.com/gpu"]}),
        "pluginConfig[0] (binpack).args.binpack.resources",
        "must be a string, got a list",
        id="binpack-resources-list",
    ),
    pytest.param(
        binpack_args({"binpack.resources": "cpu"}),
        "pluginConfig[0] (binpack).args.binpack.resources",
        "'cpu' is weighted by binpack.cpu",
        id="binpack-resources-cpu",
    ),
    pytest.param(
        binpack_args({"binpack.resources": "a.com/x, a.com/x"}),
        "pluginConfig[0] (binpack).args.binpack.resources",
        "listed twice",
        id="binpack-resources-duplicate",
    ),
    pytest.param(
        binpack_args({"binpack.resources": "nvidia.com/gpu", "binpack.resources.nvidia.com/gpu": -1}),
        "pluginConfig[0] (binpack).args.binpack.resources.nvidia.com/gpu",
        "must be in [",
        id="binpack-resource-weight-negative",
    ),
    pytest.param(
        binpack_args({"binpack.resources.nvidia.com/gpu": 2}),
        "pluginConfig[0] (binpack).args.binpack.resources.nvidia.com/gpu",
        "unknown key: resource 'nvidia.com/gpu' is not listed in binpack.resources",
        id="binpack-unlisted-resource",
    ),
    pytest.param(
        binpack_args({"binpack.wieght": 2}),
        "pluginConfig[0] (binpack).args.binpack.wieght",
        "unknown key (did you mean 'binpack.weight'?)",
        id="binpack-typo",
    ),
    pytest.param(
        binpack_args({"weight": 2}), "pluginConfig[0] (binpack).args.weight", "unknown key", id="binpack-unprefixed-key"
    ),
    # whole KubeSchedulerConfiguration
    pytest.param(
        {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration", "profiles": [{}, {}]},
        "profiles",
        "must hold exactly one profile, got 2",
        id="config-two-profiles",
    ),
    pytest.param(
        {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration", "profiles": []},
        "profiles",
        "must hold exactly one profile, got 0",
        id="config-zero-profiles",
    ),
    pytest.param(
        {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration", "profiles": {}},
        "profiles",
        "must be a list",
        id="config-profiles-mapping",
    ),
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration", "profiles": [{}]},
        "apiVersion",
        "must be 'kubescheduler.config.k8s.io/v1'",
        id="config-old-api-version",
    ),
    pytest.param(
        {"apiVersion": API_VERSION, "kind": "Policy", "profiles": [{}]},
        "kind",
        "must be 'KubeSchedulerConfiguration'",
        id="config-wrong-kind",
    ),
    pytest.param(
        {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration", "leaderElection": {}, "profiles": [{}]},
        "leaderElection",
        "not a profile setting",
        id="config-global-key",
    ),
    pytest.param(
        {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration", "profiles": [[]]},
        "profiles[0]",
        "must be a mapping, got a list",
        id="config-profile-list",
    ),
    pytest.param(
        {
            "apiVersion": API_VERSION,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"score": {"enabled": [{"name": "Foo"}]}}}],
        },
        "profiles[0].plugins.score.enabled[0].name",
        "unknown plugin 'Foo'",
        id="config-nested-path",
    ),
    pytest.param(
        {
            "apiVersion": API_VERSION,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"pluginConfig": [{"name": BP, "args": {"x": 1}}]}],
        },
        "profiles[0].pluginConfig[0] (binpack).args.x",
        "unknown key",
        id="config-nested-args-path",
    ),
    pytest.param(
        {
            "apiVersion": API_VERSION,
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 200,
            "profiles": [{}],
        },
        "percentageOfNodesToScore",
        "must be in [",
        id="config-global-pct",
    ),
]


@pytest.mark.parametrize("config, path, fragment", ERROR_CASES)
def test_errors_name_the_field(config, path, fragment):
    with pytest.raises(ProfileError) as info:
        Profile.from_config(config)
    message = str(info.value)
    assert message.startswith(path + ": "), message
    assert fragment in message, message


def test_issue_typo_message_exact():
    config = fit_args({"scoringStrategy": {"reosurces": [{"name": "cpu", "weight": 1}]}})
    with pytest.raises(
        ProfileError, match=r"^pluginConfig\[0\] \(NodeResourcesFit\)\.args\.scoringStrategy\.reosurces: unknown key"
    ):
        Profile.from_config(config)


def test_profile_error_is_value_error():
    with pytest.raises(ValueError):
        Profile.from_config({"nope": 1})


@pytest.mark.parametrize("config", [42, [ISSUE_EXAMPLE], b"profile.yaml"], ids=["int", "list", "bytes"])
def test_wrong_config_type_is_type_error(config):
    with pytest.raises(TypeError, match="profile: expected a dict"):
        Profile.from_config(config)


def test_profile_itself_is_accepted():
    p = Profile.from_config(ISSUE_EXAMPLE)
    assert Profile.from_config(p) is p


# --------------------------------------------------------------------------------------------------------
# YAML files
# --------------------------------------------------------------------------------------------------------

PROFILE_YAML = """\
schedulerName: gpu-packer
percentageOfNodesToScore: 40
plugins:
  multiPoint:
    enabled:
      - name: binpack
        weight: 5
  score:
    disabled:
      - name: NodeResourcesBalancedAllocation
pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
          - name: cpu
            weight: 1
          - name: nvidia.com/gpu
            weight: 3
  - name: binpack
    args:
      binpack.weight: 2
      binpack.resources: nvidia.com/gpu
      binpack.resources.nvidia.com/gpu: 4
"""

FULL_CONFIG_YAML = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
""" + "".join("  " + ("- " if i == 0 else "  ") + line + "\n" for i, line in enumerate(PROFILE_YAML.splitlines()))


def _check_yaml_profile(p: Profile) -> None:
    assert p.scheduler_name == "gpu-packer"
    native = p.native()
    assert native["percentage_of_nodes_to_score"] == 40
    assert native["filters"] == DEFAULT_FILTERS
    assert native["scores"] == [(TT, 3), (NA, 2), (FIT, 1), (VB, 1), (PTS, 2), (IPA, 2), (IL, 1), (BP, 5)]
    assert native["fit"]["strategy"] == "MostAllocated"
    assert native["fit"]["resources"] == [("cpu", 1), ("nvidia.com/gpu", 3)]
    assert native["binpack"] == {"weight": 2, "resources": [("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 4)]}


@pytest.mark.parametrize("text", [PROFILE_YAML, FULL_CONFIG_YAML], ids=["profile", "kube-scheduler-configuration"])
@pytest.mark.parametrize("as_str", [False, True], ids=["pathlib", "str"])
def test_yaml_path(tmp_path, text, as_str):
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    p = Profile.from_config(str(path) if as_str else path)
    _check_yaml_profile(p)
    assert p == Profile.from_config(yaml.safe_load(PROFILE_YAML))


@pytest.mark.parametrize(
    "text, fragment",
    [
        pytest.param("", "empty YAML document", id="empty"),
        pytest.param("plugins: [unclosed\n", "invalid YAML", id="invalid-yaml"),
        pytest.param("- a\n- b\n", "profile: must be a mapping, got a list", id="top-level-list"),
        pytest.param(
            "plugins:\n  score:\n    enabled:\n      - name: Foo\n",
            "plugins.score.enabled[0].name: unknown plugin",
            id="field-error",
        ),
        pytest.param(
            FULL_CONFIG_YAML.replace("profiles:\n", "profiles:\n  - schedulerName: second\n"),
            "profiles: must hold exactly one profile, got 2",
            id="two-profiles",
        ),
    ],
)
def test_yaml_errors_name_the_file(tmp_path, text, fragment):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ProfileError) as info:
        Profile.from_config(path)
    assert str(info.value).startswith(f"{path}: ")
    assert fragment in str(info.value)


def test_yaml_missing_file(tmp_path):
    with pytest.raises(ProfileError, match=r"missing\.yaml: cannot read the file: No such file or directory"):
        Profile.from_config(tmp_path / "missing.yaml")


# --------------------------------------------------------------------------------------------------------
# Immutability, native() and to_dict()
# --------------------------------------------------------------------------------------------------------


def test_profile_is_frozen_and_hashable():
    p = Profile.from_config(None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.filters = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.args[FIT].strategy = "MostAllocated"  # type: ignore[misc]
    assert hash(p) == hash(Profile.from_config({}))


def test_native_returns_fresh_copies():
    p = Profile.from_config(None)
    native = p.native()
    native["filters"].clear()
    native["fit"]["resources"].append(("nvidia.com/gpu", 1))
    assert p.native() == Profile.from_config(None).native()


def test_native_keys_match_contract():
    native = Profile.from_config(None).native()
    assert set(native) == {
        "filters",
        "scores",
        "fit",
        "balanced",
        "binpack",
        "gpu",
        "args",
        "percentage_of_nodes_to_score",
    }
    assert set(native["fit"]) == {"ignored_resources", "ignored_resource_groups", "strategy", "resources", "shape"}
    assert set(native["balanced"]) == {"resources"}
    assert set(native["binpack"]) == {"weight", "resources"}
    assert set(native["gpu"]) == {
        "policy",
        "coverage",
        "learn",
        "target",
        "vcore_scale",
        "vcore_pack_points",
        "vcore_balance_points",
        "tie_break",
    }


ROUND_TRIP_CASES = (
    [c.values[0] for c in RESOLUTION_CASES]
    + [c.values[0] for c in FIT_ARGS_CASES]
    + [binpack_args(c.values[0]) | {"plugins": {"score": {"enabled": [{"name": BP}]}}} for c in BINPACK_CASES]
    + [yaml.safe_load(PROFILE_YAML)]
)


@pytest.mark.parametrize("config", ROUND_TRIP_CASES, ids=[f"case{i}" for i in range(len(ROUND_TRIP_CASES))])
def test_to_dict_round_trips(config):
    p = Profile.from_config(config)
    d = p.to_dict()
    assert d["apiVersion"] == API_VERSION and d["kind"] == "KubeSchedulerConfiguration"
    assert Profile.from_config(d) == p
    assert Profile.from_config(yaml.safe_load(yaml.safe_dump(d))) == p


def test_to_dict_shows_what_runs():
    profile = Profile.from_config(ISSUE_EXAMPLE).to_dict()["profiles"][0]
    assert profile["plugins"]["score"] == {"enabled": [{"name": FIT, "weight": 1}], "disabled": [{"name": "*"}]}
    assert profile["plugins"]["filter"]["enabled"] == [{"name": n} for n in DEFAULT_FILTERS]
    assert "multiPoint" not in profile["plugins"]
    fit = next(c for c in profile["pluginConfig"] if c["name"] == FIT)
    assert fit["args"]["scoringStrategy"] == {
        "type": "LeastAllocated",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
    }
    # Balanced allocation is not enabled and has its defaults; the running plugins show their arguments.
    assert [c["name"] for c in profile["pluginConfig"]] == [DP, IPA, FIT, PTS, VB]


# --------------------------------------------------------------------------------------------------------
# vcore.plugins
# --------------------------------------------------------------------------------------------------------


def test_plugin_names_are_kube_spelling():
    assert (
        P.NODE_RESOURCES_FIT,
        P.NODE_RESOURCES_BALANCED_ALLOCATION,
        P.TAINT_TOLERATION,
        P.NODE_AFFINITY,
        P.NODE_UNSCHEDULABLE,
        P.BINPACK,
    ) == (FIT, BAL, TT, NA, NU, BP)


def test_plugin_registry_is_consistent():
    assert P.FILTER_PLUGINS == (NU, NN, TT, NA, NP, FIT, VR, NVL, VB, VZ, PTS, IPA, GDF)
    assert P.SCORE_PLUGINS == (TT, NA, FIT, VB, PTS, IPA, BAL, IL, GPL, BP)  # the default profile's order, then by name
    assert dict(P.DEFAULT_WEIGHTS) == {TT: 3, NA: 2, FIT: 1, VB: 1, PTS: 2, IPA: 2, BAL: 1, IL: 1, BP: 1, GPL: 1}
    groups = [set(P.IMPLEMENTED_PLUGINS), set(P.UNIMPLEMENTED_PLUGINS), set(P.REMOVED_PLUGINS)]
    assert sum(map(len, groups)) == len(P.KNOWN_PLUGINS)
    for point_set in P.IMPLEMENTED_POINTS.values():
        assert point_set <= set(P.SPECIFIC_POINTS)
    assert {n for n, _ in P.DEFAULT_MULTI_POINT} <= P.KNOWN_PLUGINS - set(P.REMOVED_PLUGINS) - {BP}
    for name in ("PrioritySort", "DefaultBinder"):
        assert name in P.UNIMPLEMENTED_PLUGINS
    for name in (VR, NVL, VB, VZ):
        assert P.is_implemented(name)


def test_profile_module_docstrings():
    import vcore.plugins
    import vcore.profile

    assert vcore.profile.__doc__ and "owns" in vcore.profile.__doc__
    assert vcore.plugins.__doc__ and "owns" in vcore.plugins.__doc__
    assert pathlib.Path(vcore.profile.__file__).name == "profile.py"
