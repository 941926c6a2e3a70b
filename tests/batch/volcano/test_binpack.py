"""Volcano v1.14 pkg/scheduler/plugins/binpack/binpack_test.go: TestArguments (the plugin's reading of its
arguments, through vcore's volcano-scheduler.conf loader) and TestNode (the node score of each task on each node,
through the profile that conf gives vcore's scheduler), plus what Volcano's calculateWeight does with the values it
cannot use.

vcore's node scores are integers: Volcano's float binpack score truncated (the native kernel sums integer plugin
scores). TestNode's expected scores are compared after the same truncation."""

from __future__ import annotations

import math
import warnings

import pytest

import vcore
from vcore.batch.config import CycleConfig
from vcore.errors import ProfileError, ProfileWarning

from .volcano_fixtures import PENDING, Case, build_cluster, build_node, build_pod, node_res, rl

GPU, FOO = "nvidia.com/gpu", "example.com/foo"


def binpack_conf(arguments: dict) -> dict:
    """A conf whose one tier holds binpack with these arguments and its node order on, as the Go tests set it."""
    return {"actions": "allocate", "tiers": [{"plugins": [{"name": "binpack", "arguments": arguments}]}]}


def loaded(arguments: dict) -> tuple[vcore.Profile, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = CycleConfig.from_config(binpack_conf(arguments))
    notes = [str(w.message) for w in caught if issubclass(w.category, ProfileWarning)]
    return vcore.Profile.from_config(config.node_profile()), notes


# -- TestArguments --------------------------------------------------------------------------------------------------
def test_arguments():
    """A negative resource weight is 1, as calculateWeight makes it; the others are read as given."""
    profile, notes = loaded(
        {
            "binpack.weight": 10,
            "binpack.cpu": 5,
            "binpack.memory": 2,
            "binpack.resources": f"{GPU}, {FOO}",
            f"binpack.resources.{GPU}": 7,
            f"binpack.resources.{FOO}": -3,
        }
    )
    args = profile.args["binpack"]
    assert args.weight == 10
    assert dict(args.all_resources) == {"cpu": 5, "memory": 2, GPU: 7, FOO: 1}
    assert notes == [
        f"tiers[0].plugins[0].arguments.binpack.resources.{FOO}: -3 is negative; binpack uses 1, as "
        "Volcano's binpack does"
    ]


# -- values Volcano's calculateWeight replaces or ignores (its GetInt and its checks) -----------------------------
@pytest.mark.parametrize(
    "arguments, weight, resources, noted",
    [
        ({"binpack.cpu": -1, "binpack.memory": -7}, 1, {"cpu": 1, "memory": 1}, ["binpack.cpu", "binpack.memory"]),
        ({"binpack.weight": "10", "binpack.cpu": 1.5}, 1, {"cpu": 1, "memory": 1}, ["binpack.weight", "binpack.cpu"]),
        ({"binpack.memory": True}, 1, {"cpu": 1, "memory": 1}, ["binpack.memory"]),
        ({"binpack.resources": [GPU]}, 1, {"cpu": 1, "memory": 1}, ["binpack.resources"]),
        (
            {"binpack.resources": f"cpu, {GPU}, {GPU},", f"binpack.resources.{GPU}": "2"},
            1,
            {"cpu": 1, "memory": 1, GPU: 1},
            ["binpack.resources", "binpack.resources", f"binpack.resources.{GPU}"],
        ),
        (
            {f"binpack.resources.{GPU}": 3, "binpack.weight": 4},
            4,
            {"cpu": 1, "memory": 1},
            [f"binpack.resources.{GPU}"],
        ),
    ],
    ids=["negative cpu and memory", "not integers", "a boolean", "resources not a string", "listed again", "unlisted"],
)
def test_values_volcano_replaces(arguments, weight, resources, noted):
    profile, notes = loaded(arguments)
    args = profile.args["binpack"]
    assert (args.weight, dict(args.all_resources)) == (weight, resources)
    assert [n.split(": ", 1)[0] for n in notes] == [f"tiers[0].plugins[0].arguments.{key}" for key in noted]


def test_a_negative_weight_is_refused():
    """Volcano keeps a negative binpack.weight (the emptiest node scores highest); vcore has no such score."""
    with pytest.raises(ProfileError, match=r"tiers\[0\]\.plugins\[0\]\.arguments\.binpack\.weight: -2 is negative"):
        CycleConfig.from_config(binpack_conf({"binpack.weight": -2}))


def test_an_unknown_key_is_still_an_error():
    """Volcano ignores a key it does not read; vcore names it, so that a misspelt weight never silently defaults."""
    with pytest.raises(ProfileError, match=r"arguments\.binpack\.cpus: unknown key"):
        CycleConfig.from_config(binpack_conf({"binpack.cpus": 2}))


# -- TestNode -------------------------------------------------------------------------------------------------------
NODES = [
    build_node("n1", node_res("2", "4Gi", "10")),
    build_node("n2", {**node_res("4", "16Gi", "10"), GPU: "4"}),
    build_node("n3", {**node_res("2", "4Gi", "10"), FOO: "16"}),
]
# p1 and p2 are bound (Pending on their node), p3 and p4 wait; each is scored on every node as the session sees it.
PODS = [
    build_pod("c1", "p1", "n1", PENDING, rl("1", "1Gi"), "pg1"),
    build_pod("c1", "p2", "n3", PENDING, rl("1.5", "0Gi"), "pg1"),
    build_pod("c1", "p3", "", PENDING, {**rl("2", "10Gi"), GPU: "2"}, "pg1"),
    build_pod("c1", "p4", "", PENDING, {**rl("3", "4Gi"), FOO: "3"}, "pg1"),
]
NODE_CASES = [
    (
        {
            "binpack.weight": 10,
            "binpack.cpu": 2,
            "binpack.memory": 3,
            "binpack.resources": f"{GPU}, {FOO}",
            f"binpack.resources.{GPU}": 7,
            f"binpack.resources.{FOO}": 8,
        },
        {
            "p1": {"n1": 700, "n2": 137.5, "n3": 0},  # n3: p2's 1.5 cpu leave too little for p1
            "p2": {"n1": 0, "n2": 375, "n3": 0},
            "p3": {"n1": 0, "n2": 531.25, "n3": 0},
            "p4": {"n1": 0, "n2": 173.076923076, "n3": 0},  # n3: 3 cpu asked, 2 there
        },
    ),
    (
        {
            "binpack.weight": 1,
            "binpack.cpu": 1,
            "binpack.memory": 1,
            "binpack.resources": GPU,
            f"binpack.resources.{GPU}": 23,
        },
        {
            "p1": {"n1": 75, "n2": 15.625, "n3": 0},
            "p2": {"n1": 0, "n2": 37.5, "n3": 0},
            "p3": {"n1": 0, "n2": 50.5, "n3": 0},
            "p4": {"n1": 0, "n2": 50, "n3": 0},
        },
    ),
]


def _probe(pod: dict) -> dict:
    """The task as the session scores it: its own request on nodes that already hold what is bound (itself too)."""
    probe = {**pod, "metadata": {**pod["metadata"], "name": pod["metadata"]["name"] + "-probe"}}
    probe["spec"] = {k: v for k, v in pod["spec"].items() if k != "nodeName"}
    return probe


# Scored by binpack alone in the Go test, yet no place for the task: n2 has no example.com/foo for p4. Volcano's
# allocate never scores it (the resource check comes first); vcore's filter leaves it out of the feasible set.
NO_ROOM = {("p4", "n2")}


@pytest.mark.parametrize("arguments, expected", NODE_CASES, ids=["case0", "case1"])
def test_node(arguments, expected):
    """Every task's score on every node where it fits. Volcano's binpack scores 0 where the task's request exceeds the
    node's free room; vcore's resource filter leaves such a node out of the feasible set."""
    cluster = build_cluster(Case("single job", pods=PODS, nodes=NODES))
    scheduler = vcore.Scheduler(cluster, cycle=binpack_conf(arguments))
    for pod in PODS:
        name = pod["metadata"]["name"]
        scores = scheduler.score(_probe(pod))
        fits = {node: score for node, score in expected[name].items() if score and (name, node) not in NO_ROOM}
        assert scores == {node: math.trunc(score) for node, score in fits.items()}, (name, scores, expected[name])
