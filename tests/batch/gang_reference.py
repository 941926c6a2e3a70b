"""Pure-Python reference of the native gang placement (Engine.place_gang), for the property tests.

With percentageOfNodesToScore 100 the native candidate discovery finds every feasible node, so the native rule is
plain sequential placement: each task in order goes to the best feasible node as the cluster stands after the
tasks before it (normalized scores over the nodes feasible now), a task over the queue's headroom is skipped,
and when the gang ends below its minimums every placement is undone. ``allowed`` (node names) and ``cap`` ({node:
tasks at most}) narrow the feasible nodes; ``bonus`` ({node: score}) adds to a node's final score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import reference as ref


@dataclass
class GangOutcome:
    nodes: list[str | None]  # per task, after any undo
    ready: bool
    first_unfit: int  # first task no node fit, -1 when none
    reasons: dict[str, int]  # why first_unfit fit nowhere


def reference_place_gang(
    cluster: ref.ReferenceCluster,
    tasks: list[dict],
    roles: list[int],
    role_need: list[int],
    need: int,
    headroom: dict[str, int] | None,
    profile_native: dict,
    all_or_nothing: bool,
    choose: Callable[[str, set[str]], str],
    *,
    allowed: set[str] | None = None,
    cap: dict[str, int] | None = None,
    bonus: dict[str, float] | None = None,
) -> GangOutcome:
    headroom = dict(headroom or {})
    room = dict(cap) if cap is not None else None
    bonus = bonus or {}
    role_need = list(role_need)
    nodes: list[str | None] = [None] * len(tasks)
    first_unfit, reasons = -1, {}
    for i, pod in enumerate(tasks):
        p = ref.RefPod.from_dict(pod)
        if any(p.requests.get(r, 0) > left for r, left in headroom.items()):
            continue
        feasible, counts = ref.reference_filter(cluster, p, profile_native)
        open_nodes = [n for n in feasible if (allowed is None or n in allowed) and (room is None or room[n] > 0)]
        if not open_nodes:
            if first_unfit < 0:  # the reasons count every node, as kube-scheduler reports them
                first_unfit, reasons = i, counts
            continue
        scores = ref.reference_score(cluster, p, profile_native, open_nodes)
        scores = {n: v + bonus.get(n, 0) for n, v in scores.items()}
        top = max(scores.values())
        chosen = choose(p.key, {n for n, s in scores.items() if s == top})
        cluster.bind(p, chosen)
        if room is not None:
            room[chosen] -= 1
        nodes[i] = chosen
        need -= 1
        role_need[roles[i]] -= 1
        for r in headroom:
            headroom[r] -= p.requests.get(r, 0)
    ready = need <= 0 and all(n <= 0 for n in role_need)
    if not ready and all_or_nothing:
        for i, node in enumerate(nodes):
            if node is not None:
                cluster.unbind(ref.pod_key(tasks[i]))
                nodes[i] = None
    return GangOutcome(nodes, ready, first_unfit, reasons)
