"""Each share plugin's headroom says what its allocatable says: a request fits iff it is <= headroom where it asks.

The cycle hands headroom to the native gang placement, which checks every task of a gang against it, so the two
must never disagree: hypothesis draws queue trees, usage and requests for every plugin and compares.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from vcore.batch.shares import SHARE_PLUGINS

from .share_builders import NAMES, kai, kueue, opened, rlist, tree, usage, vec, volcano

_AMOUNT = st.integers(0, 12)


def _vector(draw) -> np.ndarray:
    return vec(cpu=f"{draw(_AMOUNT)}", mem=f"{draw(_AMOUNT)}Gi", gpu=draw(st.integers(0, 4)), pods=draw(_AMOUNT))


@st.composite
def sessions(draw):
    plugin = draw(st.sampled_from(sorted(SHARE_PLUGINS)))
    if plugin == "cohort":

        def quota(name, in_cohort):
            limits = ("borrowingLimit", "lendingLimit") if in_cohort else ()
            nominal = draw(_AMOUNT)
            return {
                "name": name,
                "nominalQuota": str(nominal),
                **{
                    k: str(draw(st.integers(0, nominal if k == "lendingLimit" else 12)))
                    for k in limits
                    if draw(st.booleans())
                },
            }

        cohorts = [draw(st.booleans()) for _ in range(3)]
        queues = [
            kueue(
                f"q{i}",
                cohort="c" if c else None,
                flavors=[{"name": "f", "resources": [quota("cpu", c), quota("memory", c)]}],
            )
            for i, c in enumerate(cohorts)
        ]
        for q in queues:
            for r in q["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
                if r["name"] == "memory":
                    for k in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                        if k in r:
                            r[k] += "Gi"
    elif plugin == "hierarchy":

        def res():
            return {"quota": draw(_AMOUNT), "limit": draw(st.sampled_from([-1, 4, 8, 12])), "overQuotaWeight": 1}

        queues = [
            kai("top", cpu=res(), memory=res(), gpu=res()),
            kai("a", parent="top", cpu=res(), memory=res(), gpu=res()),
            kai("b", parent="top", cpu=res(), memory=res(), gpu=res()),
        ]
    else:

        def queue(i):
            cpu, mem = draw(st.integers(1, 12)), draw(st.integers(1, 12))
            capped = draw(st.booleans())
            deserved = None
            if plugin == "capacity" and draw(st.booleans()):
                deserved = rlist(cpu=draw(st.integers(0, cpu if capped else 12)), mem="1Gi")
            return volcano(
                f"q{i}",
                weight=draw(st.integers(1, 4)),
                capability=rlist(cpu=cpu, mem=f"{mem}Gi") if capped else None,
                deserved=deserved,
                state="Closed" if draw(st.integers(0, 5)) == 0 else None,
            )

        queues = [queue(i) for i in range(3)]
    queue_tree = tree(*queues)
    leaves = [n for n in queue_tree if queue_tree.is_leaf(n)]
    usages = {q: usage(allocated=_vector(draw), pending=_vector(draw)) for q in leaves}
    total = vec(cpu="30", mem="30Gi", gpu=8, pods=110)
    return plugin, opened(SHARE_PLUGINS[plugin](), queue_tree, total, usages), leaves, _vector(draw)


@given(session=sessions())
@settings(max_examples=300)
def test_headroom_agrees_with_allocatable(session):
    _, plugin, leaves, request = session
    if not request.any():
        return  # the contract covers requests that ask for something (a closed queue refuses even nothing)
    for queue in leaves:
        room = plugin.headroom(queue)
        asked = request > 0
        assert room.shape == (len(NAMES),) and room.dtype == np.int64
        assert plugin.allocatable(queue, request) == bool((request <= room)[asked].all()), (queue, room, request)
