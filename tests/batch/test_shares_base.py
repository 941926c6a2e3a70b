"""The queue-share plugin interface: the registry, argument and input validation, session open, the hooks every
plugin shares (reclaim across reclaimable queues only, neutral answers for unregistered hooks, status)."""

from __future__ import annotations

import numpy as np
import pytest

from vcore.batch.shares import ABSTAIN, SHARE_PLUGINS, Claim, QueueUsage, names
from vcore.errors import ProfileError, QueueNotFoundError

from .share_builders import kai, kueue, opened, rlist, tree, usage, vec, volcano

NAMES = ("cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu")


def test_registry_names_are_the_constants():
    assert sorted(SHARE_PLUGINS) == sorted([names.PROPORTION, names.CAPACITY, names.HIERARCHY, names.COHORT])
    for name, cls in SHARE_PLUGINS.items():
        assert cls.name == name and "status" in cls.hooks


@pytest.mark.parametrize("name", sorted(SHARE_PLUGINS))
def test_arguments_must_be_a_mapping(name):
    with pytest.raises(ProfileError, match=rf"{name}: arguments: must be a mapping, got a list"):
        SHARE_PLUGINS[name](["x"])


def _mixed_tree():
    """Queues every plugin can read: Volcano queues with deserved (cohort reads it as nominal quota)."""
    return tree(
        volcano("a", deserved=rlist(cpu="4", gpu=2), capability=rlist(cpu="8", gpu=4)),
        volcano("b", deserved=rlist(cpu="4", gpu=2), reclaimable=False),
        volcano("c", deserved=rlist(cpu="4")),
    )


def _usages():
    return {
        "a": usage(NAMES, allocated=vec(NAMES, cpu="6", gpu=3), pending=vec(NAMES, cpu="2")),
        "b": usage(NAMES, allocated=vec(NAMES, cpu="6", gpu=1)),
        "c": usage(NAMES, pending=vec(NAMES, cpu="4")),
    }


TOTAL = vec(NAMES, cpu="12", mem="64Gi", gpu=4)


@pytest.mark.parametrize("name", sorted(SHARE_PLUGINS))
def test_open_rejects_bad_input_and_keeps_the_previous_session(name):
    p = opened(SHARE_PLUGINS[name](), _mixed_tree(), TOTAL, _usages())
    before = {q: (s.allocated.tolist(), s.deserved.tolist(), s.share) for q, s in p.status().items()}
    bad = [
        (
            dict(_usages(), a=QueueUsage(np.zeros(3, np.int64), *[np.zeros(5, np.int64)] * 3)),
            ValueError,
            r"queue a: allocated: expected 5 entries",
        ),
        (
            dict(_usages(), a=QueueUsage(np.zeros(5), *[np.zeros(5, np.int64)] * 3)),
            TypeError,
            r"queue a: allocated: expected a 1-d integer vector",
        ),
        (
            dict(_usages(), a=QueueUsage(*[np.zeros(5, np.int64)] * 3, np.full(5, -1))),
            ValueError,
            r"queue a: elastic: entries must not be negative",
        ),
        (dict(_usages(), zz=usage(NAMES)), QueueNotFoundError, r"queue zz: has usage but is not in the queue tree"),
        (dict(_usages(), a="lots"), TypeError, r"queue a: usage: expected a QueueUsage"),
    ]
    for usages, error, match in bad:
        with pytest.raises(error, match=match):
            p.open(_mixed_tree(), NAMES, TOTAL, usages)
    with pytest.raises(ValueError, match=r"resource_names: expected distinct"):
        p.open(_mixed_tree(), ("cpu", "cpu", "x", "y", "z"), TOTAL, _usages())
    with pytest.raises(TypeError, match=r"cluster: total: expected a 1-d integer vector"):
        p.open(_mixed_tree(), NAMES, TOTAL.astype(float), _usages())
    after = {q: (s.allocated.tolist(), s.deserved.tolist(), s.share) for q, s in p.status().items()}
    assert after == before


@pytest.mark.parametrize("name", sorted(SHARE_PLUGINS))
def test_hooks_need_an_open_session_and_known_queues(name):
    p = SHARE_PLUGINS[name]()
    with pytest.raises(RuntimeError, match=rf"{name}: the plugin is not open"):
        p.allocatable("a", vec(NAMES))
    opened(p, _mixed_tree(), TOTAL, _usages())
    with pytest.raises(QueueNotFoundError, match="queue nope: not found"):
        p.allocatable("nope", vec(NAMES))
    with pytest.raises(ValueError, match=rf"{name}: request: expected 5 entries"):
        p.allocatable("a", [1, 2])


@pytest.mark.parametrize("name", sorted(SHARE_PLUGINS))
def test_reclaim_never_takes_from_the_reclaimers_queue_or_an_unreclaimable_queue(name):
    p = opened(SHARE_PLUGINS[name](), _mixed_tree(), TOTAL, _usages())
    candidates = [Claim("c", vec(NAMES, cpu="1")), Claim("b", vec(NAMES, cpu="6", gpu=1))]
    assert p.reclaimable(Claim("c", vec(NAMES, cpu="4")), candidates) == []


@pytest.mark.parametrize("name", sorted(SHARE_PLUGINS))
def test_unregistered_hooks_answer_as_volcanos_session(name):
    p = opened(SHARE_PLUGINS[name](), _mixed_tree(), TOTAL, _usages())
    if "overused" not in p.hooks:
        assert p.overused("a") is False
    if "job_enqueueable" not in p.hooks:
        assert p.job_enqueueable("c", vec(NAMES, cpu="1")) == ABSTAIN
    if "victim_queue_order" not in p.hooks:
        assert p.victim_queue_order("a", "b", "c") == 0


@pytest.mark.parametrize("name", sorted(SHARE_PLUGINS))
def test_allocate_and_deallocate_round_trip(name):
    p = opened(SHARE_PLUGINS[name](), _mixed_tree(), TOTAL, _usages())
    before = p.status()["c"].allocated.copy()
    p.on_allocate("c", vec(NAMES, cpu="2"))
    assert (p.status()["c"].allocated - before).tolist() == vec(NAMES, cpu="2").tolist()
    with pytest.raises(ValueError, match=r"queue c: deallocating more than the queue holds"):
        p.on_deallocate("c", vec(NAMES, cpu="3"))
    p.on_deallocate("c", vec(NAMES, cpu="2"))
    assert p.status()["c"].allocated.tolist() == before.tolist()
    assert set(p.status()) == set(_mixed_tree())


def test_sorted_queues_breaks_ties_by_name():
    p = opened(
        SHARE_PLUGINS[names.PROPORTION](),
        tree(volcano("z"), volcano("y"), volcano("x")),
        TOTAL,
        {q: usage(NAMES, pending=vec(NAMES, cpu="1")) for q in "xyz"},
    )
    assert p.sorted_queues(["z", "x", "y"]) == ["x", "y", "z"]


def test_kinds_mix_in_one_tree():
    t = tree(
        volcano("v"),
        kai("k", gpu={"quota": 1, "limit": -1}),
        kueue("cq", covered=("cpu",), flavors=[{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 2}]}]),
    )
    assert [t.get(q).api.split("/")[0] for q in ("v", "k", "cq")] == [
        "scheduling.volcano.sh",
        "scheduling.run.ai",
        "kueue.x-k8s.io",
    ]
