"""A plain-Python reference of vcore_kube.shardplan.assign, written from its docstring node by node (lists and
sorted(), no numpy): the property tests and the sharder benchmark compare the two."""

from __future__ import annotations

import math

from vcore_kube.shardplan import CAPACITY, UTILIZATION, NodeTable, ShardingConfig, percent


def assign_reference(table: NodeTable, config: ShardingConfig, owner=None, moved_at=None, now: float = 0.0) -> list:
    specs = config.scheduler_configs
    n = len(table.names)
    current = [-1] * n if owner is None else [int(x) for x in owner]
    moved = [-math.inf] * n if moved_at is None else [float(x) for x in moved_at]
    cpu_alloc = [int(x) for x in table.cpu_alloc]
    cpu_req = [int(x) for x in table.cpu_req]
    mem_alloc = [int(x) for x in table.mem_alloc]
    warm = [bool(x) for x in table.warm]
    pool = [[bool(x) for x in row] for row in table.pool]
    pct = [(cpu_req[i] * 200 + cpu_alloc[i]) // (2 * cpu_alloc[i]) if cpu_alloc[i] > 0 else -1 for i in range(n)]
    exact = [cpu_req[i] / (cpu_alloc[i] if cpu_alloc[i] > 0 else 1) for i in range(n)]
    cooling = [(now - moved[i]) < config.min_move_interval for i in range(n)]
    margin = percent(config.hysteresis)
    out = [-1] * n

    def preference(spec):
        return lambda i: (warm[i] != spec.prefer_warmup_nodes, -exact[i], i)

    for s, spec in enumerate(specs):
        kept = []
        for i in range(n):
            if current[i] != s or not pool[s][i]:
                continue
            if spec.strategy == UTILIZATION:
                lo = percent(spec.cpu_utilization_min) - margin
                hi = percent(spec.cpu_utilization_max) + margin
                if not ((pct[i] >= 0 and lo <= pct[i] <= hi) or cooling[i]):
                    continue
            kept.append(i)
        if len(kept) > spec.max_nodes:
            kept = sorted(kept, key=preference(spec))[: spec.max_nodes]
        for i in kept:
            out[i] = s
    for s, spec in enumerate(specs):
        if spec.strategy != UTILIZATION:
            continue
        have = out.count(s)
        lo, hi = percent(spec.cpu_utilization_min), percent(spec.cpu_utilization_max)
        if have < spec.max_nodes:
            eligible = [i for i in range(n) if out[i] == -1 and pool[s][i] and pct[i] >= 0 and lo <= pct[i] <= hi]
            for i in sorted(eligible, key=preference(spec))[: spec.max_nodes - have]:
                out[i] = s
                have += 1
        if have < spec.min_nodes:
            rest = [i for i in range(n) if out[i] == -1 and pool[s][i] and pct[i] >= 0]
            rest.sort(key=lambda i: (max(lo - pct[i], pct[i] - hi), warm[i] != spec.prefer_warmup_nodes, i))
            for i in rest[: spec.min_nodes - have]:
                out[i] = s
    shards = [s for s, spec in enumerate(specs) if spec.strategy == CAPACITY]
    if not shards:
        return out
    in_pools = [any(pool[s][i] for s in shards) for i in range(n)]
    cpu_total = sum(cpu_alloc[i] for i in range(n) if in_pools[i]) or 1
    mem_total = sum(mem_alloc[i] for i in range(n) if in_pools[i]) or 1
    cap = [cpu_alloc[i] / cpu_total + mem_alloc[i] / mem_total for i in range(n)]
    weight = {s: float(specs[s].weight) for s in shards}
    load, count = {}, {}
    for s in shards:
        load[s] = math.fsum(cap[i] for i in range(n) if out[i] == s)
        count[s] = out.count(s)
    for i in sorted((i for i in range(n) if out[i] == -1 and in_pools[i]), key=lambda i: (-cap[i], i)):
        best, best_key = -1, math.inf
        for s in shards:
            if pool[s][i] and count[s] < specs[s].max_nodes:
                key = (load[s] + cap[i]) / weight[s]
                if key < best_key:
                    best, best_key = s, key
        if best >= 0:
            out[i] = best
            load[best] += cap[i]
            count[best] += 1
    total_weight = sum(weight.values())
    while True:
        mean = sum(load.values()) / total_weight
        pairs = sorted(
            (
                (load[o] / weight[o] - load[u] / weight[u], o, u)
                for o in shards
                for u in shards
                if o != u and count[u] < specs[u].max_nodes and count[o] > specs[o].min_nodes
            ),
            key=lambda p: (-p[0], p[1], p[2]),
        )
        moved_any = False
        for gap, o, u in pairs:
            if gap <= config.balance_tolerance * mean:
                break
            movable = sorted(
                (i for i in range(n) if out[i] == o and pool[u][i] and not cooling[i]), key=lambda i: (-cap[i], i)
            )
            for i in movable:
                c = cap[i]
                if load[u] / weight[u] + c / weight[u] > load[o] / weight[o] - c / weight[o]:
                    continue
                if count[u] >= specs[u].max_nodes or count[o] <= specs[o].min_nodes:
                    break
                out[i] = u
                load[o] -= c
                load[u] += c
                count[o] -= 1
                count[u] += 1
                moved_any = True
            if moved_any:
                break
        if not moved_any:
            return out
