"""Properties of the queue-share plugins on random queues (hypothesis): bounds of deserved / fair shares, their
sums, monotonicity in weight, and quota invariants under random allocation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from vcore.batch.queue import UNLIMITED
from vcore.batch.shares import CapacityPlugin, CohortPlugin, HierarchyPlugin, ProportionPlugin, QueueUsage
from vcore.batch.shares.base import sub_floor

from .share_builders import kai, kueue, tree, volcano

NAMES = ("cpu", "memory", "pods")
CPU_MEM = np.array([True, True, False])


def _vec(c, m):
    return np.array([c, m, 0], dtype=np.int64)


queue_st = st.fixed_dictionaries(
    {
        "weight": st.integers(1, 10),
        "request": st.tuples(st.integers(0, 100_000), st.integers(0, 10**12)),
        "capability": st.one_of(st.none(), st.tuples(st.integers(1, 100_000), st.integers(1, 10**12))),
        "guarantee": st.one_of(st.none(), st.tuples(st.integers(0, 20_000), st.integers(0, 10**11))),
    }
)
total_st = st.tuples(st.integers(1, 200_000), st.integers(1, 2 * 10**12))


def _volcano_session(queues, total, plugin=None):
    objs, usages = [], {}
    for i, q in enumerate(queues):
        cap = q["capability"]
        g = q["guarantee"]
        if cap is not None and g is not None:
            g = (min(g[0], cap[0]), min(g[1], cap[1]))
        objs.append(
            volcano(
                f"q{i}",
                weight=q["weight"],
                capability={"cpu": f"{cap[0]}m", "memory": str(cap[1])} if cap else None,
                guarantee={"cpu": f"{g[0]}m", "memory": str(g[1])} if g else None,
            )
        )
        z = _vec(0, 0)
        usages[f"q{i}"] = QueueUsage(z, _vec(*q["request"]), z, z)
    plugin = plugin or ProportionPlugin()
    plugin.open(tree(*objs), NAMES, _vec(*total), usages)
    return plugin


@given(st.lists(queue_st, min_size=1, max_size=5), total_st)
def test_proportion_deserved_within_capability_and_request_except_guarantee(queues, total):
    p = _volcano_session(queues, total)
    status = p.status()
    total_guarantee = sum((p._attrs[q].guarantee for q in p._attrs), np.zeros(3, dtype=np.int64))
    for name, a in p._attrs.items():
        spec = p.tree.get(name)
        capability = np.array([spec.limit(r) for r in NAMES])
        real = np.minimum(sub_floor(p.total, total_guarantee) + a.guarantee, capability)
        bound = np.maximum(np.minimum(real, a.request), a.guarantee)
        assert (status[name].deserved <= bound).all(), (name, status[name].deserved, bound)


@given(st.lists(queue_st, min_size=1, max_size=5), total_st, st.booleans())
def test_proportion_deserved_sums(queues, total, with_guarantees):
    """Without guarantees the queues share at most the cluster. A guarantee raises its queue's deserved after the
    round's portions are computed from what remained, so (as in Volcano) the sum may pass the total even when the
    guarantees fit; it stays within the total plus the guarantees (see test_guarantee_raise_can_exceed_the_total)."""
    if not with_guarantees:
        queues = [dict(q, guarantee=None) for q in queues]
    p = _volcano_session(queues, total)
    total_guarantee = sum((p._attrs[q].guarantee for q in p._attrs), np.zeros(3, dtype=np.int64))
    deserved = sum(s.deserved for s in p.status().values())
    assert (deserved[CPU_MEM] <= p.total[CPU_MEM] + total_guarantee[CPU_MEM]).all()
    if not total_guarantee.any():
        assert (deserved[CPU_MEM] <= p.total[CPU_MEM]).all()


@given(st.lists(queue_st, min_size=2, max_size=5), total_st, st.integers(1, 5))
def test_proportion_monotone_in_weight(queues, total, extra):
    """Raising one queue's weight never lowers what it deserves (the others unchanged), up to one unit: Volcano
    counts a request as met within 0.1 of it, so a heavier queue can stop at 0.9375 of a millicore it would
    otherwise have reached in full, which flooring turns into one unit less."""
    before = _volcano_session(queues, total).status()["q0"].deserved
    heavier = [dict(queues[0], weight=queues[0]["weight"] + extra)] + queues[1:]
    after = _volcano_session(heavier, total).status()["q0"].deserved
    assert (after >= before - 1).all(), (before, after)


@given(
    st.lists(queue_st, min_size=1, max_size=5),
    total_st,
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 50_000), st.integers(0, 10**11)), max_size=12),
)
def test_capacity_enqueue_keeps_admitted_minimum_within_real_capability(queues, total, jobs):
    p = _volcano_session(queues, total, CapacityPlugin())
    for i, c, m in jobs:
        q = f"q{i % len(queues)}"
        minimum = _vec(c, m)
        if p.job_enqueueable(q, minimum) > 0:
            p.on_job_enqueued(q, minimum)
            a = p._attrs[q]
            asked = minimum > 0
            assert (a.allocated + a.inqueue - a.elastic <= a.real_capability)[asked].all()


kai_queue_st = st.fixed_dictionaries(
    {
        "quota": st.one_of(st.just(-1), st.integers(0, 16)),
        "limit": st.one_of(st.just(-1), st.integers(0, 32)),
        "weight": st.integers(0, 4),
        "priority": st.integers(1, 3),
        "request": st.integers(0, 32),
    }
)


@given(
    st.lists(kai_queue_st, min_size=1, max_size=4), st.lists(kai_queue_st, min_size=0, max_size=3), st.integers(0, 64)
)
def test_kai_fair_share_bounds(tops, children, total):
    """A fair share never exceeds what the queue can use (request capped by limit); a level hands out at most what
    it divides once its quotas fit; children share their parent's fair share."""
    objs = []
    usages = {}
    for i, q in enumerate(tops):
        objs.append(
            kai(
                f"t{i}",
                priority=q["priority"],
                gpu={"quota": q["quota"], "limit": q["limit"], "overQuotaWeight": q["weight"]},
            )
        )
        if not (children and i == 0):
            usages[f"t{i}"] = QueueUsage(*[np.zeros(1, dtype=np.int64)] * 4)
            usages[f"t{i}"] = QueueUsage(
                np.zeros(1, np.int64), np.array([q["request"]]), np.zeros(1, np.int64), np.zeros(1, np.int64)
            )
    for j, q in enumerate(children):
        objs.append(
            kai(
                f"c{j}",
                parent="t0",
                priority=q["priority"],
                gpu={"quota": q["quota"], "limit": q["limit"], "overQuotaWeight": q["weight"]},
            )
        )
        usages[f"c{j}"] = QueueUsage(
            np.zeros(1, np.int64), np.array([q["request"]]), np.zeros(1, np.int64), np.zeros(1, np.int64)
        )
    p = HierarchyPlugin()
    p.open(tree(*objs, default_queue=False), ("nvidia.com/gpu",), np.array([total]), usages)
    queues = p._queues
    fair = {n: q.fair[0] for n, q in queues.items()}
    for q in queues.values():
        assert fair[q.name] <= q.requestable(0)
    for level, amount in (
        ([f"t{i}" for i in range(len(tops))], total),
        ([f"c{j}" for j in range(len(children))], fair.get("t0", 0)),
    ):
        if not level:
            continue
        quotas = sum(
            min(amount if queues[n].deserved[0] >= UNLIMITED else queues[n].deserved[0], queues[n].requestable(0))
            for n in level
        )
        if quotas <= amount:
            assert sum(fair[n] for n in level) <= amount


cohort_queue_st = st.fixed_dictionaries(
    {
        "nominal": st.integers(0, 20),
        "borrowing": st.one_of(st.none(), st.integers(0, 10)),
        "lending": st.one_of(st.none(), st.integers(0, 20)),
        "cohort": st.sampled_from([None, "x", "x", "y"]),
    }
)


@given(
    st.lists(cohort_queue_st, min_size=1, max_size=5),
    st.lists(st.tuples(st.integers(0, 4), st.integers(1, 8)), max_size=40),
)
def test_cohort_quota_invariants_under_random_allocation(queues, tasks):
    objs = []
    for i, q in enumerate(queues):
        resource = {"name": "cpu", "nominalQuota": q["nominal"]}
        if q["cohort"] is not None:
            if q["borrowing"] is not None:
                resource["borrowingLimit"] = q["borrowing"]
            if q["lending"] is not None:
                resource["lendingLimit"] = min(q["lending"], q["nominal"])
        objs.append(
            kueue(f"q{i}", cohort=q["cohort"], covered=["cpu"], flavors=[{"name": "f", "resources": [resource]}])
        )
    p = CohortPlugin()
    p.open(tree(*objs, default_queue=False), ("cpu",), np.array([10**6]), {})
    for i, cores in tasks:
        name = f"q{i % len(queues)}"
        if p.allocatable(name, np.array([cores * 1000])):
            p.on_allocate(name, np.array([cores * 1000]))
    status = p.status()
    for cohort in {q["cohort"] for q in queues}:
        members = [f"q{i}" for i, q in enumerate(queues) if q["cohort"] == cohort]
        if cohort is None:
            for m in members:
                assert status[m].allocated[0] <= status[m].deserved[0]
            continue
        attrs = [p._attrs[m] for m in members]
        pool = sum(int(a.nominal[0] - a.guaranteed[0]) for a in attrs)
        assert sum(max(int(a.allocated[0] - a.guaranteed[0]), 0) for a in attrs) <= pool  # lenders keep theirs
        assert sum(int(a.allocated[0]) for a in attrs) <= sum(int(a.nominal[0]) for a in attrs)
        for a in attrs:
            if a.borrowing_limit[0] < UNLIMITED:
                assert a.allocated[0] <= a.nominal[0] + a.borrowing_limit[0]
