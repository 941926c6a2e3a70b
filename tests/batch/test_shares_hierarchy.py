"""KAI Scheduler's hierarchical fair share: the cases of KAI's resource_division_test.go and reclaimable_test.go,
and the plugin end to end on KAI Queue objects."""

from __future__ import annotations

import pytest

from vcore.batch.queue import UNLIMITED
from vcore.batch.shares import Claim, HierarchyPlugin
from vcore.batch.shares.hierarchy import KaiQueue, can_reclaim, link, reclaim_valid
from vcore.errors import ProfileError

from .share_builders import kai, opened, tree, usage, vec, volcano

NAMES = ("cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu")
U = -1  # KAI's unlimited


def fair_shares(total, queues, resource="gpu"):
    """Divide ``total`` of one resource among top-level KAI queues; queues: name -> dict(deserved=, weight=,
    limit=, request=, priority=, created=). Returns the fair shares and what stays undivided (KAI's remaining)."""

    def amount(n):  # KAI's cpu quota is in millicores
        return f"{n}m" if resource == "cpu" else n

    objs = []
    usages = {}
    for name, q in queues.items():
        objs.append(
            kai(
                name,
                priority=q.get("priority"),
                created=q.get("created"),
                **{
                    resource: {
                        "quota": q["deserved"],
                        "limit": q.get("limit", U),
                        "overQuotaWeight": q.get("weight", 0),
                    }
                },
            )
        )
        usages[name] = usage(NAMES, pending=vec(NAMES, **{resource: amount(q["request"])}))
    p = opened(HierarchyPlugin(), tree(*objs, default_queue=False), vec(NAMES, **{resource: amount(total)}), usages)
    axis = NAMES.index("nvidia.com/gpu" if resource == "gpu" else resource)
    got = {name: int(s.deserved[axis]) for name, s in p.status().items()}
    return got, max(total - sum(got.values()), 0)


ONE = {"deserved": 3, "weight": 0, "request": 2}


@pytest.mark.parametrize(
    "total, change, share, remaining",
    [
        pytest.param(2, {}, 2, 0, id="within quota: gives requested GPUs - no remaining"),
        pytest.param(3, {}, 2, 1, id="within quota: gives requested GPUs with remaining"),
        pytest.param(3, {"limit": 2}, 2, 1, id="within quota: doesn't give more GPUs than allowed"),
        pytest.param(1, {}, 2, 0, id="within quota: gives up to deserved when over subscribed"),
        pytest.param(7, {"request": 5}, 3, 4, id="within quota: gives up to full quota"),
        pytest.param(2, {"deserved": 0}, 0, 2, id="within quota: doesn't give if deserved is zero"),
    ],
)
def test_kai_single_queue_within_quota(total, change, share, remaining):
    assert fair_shares(total, {"1": {**ONE, **change}}) == ({"1": share}, remaining)


OVER = {"deserved": 3, "weight": 1, "request": 5}  # KAI's "over quota" cases start with the quota handed out


@pytest.mark.parametrize(
    "over, change, share, remaining",
    [
        pytest.param(2, {}, 5, 0, id="over quota: gives requested GPUs no remaining"),
        pytest.param(3, {}, 5, 1, id="over quota: gives requested GPUs with remaining"),
        pytest.param(2, {"limit": 4}, 4, 1, id="over quota: doesn't give more GPUs than allowed"),
        pytest.param(2, {"weight": 0}, 3, 2, id="over quota: doesn't give when over quota weight is zero"),
        pytest.param(0, {}, 3, 0, id="over quota: doesn't break when there are zero resources to divide"),
        pytest.param(10, {"weight": 0}, 3, 10, id="over quota: doesn't give when over quota weight is zero (10)"),
    ],
)
def test_kai_single_queue_over_quota(over, change, share, remaining):
    q = {**OVER, **change}
    assert fair_shares(q["deserved"] + over, {"1": q}) == ({"1": share}, remaining)


def test_kai_over_quota_when_deserved_is_zero():
    assert fair_shares(6, {"1": {"deserved": 0, "weight": 1, "request": 5}}) == ({"1": 5}, 1)


def test_kai_two_queues_over_quota_weight_zero():
    queues = {"1": {"deserved": 3, "weight": 0, "request": 5}, "2": {"deserved": 3, "weight": 1, "request": 3}}
    assert fair_shares(16, queues) == ({"1": 3, "2": 3}, 10)


TWO = {"deserved": 2, "weight": 2, "request": 6}


@pytest.mark.parametrize(
    "total, changes, shares, remaining",
    [
        pytest.param(15, {}, (6, 6), 3, id="allocates many available gpus"),
        pytest.param(12, {}, (6, 6), 0, id="allocates exact requested amount gpus"),
        pytest.param(8, {"1": {"weight": 1}, "2": {"weight": 3}}, (3, 5), 0, id="allocates GPUs proportionally"),
        pytest.param(12, {"1": {"limit": 5}}, (5, 6), 1, id="doesn't allocate more than allowed"),
        pytest.param(
            11,
            {"1": {"weight": 1, "request": 10}, "2": {"weight": 4, "request": 10}},
            (3, 8),
            0,
            id="distributes remainder between queues based on largest remaining",
        ),
        pytest.param(11, {}, (6, 5), 0, id="distributes remainder between queues based on creation time"),
        pytest.param(4, {"1": {"priority": 1}, "2": {"priority": 2}}, (2, 2), 0, id="priority doesn't affect deserved"),
        pytest.param(6, {"1": {"priority": 1}, "2": {"priority": 2}}, (2, 4), 0, id="priority does affect over-quota"),
        pytest.param(
            6,
            {"1": {"priority": 1, "weight": 100}, "2": {"priority": 2, "weight": 1}},
            (2, 4),
            0,
            id="priority does affect over-quota, even when overQuotaWeight is set",
        ),
    ],
)
def test_kai_two_queues(total, changes, shares, remaining):
    queues = {"1": {**TWO, "created": "2025-01-01T00:00:00Z"}, "2": {**TWO, "created": "2025-01-01T00:00:01Z"}}
    for name, change in changes.items():
        queues[name].update(change)
    assert fair_shares(total, queues) == ({"1": shares[0], "2": shares[1]}, remaining)


def test_kai_divides_the_remainder_even_when_using_priorities():
    queues = {
        "1": {"deserved": 2, "weight": 2, "request": 5, "priority": 2, "created": "2025-01-01T00:00:00Z"},
        "2": {"deserved": 2, "weight": 2, "request": 5, "priority": 2, "created": "2025-01-01T00:00:01Z"},
        "3": {"deserved": 1, "weight": 2, "request": 0, "priority": 1},
    }
    assert fair_shares(5, queues) == ({"1": 3, "2": 2, "3": 0}, 0)


THREE = {"deserved": 5000, "weight": 5000, "request": 5000}


@pytest.mark.parametrize(
    "total, changes, shares",
    [
        pytest.param(3000, None, None, id="one queue: gives requested CPUs to queue"),
        pytest.param(
            10000,
            {"1": {"request": 10000}, "2": {"deserved": 0, "weight": 0, "request": 5000}},
            (10000, 0),
            id="two queues: queue 2 has no deserved CPU, reclaims all resources of queue 2",
        ),
        pytest.param(10000, {}, (5000, 5000, 5000), id="three queues: all get their deserved - over subscription"),
        pytest.param(
            18000,
            {q: {"request": 6000} for q in "123"},
            (6000, 6000, 6000),
            id="three queues: all get their deserved fairShare - over quota",
        ),
        pytest.param(
            10000,
            {"1": {"request": 7000}, "2": {"request": 2000}, "3": {"request": 2000}},
            (6000, 2000, 2000),
            id="reclaims unneeded resources from an allocated queue",
        ),
        pytest.param(
            10000,
            {"1": {"request": 7000}, "2": {"request": 5000}, "3": {"request": 2000}},
            (5000, 5000, 2000),
            id="reclaims from both allocated queues to fulfill the last",
        ),
        pytest.param(
            10000,
            {"1": {"request": 7000, "limit": 7000}, "2": {"request": 2000}, "3": {"request": 2000}},
            (6000, 2000, 2000),
            id="one queue requests more than it deserves and allowed",
        ),
        pytest.param(10000, {"2": {"deserved": 0}}, (5000, 0, 5000), id="q2 has no deserved CPU but is allowed OQ"),
        pytest.param(
            10000,
            {"1": {"request": 10000}, "2": {"deserved": 0}, "3": {"request": 10000}},
            (5000, 0, 5000),
            id="q1 and q3 request more than they deserve, q2 has no deserved CPU",
        ),
    ],
)
def test_kai_cpu(total, changes, shares):
    if changes is None:  # one queue, deserved 3000, request 2000
        assert fair_shares(total, {"1": {"deserved": 3000, "weight": 3000, "request": 2000}}, "cpu") == (
            {"1": 2000},
            1000,
        )
        return
    names = "12" if len(shares) == 2 else "123"
    queues = {q: dict(THREE) for q in names}
    for q, change in changes.items():
        queues[q].update(change)
    got, remaining = fair_shares(total, queues, "cpu")
    assert tuple(got[q] for q in names) == shares and remaining == 0


# -- CanReclaimResources (preemptible reclaimer) ---------------------------------------------------------------
def _q(fair, allocated, deserved=(0, 0, 0), parent=None, name="queue1"):
    axes = range(3)  # cpu, memory, GPU
    return KaiQueue(
        name=name,
        parent=parent,
        deserved=dict(zip(axes, deserved)),
        max_allowed={k: UNLIMITED for k in axes},
        fair=dict(zip(axes, fair)),
        allocated=dict(zip(axes, allocated)),
    )


@pytest.mark.parametrize(
    "wanted, fair, allocated, expected",
    [
        pytest.param((1000, 1000, 1), (2000, 2000, 2), (0, 0, 0), True, id="No allocated resources, below fair share"),
        pytest.param((1000, 1000, 1), (3000, 3000, 3), (1000, 1000, 1), True, id="Some resources allocated, below"),
        pytest.param(
            (500, 1000, 0),
            (2000, 2000, 2),
            (1000, 1000, 1),
            True,
            id="Some resources at fair share with job, other stay below",
        ),
        pytest.param((1000, 1000, 1), (2000, 2000, 2), (1000, 1000, 1), True, id="Exactly at fair share with job"),
        pytest.param((1, 1000, 1000), (1500, 3000, 1), (1000, 1000, 1), False, id="Partially above fair share"),
        pytest.param((1, 1000, 1000), (1500, 1500, 1), (1000, 1000, 1), False, id="Fully above fair share"),
        pytest.param(
            (1, 1000, 1000),
            (3000, 3000, 0),
            (2000, 1000, 1),
            False,
            id="Queue partially above fair share without job resources",
        ),
    ],
)
def test_kai_can_reclaim_resources(wanted, fair, allocated, expected):
    assert can_reclaim(_q(fair, allocated), dict(enumerate(wanted))) is expected


# -- Reclaimable: single department, multiple departments, hierarchy levels ------------------------------------
def _gpu_queues(data, changes=None):
    """name -> (parent, deserved, fair share, allocated) in GPUs, as KAI's buildQueues; then the case's changes
    (name -> field -> GPUs)."""
    queues = {
        n: KaiQueue(
            name=n, parent=p or None, deserved={0: d}, max_allowed={0: UNLIMITED}, fair={0: f}, allocated={0: a}
        )
        for n, (p, d, f, a) in data.items()
    }
    for name, change in (changes or {}).items():
        for field, value in change.items():
            getattr(queues[name], field)[0] = value
    link(queues)
    return queues


SINGLE = {"p1": ("default", 3, 3, 2), "p2": ("default", 2, 2, 3), "default": (None, 5, 5, 5)}


@pytest.mark.parametrize(
    "changes, expected",
    [
        pytest.param({}, True, id="Reclaimer is below fair share, reclaimee above fair share"),
        pytest.param(
            {"p2": {"allocated": 2}, "default": {"allocated": 4}},
            False,
            id="Reclaimer is below fair share, reclaimer exactly at fair share",
        ),
        pytest.param(
            {"p2": {"allocated": 1}, "default": {"allocated": 3}},
            False,
            id="Reclaimer and reclaimee are below fair share",
        ),
        pytest.param(
            {"p2": {"fair": 3}}, True, id="Reclaimer below deserved and reclaimee above deserved (within fair)"
        ),
        pytest.param(
            {"p1": {"allocated": 3}, "default": {"allocated": 6, "deserved": 7, "fair": 10}},
            False,
            id="Reclaimer at fair share, reclaimee above fair share, department below fair share",
        ),
        pytest.param(
            {"p1": {"allocated": 3}, "default": {"allocated": 6}},
            False,
            id="Reclaimer at fair share, reclaimee above fair share, department above fair share",
        ),
        pytest.param(
            {"p1": {"deserved": 2}, "default": {"deserved": 1, "fair": 1, "allocated": 3}},
            True,
            id="Reclaimer department allocated above fair share, attempting to reclaim for job",
        ),
    ],
)
def test_kai_reclaimable_single_department(changes, expected):
    assert reclaim_valid(_gpu_queues(SINGLE, changes), "p1", {0: 1}, [("p2", {0: 1})]) is expected


MULTI = {"p1": ("d1", 3, 3, 2), "p2": ("d2", 2, 2, 3), "d1": (None, 3, 3, 2), "d2": (None, 2, 2, 3)}


@pytest.mark.parametrize(
    "changes, expected",
    [
        pytest.param({}, True, id="Reclaimer is below fair share, reclaimee above fair share - sanity"),
        pytest.param(
            {"p2": {"allocated": 2}, "d2": {"allocated": 2}}, False, id="Reclaimee department goes below fair"
        ),
        pytest.param(
            {"p1": {"allocated": 1}, "d1": {"allocated": 1}, "p2": {"fair": 4}, "d2": {"fair": 4}},
            True,
            id="Reclaimer department below deserved, reclaimee department above deserved within fair share",
        ),
    ],
)
def test_kai_reclaimable_multiple_departments(changes, expected):
    assert reclaim_valid(_gpu_queues(MULTI, changes), "p1", {0: 1}, [("p2", {0: 1})]) is expected


LEFT_RIGHT = {
    "left-top": (None, 1, 1, 0),
    "left-mid": ("left-top", 1, 1, 0),
    "left-leaf": ("left-mid", 1, 1, 0),
    "right-top": (None, 1, 1, 2),
    "right-mid": ("right-top", 1, 1, 2),
    "right-leaf": ("right-mid", 1, 1, 2),
}
# KAI's "same tree branch" cases use half GPUs; here every quantity is doubled (the test is scale-free)
BRANCH = {
    "top": (None, 4, 4, 4),
    "mid1": ("top", 2, 2, 1),
    "mid2": ("top", 2, 2, 3),
    "left-leaf1": ("mid1", 2, 2, 0),
    "left-leaf2": ("mid1", 0, 0, 1),
    "right-leaf": ("mid2", 2, 2, 3),
}
DEPTS = {
    "d1": (None, 4, 4, 4),
    "d1-project-1": ("d1", 3, 1, 0),
    "d1-project-2": ("d1", 1, 3, 4),
    "d2": (None, 3, 3, 7),
    "d2-project-1": ("d2", 3, 3, 7),
}


@pytest.mark.parametrize(
    "data, reclaimer, wanted, victims, expected",
    [
        pytest.param(
            LEFT_RIGHT,
            "left-leaf",
            1,
            [("right-leaf", 2)],
            True,
            id="Reclaimer is below fair share, reclaimee above fair share - sanity",
        ),
        pytest.param(
            {**LEFT_RIGHT, "left-top": (None, 1, 1, 1), "left-top-oq-leaf": ("left-top", 0, 0, 1)},
            "left-leaf",
            1,
            [("right-leaf", 2)],
            False,
            id="Reclaimer top queue will go over quota - don't",
        ),
        pytest.param(
            BRANCH,
            "left-leaf1",
            2,
            [("right-leaf", 3)],
            False,
            id="Reclaimer in the same tree branch and will go over fair share - don't reclaim",
        ),
        pytest.param(
            BRANCH,
            "left-leaf1",
            2,
            [("right-leaf", 3), ("left-leaf2", 1)],
            True,
            id="Reclaimer in the same tree branch - reclaim",
        ),
        pytest.param(
            DEPTS,
            "d1-project-1",
            1,
            [("d2-project-1", 1)],
            True,
            id="Reclaimer has lower utilization ratio than reclaimee but over 1",
        ),
    ],
)
def test_kai_reclaimable_multiple_hierarchy_levels(data, reclaimer, wanted, victims, expected):
    queues = _gpu_queues(data)
    assert reclaim_valid(queues, reclaimer, {0: wanted}, [(q, {0: g}) for q, g in victims]) is expected


def test_kai_reclamation_with_uninvolved_resources():
    data = {
        "d1": (None, 4, 4, 4),
        "d1-project-1": ("d1", 1, 1, 1),
        "d2": (None, 3, 3, 7),
        "d2-project-1": ("d2", 3, 3, 7),
    }
    queues = _gpu_queues(data)
    for q in queues.values():  # axis 1 is cpu: only d1 is far above its cpu fair share, and cpu is not involved
        q.deserved[1], q.max_allowed[1], q.fair[1], q.allocated[1] = 0, UNLIMITED, 0, 0
    queues["d1"].allocated[1], queues["d1"].fair[1] = 3000, 1000
    queues["d2"].allocated[1], queues["d2"].fair[1] = 1000, 1000
    assert reclaim_valid(queues, "d1-project-1", {0: 1, 1: 0}, [("d2-project-1", {0: 1, 1: 0})])
    assert not reclaim_valid(queues, "d1-project-1", {0: 1, 1: 1}, [("d2-project-1", {0: 1, 1: 0})])


def test_saturation_multiplier_makes_reclaim_more_conservative():
    queues = _gpu_queues(DEPTS)  # the reclaimer's department ends at 5/4 = 1.25; the sibling holds 6/3 = 2
    assert reclaim_valid(queues, "d1-project-1", {0: 1}, [("d2-project-1", {0: 1})], multiplier=1.5)
    assert not reclaim_valid(queues, "d1-project-1", {0: 1}, [("d2-project-1", {0: 1})], multiplier=1.6)


# -- the plugin on KAI Queue objects ---------------------------------------------------------------------------
GPU_ONLY = {"cpu": {"quota": -1, "limit": -1}, "memory": {"quota": -1, "limit": -1}}


def _kai_cluster(p1_request=6, p2_request=1, d_limit=U):
    t = tree(
        kai("d", gpu={"quota": 4, "limit": d_limit, "overQuotaWeight": 1}, **GPU_ONLY),
        kai("p1", parent="d", gpu={"quota": 2, "limit": -1, "overQuotaWeight": 1}, **GPU_ONLY),
        kai("p2", parent="d", gpu={"quota": 2, "limit": -1, "overQuotaWeight": 1}, **GPU_ONLY),
        kai("other", gpu={"quota": 4, "limit": -1, "overQuotaWeight": 1}, **GPU_ONLY),
        default_queue=False,
    )
    usages = {
        "p1": usage(NAMES, allocated=vec(NAMES, gpu=2), pending=vec(NAMES, gpu=p1_request - 2)),
        "p2": usage(NAMES, pending=vec(NAMES, gpu=p2_request)),
        "other": usage(NAMES, allocated=vec(NAMES, gpu=1)),
    }
    return opened(HierarchyPlugin(), t, vec(NAMES, cpu="64", mem="256Gi", gpu=8), usages)


def test_fair_share_quota_first_then_over_quota_down_the_tree():
    s = _kai_cluster().status()
    gpu = NAMES.index("nvidia.com/gpu")
    # top level: d gets its quota 4 and other 1 (its request); 3 left go to d, which still wants 3
    assert {q: int(s[q].deserved[gpu]) for q in ("d", "other", "p1", "p2")} == {"d": 7, "other": 1, "p1": 6, "p2": 1}
    assert s["d"].allocated[gpu] == 2 and s["p1"].share == pytest.approx(2 / 6)


def test_allocatable_respects_limits_up_the_tree_and_leaf_only():
    p = _kai_cluster(d_limit=3)
    assert p.allocatable("p2", vec(NAMES, gpu=1))
    assert not p.allocatable("p2", vec(NAMES, gpu=2))  # d would hold 4 GPUs, above its limit 3
    assert p.allocatable("p2", vec(NAMES, cpu="8"))  # no GPU asked: the GPU limit does not apply
    assert not p.allocatable("d", vec(NAMES, gpu=1))  # only leaf queues take jobs
    p.on_allocate("p2", vec(NAMES, gpu=1))
    assert not p.allocatable("p1", vec(NAMES, gpu=1))


def test_unset_kai_limit_allows_nothing():
    t = tree(kai("q", gpu={"quota": 2}), default_queue=False)
    p = opened(HierarchyPlugin(), t, vec(NAMES, gpu=8), {"q": usage(NAMES, pending=vec(NAMES, gpu=1))})
    assert not p.allocatable("q", vec(NAMES, gpu=1))


def test_preemptive_and_reclaimable_end_to_end():
    p = _kai_cluster()
    assert p.preemptive("p2", vec(NAMES, gpu=1))
    assert not p.preemptive("other", vec(NAMES, gpu=1))  # other is at its fair share 1
    # p2 (fair 1) reclaims one GPU: from other (at its fair share: refused), from p1 (below its fair share: refused)
    victims = p.reclaimable(
        Claim("p2", vec(NAMES, gpu=1)), [Claim("other", vec(NAMES, gpu=1)), Claim("p1", vec(NAMES, gpu=1))]
    )
    assert victims == []


def test_queue_order_prefers_queues_under_their_fair_share():
    p = _kai_cluster()
    p.on_allocate("other", vec(NAMES, gpu=2))  # other: 3 allocated, fair share 1
    assert p.queue_order("p1", "other") == -1  # compared at the top level: d (2 of 7) before other (3 of 1)
    assert p.sorted_queues(["other", "p2", "p1"])[-1] == "other"


def test_volcano_queues_read_as_kai_quota_limit_weight():
    t = tree(volcano("a", weight=3, deserved={"nvidia.com/gpu": "1"}), volcano("b", weight=1), default_queue=False)
    p = opened(
        HierarchyPlugin(),
        t,
        vec(NAMES, gpu=9),
        {"a": usage(NAMES, pending=vec(NAMES, gpu=9)), "b": usage(NAMES, pending=vec(NAMES, gpu=9))},
    )
    gpu = NAMES.index("nvidia.com/gpu")
    # a: quota 1, then 8 split 3:1 -> 6 + 2
    assert {q: int(s.deserved[gpu]) for q, s in p.status().items()} == {"a": 7, "b": 2}


def test_arguments():
    assert HierarchyPlugin({"reclaimerUtilizationMultiplier": "1.2"}).multiplier == 1.2
    assert HierarchyPlugin({"relcaimerSaturationMultiplier": 2}).multiplier == 2.0
    with pytest.raises(
        ProfileError, match=r"hierarchy: arguments.reclaimerUtilizationMultiplier: must be >= 1, got 0.5"
    ):
        HierarchyPlugin({"reclaimerUtilizationMultiplier": 0.5})
    with pytest.raises(ProfileError, match=r"hierarchy: arguments.kValue: unknown argument"):
        HierarchyPlugin({"kValue": 1})
