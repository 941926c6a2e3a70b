"""Which scheduler instance gets which nodes: the sharding controller's configuration and its assignment rule, a
pure function of a node table (numpy) that reassigns 10,000 nodes in milliseconds.

Each entry of ``schedulerConfigs`` is one shard (one Volcano NodeShard, one ``vcore-scheduler --shard NAME``):

    schedulerConfigs:
      - name: agent                  # the NodeShard's name
        type: agent                  # free text, as Volcano's
        strategy: utilization        # utilization (Volcano's allocation-rate) | capacity (vcore's)
        cpuUtilizationMin: 0.7       # utilization: nodes whose requested/allocatable cpu is in the range
        cpuUtilizationMax: 1.0
        preferWarmupNodes: true      # utilization: warm nodes (warmupLabel=warmupLabelValue) first
        minNodes: 1
        maxNodes: 100
        nodeSelector: {pool: agent}  # the node pool the shard draws from (matchLabels; every node by default)
        weight: 1                    # capacity: the shard's share of its pool's allocatable capacity
    shardSyncPeriod: 60s             # periodic reassignment (besides significant changes)
    enableNodeEventTrigger: true     # reassign on node changes and utilization moves
    significantChange: 0.1           # a node's utilization moving this much is a significant change
    hysteresis: 0.05                 # a node keeps its utilization shard while within its range +- this
    balanceTolerance: 0.1            # capacity shares are rebalanced only beyond this relative gap
    minMoveInterval: 30s             # a node that moved stays where it is at least this long
    warmupLabel: node.volcano.sh/warmup
    warmupLabelValue: "true"
    leaderElect: true                # replicas of the controller elect a leader (Lease vcore-system/vcore-sharder)
    metricsAddress: 0.0.0.0:10262

The rule (``assign``), deterministic (ties by node order, the table's name order):
1. keep: a node stays with its shard while it is in the shard's pool and, for a utilization shard, its
   utilization is within the range widened by ``hysteresis`` -- or it moved less than ``minMoveInterval`` ago
   (never flap); a shard over ``maxNodes`` keeps its best nodes (by its own order);
2. utilization shards, in configuration order, take unassigned pool nodes whose utilization (in percent, rounded
   as Volcano rounds it) is in their range: warm nodes first when preferred (last otherwise), then the most
   utilized, up to ``maxNodes``; a shard below ``minNodes`` tops up with the pool nodes closest to its range;
3. capacity shards share the remaining nodes of their pools: each goes (largest first) to the matching shard with
   the least allocatable capacity per weight (cpu and memory, each as a fraction of the pools' total), up to
   ``maxNodes``; then, only when two shards' capacity per weight differ by more than ``balanceTolerance`` of the
   mean, the fewest nodes (largest first) move from the richer to the poorer without reversing the gap.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vcore.validation import LABEL_KEY, Boolean, Integer, ListOf, MapOf, String
from vcore_kube.config import NAME, ConfigError, ListenAddress, Real, Seconds, Section, read_yaml

UTILIZATION, CAPACITY = "utilization", "capacity"
WARMUP_LABEL = "node.volcano.sh/warmup"  # Volcano's warm node label


@dataclass(frozen=True)
class ShardSpec:
    name: str
    type: str = ""
    strategy: str = UTILIZATION
    cpu_utilization_min: float = 0.0
    cpu_utilization_max: float = 1.0
    prefer_warmup_nodes: bool = False
    min_nodes: int = 0
    max_nodes: int = 1_000_000
    node_selector: dict[str, str] = field(default_factory=dict)
    weight: int = 1


@dataclass(frozen=True)
class ShardingConfig:
    scheduler_configs: tuple[ShardSpec, ...]
    shard_sync_period: float = 60.0
    enable_node_event_trigger: bool = True
    significant_change: float = 0.1
    hysteresis: float = 0.05
    balance_tolerance: float = 0.1
    min_move_interval: float = 30.0
    warmup_label: str = WARMUP_LABEL
    warmup_label_value: str = "true"
    leader_elect: bool = True  # the controller's replicas elect a leader on the Lease vcore-system/vcore-sharder
    metrics_address: str = "0.0.0.0:10262"  # /metrics /healthz /readyz; "" disables

    def index(self, name: str) -> int:
        for i, spec in enumerate(self.scheduler_configs):
            if spec.name == name:
                return i
        raise KeyError(f"schedulerConfigs: no shard named {name!r}")


# Label values (k8s.io/apimachinery IsValidLabelValue): empty, or up to 63 alphanumerics, '-', '_', '.'.
LABEL_VALUE = String(max_len=63, pattern=r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", what="a valid label value")
FRACTION = Real(0.0, 1.0)

SHARD_SPEC = Section(
    ShardSpec,
    {
        "name": NAME,
        "type": String(),
        "strategy": String(choices=(UTILIZATION, CAPACITY)),
        "cpu_utilization_min": FRACTION,
        "cpu_utilization_max": FRACTION,
        "prefer_warmup_nodes": Boolean(),
        "min_nodes": Integer(0),
        "max_nodes": Integer(0),
        "node_selector": MapOf(LABEL_VALUE, key=LABEL_KEY),
        "weight": Integer(1),
    },
    required=("name",),
)

SHARDING_CONFIG = Section(
    ShardingConfig,
    {
        "scheduler_configs": ListOf(SHARD_SPEC, min_len=1),
        "shard_sync_period": Seconds(),
        "enable_node_event_trigger": Boolean(),
        "significant_change": FRACTION,
        "hysteresis": FRACTION,
        "balance_tolerance": FRACTION,
        "min_move_interval": Seconds(),
        "warmup_label": LABEL_KEY,
        "warmup_label_value": LABEL_VALUE,
        "leader_elect": Boolean(),
        "metrics_address": ListenAddress(),
    },
    required=("scheduler_configs",),
)


def load_sharding_config(source: str | Path | dict[str, Any]) -> ShardingConfig:
    """The sharding controller's configuration from a YAML file or a dict; errors name the key."""
    if isinstance(source, dict):
        return _parse(source)
    try:
        return _parse(read_yaml(source))
    except ConfigError as e:
        if str(e).startswith(f"{source}: "):
            raise
        raise ConfigError(f"{source}: {e}") from None


def _parse(data: Any) -> ShardingConfig:
    config = SHARDING_CONFIG(data, "", ConfigError)
    for i, spec in enumerate(config.scheduler_configs):
        where = f"schedulerConfigs[{i}]"
        if spec.cpu_utilization_min > spec.cpu_utilization_max:
            raise ConfigError(f"{where}: cpuUtilizationMin must be <= cpuUtilizationMax")
        if spec.max_nodes < spec.min_nodes:
            raise ConfigError(f"{where}: needs minNodes <= maxNodes")
    names = [s.name for s in config.scheduler_configs]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise ConfigError(f"schedulerConfigs: shard {duplicate!r} appears twice")
    return config


# -- the node table ----------------------------------------------------------------------------------------------
@dataclass
class NodeTable:
    """What the rule reads of the nodes, one row per node in name order: allocatable and requested cpu (milli),
    allocatable memory (bytes), whether the node is warm, and per shard whether it is in the shard's pool."""

    names: list[str]
    cpu_alloc: np.ndarray  # int64[N]
    mem_alloc: np.ndarray  # int64[N]
    cpu_req: np.ndarray  # int64[N]
    warm: np.ndarray  # bool[N]
    pool: np.ndarray  # bool[S, N]

    @classmethod
    def build(cls, config: ShardingConfig, nodes: Iterable[tuple[str, dict[str, str], int, int, int]]) -> NodeTable:
        """From (name, labels, cpu_alloc_milli, mem_alloc_bytes, cpu_req_milli) per node."""
        rows = sorted(nodes, key=lambda r: r[0])
        selectors = [spec.node_selector for spec in config.scheduler_configs]
        pool = np.ones((len(selectors), len(rows)), dtype=bool)
        for s, selector in enumerate(selectors):
            if selector:
                items = tuple(selector.items())
                pool[s] = [all(labels.get(k) == v for k, v in items) for _, labels, *_ in rows]
        return cls(
            names=[r[0] for r in rows],
            cpu_alloc=np.array([r[2] for r in rows], dtype=np.int64),
            mem_alloc=np.array([r[3] for r in rows], dtype=np.int64),
            cpu_req=np.array([r[4] for r in rows], dtype=np.int64),
            warm=np.array([r[1].get(config.warmup_label) == config.warmup_label_value for r in rows], dtype=bool),
            pool=pool,
        )

    def utilization_percent(self) -> np.ndarray:
        """requested/allocatable cpu in whole percent, rounded half up as Volcano rounds it; -1 where the node
        has no allocatable cpu (no utilization: no utilization shard takes it)."""
        alloc = self.cpu_alloc
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = (self.cpu_req * 200 + alloc) // np.where(alloc > 0, 2 * alloc, 1)
        return np.where(alloc > 0, pct, -1)


def percent(fraction: float) -> int:
    """A configured fraction in whole percent (Go's math.Round: half away from zero)."""
    return int(math.floor(fraction * 100 + 0.5))


# -- the rule ----------------------------------------------------------------------------------------------------
def assign(
    table: NodeTable,
    config: ShardingConfig,
    owner: np.ndarray | None = None,
    moved_at: np.ndarray | None = None,
    now: float = 0.0,
) -> np.ndarray:
    """Each node's shard (index into config.scheduler_configs, -1: none), from the current owners (int32[N], -1:
    none; None: a fresh start) and when each node last changed shard (float64[N] of the caller's clock)."""
    specs = config.scheduler_configs
    n = len(table.names)
    current = np.full(n, -1, np.int32) if owner is None else np.asarray(owner, np.int32)
    moved = np.full(n, -np.inf) if moved_at is None else np.asarray(moved_at, np.float64)
    if current.shape != (n,) or moved.shape != (n,):
        raise ValueError(f"assign: owner and moved_at need one entry per node ({n})")
    pct = table.utilization_percent()
    valid = pct >= 0
    exact = table.cpu_req / np.where(table.cpu_alloc > 0, table.cpu_alloc, 1)  # ordering only
    cooling = (now - moved) < config.min_move_interval
    margin = percent(config.hysteresis)
    index = np.arange(n)
    out = np.full(n, -1, np.int32)

    def order(idx: np.ndarray, spec: ShardSpec) -> np.ndarray:
        """The shard's preference among nodes: the preferred warm group first, then most utilized, then name."""
        group = table.warm[idx] != spec.prefer_warmup_nodes
        return idx[np.lexsort((idx, -exact[idx], group))]

    # 1. keep
    for s, spec in enumerate(specs):
        mine = (current == s) & table.pool[s]
        if spec.strategy == UTILIZATION:
            lo, hi = percent(spec.cpu_utilization_min) - margin, percent(spec.cpu_utilization_max) + margin
            mine &= (valid & (pct >= lo) & (pct <= hi)) | cooling
        kept = index[mine]
        if kept.size > spec.max_nodes:
            kept = order(kept, spec)[: spec.max_nodes]
        out[kept] = s
    # 2. utilization shards
    for s, spec in enumerate(specs):
        if spec.strategy != UTILIZATION:
            continue
        have = int((out == s).sum())
        lo, hi = percent(spec.cpu_utilization_min), percent(spec.cpu_utilization_max)
        free = (out == -1) & table.pool[s] & valid
        if have < spec.max_nodes:
            take = order(index[free & (pct >= lo) & (pct <= hi)], spec)[: spec.max_nodes - have]
            out[take] = s
            have += take.size
        if have < spec.min_nodes:
            rest = index[(out == -1) & table.pool[s] & valid]
            distance = np.maximum(lo - pct[rest], pct[rest] - hi)
            group = table.warm[rest] != spec.prefer_warmup_nodes
            out[rest[np.lexsort((rest, group, distance))][: spec.min_nodes - have]] = s
    # 3. capacity shards
    shards = [s for s, spec in enumerate(specs) if spec.strategy == CAPACITY]
    if shards:
        _share_capacity(table, config, shards, out, cooling)
    return out


def capacities(table: NodeTable, shards: list[int]) -> np.ndarray:
    """Each node's capacity: its cpu and memory as fractions of the capacity shards' pools' totals, summed."""
    in_pools = table.pool[shards].any(axis=0)
    cpu_total = int(table.cpu_alloc[in_pools].sum()) or 1
    mem_total = int(table.mem_alloc[in_pools].sum()) or 1
    return table.cpu_alloc / cpu_total + table.mem_alloc / mem_total


def _share_capacity(
    table: NodeTable, config: ShardingConfig, shards: list[int], out: np.ndarray, cooling: np.ndarray
) -> None:
    specs = config.scheduler_configs
    cap = capacities(table, shards)
    weight = {s: float(specs[s].weight) for s in shards}
    load = {s: math.fsum(cap[out == s].tolist()) for s in shards}  # exact: the same whatever the order
    count = {s: int((out == s).sum()) for s in shards}
    # Unassigned pool nodes, largest first, each to the matching shard with the least capacity per weight.
    idx = np.flatnonzero((out == -1) & table.pool[shards].any(axis=0))
    idx = idx[np.lexsort((idx, -cap[idx]))]
    pool = table.pool
    for i in idx.tolist():
        best, best_key = -1, math.inf
        c = float(cap[i])
        for s in shards:
            if pool[s, i] and count[s] < specs[s].max_nodes:
                key = (load[s] + c) / weight[s]
                if key < best_key:
                    best, best_key = s, key
        if best >= 0:
            out[i] = best
            load[best] += c
            count[best] += 1
    # Rebalance only beyond the tolerance: the fewest moves, largest nodes first, never reversing the gap.
    total_weight = sum(weight.values())
    for _ in range(len(table.names) + 1):
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
        moved = False
        for gap, o, u in pairs:
            if gap <= config.balance_tolerance * mean:
                break
            movable = np.flatnonzero((out == o) & pool[u] & ~cooling)
            if movable.size == 0:
                continue
            movable = movable[np.lexsort((movable, -cap[movable]))]
            for i in movable.tolist():
                c = float(cap[i])
                if load[u] / weight[u] + c / weight[u] > load[o] / weight[o] - c / weight[o]:
                    continue  # would reverse the gap
                if count[u] >= specs[u].max_nodes or count[o] <= specs[o].min_nodes:
                    break
                out[i] = u
                load[o] -= c
                load[u] += c
                count[o] -= 1
                count[u] += 1
                moved = True
            if moved:
                break
        if not moved:
            return


def shard_members(table: NodeTable, config: ShardingConfig, owner: np.ndarray) -> dict[str, list[str]]:
    """{shard name: its nodes, sorted}."""
    names = np.array(table.names, dtype=object)
    return {spec.name: names[owner == s].tolist() for s, spec in enumerate(config.scheduler_configs)}
