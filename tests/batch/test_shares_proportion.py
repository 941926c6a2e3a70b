"""Volcano's proportion plugin: the cases of Volcano's proportion_test.go at plugin level, plus the algorithm's
documented behaviour (water-filling, capability, guarantee, share, order, overused, reclaim)."""

from __future__ import annotations

import numpy as np
import pytest

from vcore.batch.shares import PERMIT, REJECT, Claim, ProportionPlugin, QueueUsage
from vcore.errors import ProfileError

from .share_builders import NAMES, opened, rlist, tree, usage, vec, volcano

NAMES_CM = ("cpu", "memory", "ephemeral-storage", "pods")


def cm(cpu="0", mem="0"):
    return vec(NAMES_CM, cpu=cpu, mem=mem)


# Volcano TestEnqueueAndAllocatable: two nodes 3 cpu / 3Gi; pod1 (1 cpu, 3G) runs in q1, pod2 (3 cpu, 1G) in q2;
# q1: deserved 2c/2G (proportion ignores it), capability 2c/2G; q2: capability 3c/3G; q3 Closed.
def _enqueue_session():
    t = tree(
        volcano("q1", deserved=rlist(cpu="2", mem="2G"), capability=rlist(cpu="2", mem="2G")),
        volcano("q2", deserved=rlist(cpu="2", mem="2G"), capability=rlist(cpu="3", mem="3G")),
        volcano("q3", capability=rlist(cpu="3", mem="3G"), state="Closed"),
    )
    total = cm("6", "6Gi") + vec(NAMES_CM, pods=20)
    usages = {
        "q1": usage(NAMES_CM, allocated=cm("1", "3G")),
        "q2": usage(NAMES_CM, allocated=cm("3", "1G")),
        "q3": usage(NAMES_CM),
    }
    return t, total, usages


@pytest.mark.parametrize(
    "queue, min_resources, expected",
    [
        pytest.param(
            "q1", cm("1", "0"), PERMIT, id="case0: memory exceed deserved, job only request cpu can be enqueued"
        ),
        pytest.param(
            "q2", cm("0", "1G"), PERMIT, id="case1: cpu exceed deserved, job only request memory can be enqueued"
        ),
        pytest.param("q1", cm("1", "1G"), REJECT, id="case2: exceed capacity, can not enqueue"),
        pytest.param("q3", cm("1", "1G"), REJECT, id="case4: queue with non-open state, can not enqueue"),
    ],
)
def test_volcano_enqueue_and_allocatable(queue, min_resources, expected):
    t, total, usages = _enqueue_session()
    plugin = opened(ProportionPlugin(), t, total, usages, NAMES_CM)
    assert plugin.job_enqueueable(queue, min_resources) == expected
    if expected == PERMIT:
        # the next session sees the job Inqueue, its pod pending: it is allocated (Volcano binds it)
        plugin.on_job_enqueued(queue, min_resources)
        u = usages[queue]
        usages[queue] = QueueUsage(u.allocated, u.request + min_resources, u.inqueue + min_resources, u.elastic)
        plugin = opened(ProportionPlugin(), t, total, usages, NAMES_CM)
        assert not plugin.overused(queue)
        assert plugin.allocatable(queue, min_resources)


def test_enqueue_deserved_from_the_water_filling():
    """The deserved behind case0 and case1: q2 meets its request, q1 is stopped by its capability."""
    t, total, usages = _enqueue_session()
    usages["q1"] = usage(NAMES_CM, allocated=cm("1", "3G"), pending=cm("1", "0"))
    usages.pop("q3")
    s = opened(ProportionPlugin(), t, total, usages, NAMES_CM).status()
    assert s["q1"].deserved.tolist() == cm("2", "2G").tolist()  # realCapability 2c/2G
    assert s["q2"].deserved.tolist() == cm("3", "1G").tolist()  # its request


def test_volcano_pod_deallocate_updates_allocated():
    """Volcano TestProportion "pod-deallocate": 12 cpu allocated in q1; deleting pg1 (3 + 5 cpu) leaves 4 cpu."""
    t = tree(volcano("q1"))
    total = cm("7", "7k")
    plugin = opened(ProportionPlugin(), t, total, {"q1": usage(NAMES_CM, allocated=cm("12", "12k"))}, NAMES_CM)
    assert plugin.status()["q1"].allocated[0] == 12000
    plugin.on_deallocate("q1", cm("3", "3k"))
    plugin.on_deallocate("q1", cm("5", "5k"))
    assert plugin.status()["q1"].allocated[0] == 4000
    with pytest.raises(ValueError, match=r"queue q1: deallocating more than the queue holds"):
        plugin.on_deallocate("q1", cm("5", "5k"))


# Water-filling: cpu only, total 100 cpu; each case: queues (weight, request cpu, capability cpu, guarantee cpu)
# and the deserved cpu (millicores) Volcano's rounds give, in integers.
@pytest.mark.parametrize(
    "queues, deserved",
    [
        pytest.param(
            {"a": (2, 80, None, None), "b": (3, 15, None, None), "c": (5, 200, None, None)},
            {"a": 24285, "b": 15000, "c": 60714},
            id="weights-2-3-5: b's unused share goes to a and c 2:5",
        ),
        pytest.param(
            {"a": (1, 100, None, None), "b": (1, 100, None, None)},
            {"a": 50000, "b": 50000},
            id="equal weights split evenly",
        ),
        pytest.param(
            {"a": (1, 100, 20, None), "b": (1, 100, None, None)},
            {"a": 20000, "b": 80000},
            id="capability clamps, the rest flows to the other queue",
        ),
        pytest.param(
            {"a": (1, 0, None, 40), "b": (1, 100, None, None)},
            {"a": 40000, "b": 60000},
            id="guarantee raises an idle queue and is kept from the others",
        ),
        pytest.param(
            {"a": (1, 10, None, 30), "b": (3, 100, None, None)}, {"a": 30000, "b": 70000}, id="guarantee above request"
        ),
        pytest.param(
            {"a": (1, 30, None, None), "b": (1, 30, None, None)},
            {"a": 30000, "b": 30000},
            id="requests below the total: each gets its request",
        ),
        pytest.param({"a": (4, 100, None, None), "b": (1, 100, None, None)}, {"a": 80000, "b": 20000}, id="weight 4:1"),
    ],
)
def test_water_filling(queues, deserved):
    objs = []
    usages = {}
    for name, (weight, request, capability, guarantee) in queues.items():
        objs.append(
            volcano(
                name,
                weight=weight,
                capability=rlist(cpu=capability) if capability else None,
                guarantee=rlist(cpu=guarantee) if guarantee else None,
            )
        )
        usages[name] = usage(NAMES_CM, pending=cm(str(request)))
    plugin = opened(ProportionPlugin(), tree(*objs), cm("100", "0"), usages, NAMES_CM)
    assert {q: int(plugin.status()[q].deserved[0]) for q in queues} == deserved


def test_queues_without_jobs_take_no_share_and_report_zero():
    plugin = opened(
        ProportionPlugin(),
        tree(volcano("a"), volcano("b")),
        cm("10"),
        {"a": usage(NAMES_CM, pending=cm("20"))},
        NAMES_CM,
    )
    s = plugin.status()
    assert s["a"].deserved[0] == 10000 and s["b"].deserved[0] == 0 and s["default"].share == 0.0
    with pytest.raises(ValueError, match=r"queue b: has no jobs this session"):
        plugin.allocatable("b", cm("1"))


@pytest.mark.parametrize(
    "allocated, deserved_request, expected_share, overused",
    [
        pytest.param(cm("2", "1Gi"), cm("4", "4Gi"), 0.5, False, id="below-deserved"),
        pytest.param(cm("4", "1Gi"), cm("4", "4Gi"), 1.0, False, id="cpu-at-deserved-memory-below: not overused"),
        pytest.param(cm("4", "4Gi"), cm("4", "4Gi"), 1.0, True, id="at-deserved-on-every-resource: overused"),
        pytest.param(cm("5", "6Gi"), cm("4", "4Gi"), 1.5, True, id="above: share is the max ratio"),
    ],
)
def test_share_and_overused(allocated, deserved_request, expected_share, overused):
    # request = deserved_request and the cluster is large: deserved equals the request
    plugin = opened(
        ProportionPlugin(),
        tree(volcano("q")),
        cm("100", "100Gi"),
        {"q": QueueUsage(allocated, np.maximum(allocated, deserved_request), *[cm()] * 2)},
        NAMES_CM,
    )
    plugin_deserved = plugin.status()["q"].deserved
    assert plugin.status()["q"].share == pytest.approx(float(np.max(allocated[:2] / plugin_deserved[:2])))
    assert plugin.overused("q") is overused
    if expected_share <= 1:
        assert plugin.status()["q"].share == pytest.approx(expected_share)


def test_queue_order_priority_then_share():
    t = tree(volcano("low", priority=1), volcano("high", priority=5), volcano("busy"), volcano("idle"))
    usages = {
        "low": usage(NAMES_CM, pending=cm("10")),
        "high": usage(NAMES_CM, allocated=cm("9"), pending=cm("1")),
        "busy": usage(NAMES_CM, allocated=cm("8"), pending=cm("2")),
        "idle": usage(NAMES_CM, allocated=cm("1"), pending=cm("9")),
    }
    plugin = opened(ProportionPlugin(), t, cm("40"), usages, NAMES_CM)
    assert plugin.sorted_queues(usages) == ["high", "low", "idle", "busy"]


def test_queue_key_ranks_as_queue_order_does():
    """The session ranks queues by queue_key: it agrees with queue_order on every pair, ties included."""
    t = tree(volcano("low", priority=1), volcano("high", priority=5), volcano("busy"), volcano("idle"), volcano("twin"))
    usages = {
        "low": usage(NAMES_CM, pending=cm("10")),
        "high": usage(NAMES_CM, allocated=cm("9"), pending=cm("1")),
        "busy": usage(NAMES_CM, allocated=cm("8"), pending=cm("2")),
        "idle": usage(NAMES_CM, allocated=cm("1"), pending=cm("9")),
        "twin": usage(NAMES_CM, allocated=cm("1"), pending=cm("9")),
    }
    plugin = opened(ProportionPlugin(), t, cm("50"), usages, NAMES_CM)
    for a in usages:
        for b in usages:
            ka, kb = plugin.queue_key(a), plugin.queue_key(b)
            assert plugin.queue_order(a, b) == (ka > kb) - (ka < kb), (a, b)
    assert plugin.queue_order("idle", "twin") == 0


def test_allocatable_checks_only_requested_resources_and_open_state():
    t = tree(volcano("q"))
    plugin = opened(
        ProportionPlugin(),
        t,
        cm("4", "4Gi"),
        {"q": usage(NAMES_CM, allocated=cm("1", "4Gi"), pending=cm("3", "0"))},
        NAMES_CM,
    )
    # deserved = request 4c/4Gi; memory is used up, a cpu-only task still fits
    assert plugin.allocatable("q", cm("1", "0"))
    assert plugin.preemptive("q", cm("1", "0"))
    assert not plugin.allocatable("q", cm("1", "1Mi"))
    assert not plugin.allocatable("q", cm("4", "0"))
    closed = tree(volcano("q", state="Closed"))
    plugin = opened(ProportionPlugin(), closed, cm("4", "4Gi"), {"q": usage(NAMES_CM, pending=cm("1"))}, NAMES_CM)
    assert not plugin.allocatable("q", cm("1")) and not plugin.preemptive("q", cm("1"))


def test_pods_axis_is_not_a_queue_quota():
    plugin = opened(
        ProportionPlugin(),
        tree(volcano("q")),
        vec(NAMES, cpu="4", pods=110),
        {"q": usage(NAMES, allocated=vec(NAMES, cpu="1", pods=1), pending=vec(NAMES, cpu="3", pods=3))},
    )
    s = plugin.status()["q"]
    assert s.deserved.tolist() == vec(NAMES, cpu="4").tolist() and s.allocated[3] == 0
    assert plugin.allocatable("q", vec(NAMES, cpu="1", pods=1))


def _reclaim_session(q1_state="Open", reclaimable=True):
    t = tree(volcano("q1", reclaimable=reclaimable, state=q1_state), volcano("q2"))
    # q1 runs 8 cpu of a 10-cpu cluster and wants more; q2 wants 6: deserved q1 = 5, q2 = 5
    usages = {"q1": usage(NAMES_CM, allocated=cm("8"), pending=cm("2")), "q2": usage(NAMES_CM, pending=cm("6"))}
    return opened(ProportionPlugin(), t, cm("10"), usages, NAMES_CM)


def test_reclaimable_takes_victims_until_the_queue_is_down_to_deserved():
    plugin = _reclaim_session()
    assert plugin.status()["q1"].deserved[0] == 5000
    assert plugin.preemptive("q2", cm("2"))
    candidates = [Claim("q1", cm("3")), Claim("q1", cm("3")), Claim("q1", cm("2")), Claim("q2", cm("1"))]
    # 8 > 5: first victim (allocated -> 5); 5 <= 5: the others stay; q2's own task is never a victim
    assert plugin.reclaimable(Claim("q2", cm("2")), candidates) == [0]


def test_reclaimable_takes_from_a_queue_above_its_deserved_whatever_the_reclaimer_asks():
    # v1.14 (Volcano's commit 975277f55): no more skipping a queue that holds less than the reclaimer asks for
    plugin = _reclaim_session()
    assert plugin.reclaimable(Claim("q2", cm("9")), [Claim("q1", cm("3"))]) == [0]


def test_reclaimable_never_takes_from_a_queue_that_is_not_reclaimable():
    plugin = _reclaim_session(reclaimable=False)
    assert plugin.reclaimable(Claim("q2", cm("2")), [Claim("q1", cm("3"))]) == []


def test_no_arguments_and_no_hierarchy():
    with pytest.raises(ProfileError, match=r"proportion: arguments.foo: unknown argument \(none is accepted\)"):
        ProportionPlugin({"foo": 1})
    with pytest.raises(ProfileError, match=r"proportion: enableHierarchy: the proportion plugin has no hierarchical"):
        ProportionPlugin(hierarchy=True)
    with pytest.raises(RuntimeError, match="proportion: the plugin is not open"):
        ProportionPlugin().overused("default")


def test_guarantee_raise_can_exceed_the_total():
    """Volcano raises a queue to its guarantee after the round's portions were computed from what remained, so the
    deserved can add up past the cluster even though the guarantees fit (4206m of 4985m here)."""
    queues = {
        "q0": (6, 176, None, None),
        "q1": (10, 312, 943, None),
        "q2": (5, 4206, None, None),
        "q3": (5, 848, None, 4206),
        "q4": (5, 7378, 463, None),
    }
    objs, usages = [], {}
    for name, (weight, request, capability, guarantee) in queues.items():
        objs.append(
            volcano(
                name,
                weight=weight,
                capability=rlist(cpu=f"{capability}m") if capability else None,
                guarantee=rlist(cpu=f"{guarantee}m") if guarantee else None,
            )
        )
        usages[name] = usage(NAMES_CM, pending=cm(f"{request}m"))
    s = opened(ProportionPlugin(), tree(*objs), cm("4985m"), usages, NAMES_CM).status()
    got = {q: int(s[q].deserved[0]) for q in queues}
    # realCapability of the unguaranteed queues is 4985 - 4206 = 779 each; q3 is raised to 4206
    assert got == {"q0": 176, "q1": 312, "q2": 779, "q3": 4206, "q4": 463}
    assert sum(got.values()) == 5936 > 4985
