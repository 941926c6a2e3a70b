"""The sharding controller's configuration and assignment rule (vcore_kube.shardplan): Volcano's utilization
strategy (its filter cases), warm-node preference, node limits, vcore's pools and capacity balance, hysteresis
and the move cooldown (never flapping), and the numpy rule against the plain-Python reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vcore_kube.config import ConfigError
from vcore_kube.shardplan import WARMUP_LABEL, NodeTable, assign, load_sharding_config, shard_members

from .shard_reference import assign_reference

GIB = 2**30


def table(config, rows):
    """rows: (name, cpu_alloc cores, cpu_req cores, labels) -> a NodeTable."""
    return NodeTable.build(
        config,
        [(name, labels or {}, int(alloc * 1000), 64 * GIB, int(req * 1000)) for name, alloc, req, labels in rows],
    )


def members(config, t, owner):
    return {k: set(v) for k, v in shard_members(t, config, owner).items()}


# -- configuration ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data, message",
    [
        (
            {"schedulerConfigs": [{"name": "a", "cpuUtilizationMin": 0.7, "cpuUtilizationMax": 0.5}]},
            "cpuUtilizationMin",
        ),
        ({"schedulerConfigs": [{"name": "a", "cpuUtilizationMin": -0.1}]}, "cpuUtilizationMin"),
        ({"schedulerConfigs": [{"name": "a", "cpuUtilizationMax": 1.5}]}, "cpuUtilizationMax"),
        ({"schedulerConfigs": [{"name": "a", "minNodes": 5, "maxNodes": 2}]}, "minNodes <= maxNodes"),
        ({"schedulerConfigs": [{"name": "a", "minNodes": -1}]}, "minNodes"),
        ({"schedulerConfigs": [{"name": "a", "strategy": "random"}]}, "strategy"),
        ({"schedulerConfigs": [{"name": "a", "weight": 0}]}, "weight"),
        ({"schedulerConfigs": [{"name": "a", "nodeSelector": {"pool": 1}}]}, "nodeSelector"),
        ({"schedulerConfigs": [{"name": "a", "colour": "red"}]}, "colour: unknown key"),
        ({"schedulerConfigs": [{"name": "a"}, {"name": "a"}]}, "appears twice"),
        (
            {"schedulerConfigs": [{"name": "Not_A_Name"}]},
            r"schedulerConfigs\[0\]\.name: 'Not_A_Name' is not a DNS-1123 subdomain",
        ),
        ({"schedulerConfigs": [{"type": "agent"}]}, "name: required"),
        ({"schedulerConfigs": []}, "schedulerConfigs: must have at least 1 item"),
        ({}, "schedulerConfigs: required"),
        ({"schedulerConfigs": [{"name": "a"}], "shardSyncPeriod": "soon"}, "shardSyncPeriod"),
        ({"schedulerConfigs": [{"name": "a"}], "hysteresis": 2}, "hysteresis"),
    ],
    ids=[
        "min-above-max",
        "negative-min",
        "max-above-one",
        "min-nodes-above-max",
        "negative-min-nodes",
        "unknown-strategy",
        "zero-weight",
        "selector-not-strings",
        "unknown-key",
        "duplicate",
        "bad-name",
        "no-name",
        "empty-list",
        "missing-list",
        "bad-duration",
        "hysteresis-above-one",
    ],
)
def test_bad_configuration_names_the_key(data, message):
    with pytest.raises(ConfigError, match=message):
        load_sharding_config(data)


def test_volcano_configmap_shape_loads_with_defaults():
    config = load_sharding_config(
        {
            "schedulerConfigs": [
                {
                    "name": "agent-scheduler",
                    "type": "agent",
                    "cpuUtilizationMin": 0.7,
                    "cpuUtilizationMax": 1.0,
                    "preferWarmupNodes": True,
                    "minNodes": 1,
                    "maxNodes": 100,
                },
                {
                    "name": "volcano",
                    "type": "volcano",
                    "cpuUtilizationMin": 0.0,
                    "cpuUtilizationMax": 0.69,
                    "preferWarmupNodes": False,
                    "minNodes": 1,
                    "maxNodes": 100,
                },
            ],
            "shardSyncPeriod": "60s",
            "enableNodeEventTrigger": True,
        }
    )
    assert [s.name for s in config.scheduler_configs] == ["agent-scheduler", "volcano"]
    assert config.shard_sync_period == 60.0 and config.hysteresis == 0.05


# -- Volcano's utilization strategy -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "lo, hi, alloc, req, taken",
    [
        (0.3, 0.7, 10, 5, True),  # in range
        (0.3, 0.7, 10, 2, False),  # below
        (0.3, 0.7, 10, 8, False),  # above
        (0.3, 0.7, 10, 3, True),  # boundary inclusive
        (0.3, 0.7, 1000, 299.6, True),  # 29.96% rounds to 30%, as Volcano rounds to two decimals
        (0.0, 1.0, 0, 0, False),  # no allocatable cpu: no utilization, never taken
        (0.0, 1.0, 10, 0, True),  # the default range takes idle nodes
    ],
    ids=["in-range", "below", "above", "boundary-inclusive", "rounded", "no-metrics", "default-range"],
)
def test_utilization_filter(lo, hi, alloc, req, taken):
    config = load_sharding_config(
        {"schedulerConfigs": [{"name": "s", "cpuUtilizationMin": lo, "cpuUtilizationMax": hi}]}
    )
    t = table(config, [("n", alloc, req, None)])
    assert (assign(t, config)[0] == 0) == taken


def test_warm_nodes_first_then_most_utilized_up_to_max():
    config = load_sharding_config(
        {
            "schedulerConfigs": [
                {
                    "name": "agent",
                    "cpuUtilizationMin": 0.0,
                    "cpuUtilizationMax": 1.0,
                    "preferWarmupNodes": True,
                    "maxNodes": 3,
                },
                {"name": "batch", "maxNodes": 10},
            ]
        }
    )
    warm = {WARMUP_LABEL: "true"}
    t = table(
        config,
        [
            ("cold-busy", 10, 9, None),
            ("cold-idle", 10, 1, None),
            ("warm-idle", 10, 1, warm),
            ("warm-mid", 10, 5, warm),
            ("cold-mid", 10, 5, None),
        ],
    )
    got = members(config, t, assign(t, config))
    assert got == {"agent": {"warm-mid", "warm-idle", "cold-busy"}, "batch": {"cold-idle", "cold-mid"}}


def test_shards_are_exclusive_first_in_order_wins():
    config = load_sharding_config(
        {
            "schedulerConfigs": [
                {"name": "a", "cpuUtilizationMin": 0.0, "cpuUtilizationMax": 0.8},
                {"name": "b", "cpuUtilizationMin": 0.5, "cpuUtilizationMax": 1.0},
            ]
        }
    )
    t = table(config, [("n1", 10, 6, None), ("n2", 10, 9, None), ("n3", 10, 2, None)])
    assert members(config, t, assign(t, config)) == {"a": {"n1", "n3"}, "b": {"n2"}}


def test_min_nodes_tops_up_with_the_closest_nodes():
    config = load_sharding_config(
        {"schedulerConfigs": [{"name": "agent", "cpuUtilizationMin": 0.7, "cpuUtilizationMax": 1.0, "minNodes": 2}]}
    )
    t = table(config, [("busy", 10, 8, None), ("mid", 10, 6, None), ("idle", 10, 0, None)])
    assert members(config, t, assign(t, config)) == {"agent": {"busy", "mid"}}


def test_hysteresis_keeps_a_node_near_the_boundary():
    config = load_sharding_config(
        {
            "schedulerConfigs": [
                {"name": "agent", "cpuUtilizationMin": 0.7, "cpuUtilizationMax": 1.0},
                {"name": "batch", "cpuUtilizationMin": 0.0, "cpuUtilizationMax": 0.69},
            ],
            "hysteresis": 0.05,
        }
    )
    owner = np.array([0], np.int32)
    near = table(config, [("n", 100, 66, None)])  # 66%: batch's range, but within agent's range - 5%
    assert assign(near, config, owner, np.array([-1e9]), 0.0).tolist() == [0]
    far = table(config, [("n", 100, 64, None)])  # 64%: beyond the margin, it moves
    assert assign(far, config, owner, np.array([-1e9]), 0.0).tolist() == [1]


def test_a_node_that_just_moved_stays_during_the_cooldown():
    config = load_sharding_config(
        {
            "schedulerConfigs": [
                {"name": "agent", "cpuUtilizationMin": 0.7, "cpuUtilizationMax": 1.0},
                {"name": "batch", "cpuUtilizationMin": 0.0, "cpuUtilizationMax": 0.69},
            ],
            "minMoveInterval": "30s",
        }
    )
    t = table(config, [("n", 100, 10, None)])
    owner = np.array([0], np.int32)
    assert assign(t, config, owner, np.array([100.0]), 110.0).tolist() == [0]  # moved 10 s ago
    assert assign(t, config, owner, np.array([100.0]), 131.0).tolist() == [1]


def test_node_pools_by_label():
    config = load_sharding_config(
        {
            "schedulerConfigs": [
                {"name": "gpu", "strategy": "capacity", "nodeSelector": {"pool": "gpu"}},
                {"name": "cpu", "strategy": "capacity", "nodeSelector": {"pool": "cpu"}},
            ]
        }
    )
    t = table(config, [("g1", 10, 0, {"pool": "gpu"}), ("c1", 10, 0, {"pool": "cpu"}), ("x", 10, 0, None)])
    assert members(config, t, assign(t, config)) == {"gpu": {"g1"}, "cpu": {"c1"}}


def capacity_config(**extra):
    return load_sharding_config(
        {
            "schedulerConfigs": [
                {"name": "a", "strategy": "capacity", "weight": 2},
                {"name": "b", "strategy": "capacity", "weight": 1},
            ],
            **extra,
        }
    )


def shares(t, owner):
    alloc = t.cpu_alloc.astype(float)
    return [alloc[owner == s].sum() / alloc.sum() for s in (0, 1)]


def test_capacity_balance_by_weight():
    config = capacity_config()
    rng = np.random.default_rng(3)
    t = table(config, [(f"n{i:03d}", int(rng.choice([8, 16, 32])), 0, None) for i in range(300)])
    a, b = shares(t, assign(t, config))
    assert a == pytest.approx(2 / 3, abs=0.02) and b == pytest.approx(1 / 3, abs=0.02)


def test_capacity_is_sticky_and_rebalances_only_beyond_the_tolerance():
    config = capacity_config(balanceTolerance=0.1)
    rows = [(f"n{i:03d}", 16, 0, None) for i in range(90)]
    t = table(config, rows)
    owner = assign(t, config)
    moved = np.full(len(rows), -1e9)
    assert (assign(t, config, owner, moved, 0.0) == owner).all()  # nothing changed: nothing moves
    grown = table(config, rows + [(f"new{i}", 16, 0, None) for i in range(3)])
    before = np.concatenate([owner, np.full(3, -1, np.int32)])
    after = assign(grown, config, before, np.full(93, -1e9), 0.0)
    assert (after[:90] == owner).all()  # new nodes go to the poorer shard; no old node moves
    # Everything on `a` (say, `b` just joined): the fewest moves bring the shares back to 2:1.
    all_a = np.zeros(90, np.int32)
    rebalanced = assign(t, config, all_a, np.full(90, -1e9), 0.0)
    assert int((rebalanced != all_a).sum()) == 30
    assert (assign(t, config, rebalanced, np.full(90, -1e9), 0.0) == rebalanced).all()  # and it stays


def test_capacity_rebalance_skips_nodes_in_cooldown():
    config = capacity_config(minMoveInterval="60s")
    t = table(config, [(f"n{i}", 16, 0, None) for i in range(9)])
    all_a = np.zeros(9, np.int32)
    assert (assign(t, config, all_a, np.full(9, 0.0), 30.0) == all_a).all()


# -- numpy against the reference ---------------------------------------------------------------------------------
shard_spec = st.fixed_dictionaries(
    {
        "strategy": st.sampled_from(["utilization", "capacity"]),
        "cpuUtilizationMin": st.sampled_from([0.0, 0.3, 0.7]),
        "cpuUtilizationMax": st.sampled_from([0.7, 1.0]),
        "preferWarmupNodes": st.booleans(),
        "minNodes": st.integers(0, 3),
        "maxNodes": st.integers(3, 40),
        "weight": st.integers(1, 3),
        "nodeSelector": st.sampled_from([{}, {"pool": "x"}]),
    }
)


@settings(max_examples=150, deadline=None)
@given(
    specs=st.lists(shard_spec, min_size=1, max_size=4),
    nodes=st.lists(
        st.tuples(
            st.sampled_from([0, 4, 16, 64]),
            st.integers(0, 100),
            st.booleans(),
            st.booleans(),
            st.integers(-1, 3),
            st.sampled_from([-1e9, 50.0, 95.0]),
        ),
        max_size=40,
    ),
    hysteresis=st.sampled_from([0.0, 0.05]),
    tolerance=st.sampled_from([0.0, 0.1]),
)
def test_numpy_rule_equals_the_reference(specs, nodes, hysteresis, tolerance):
    config = load_sharding_config(
        {
            "schedulerConfigs": [{"name": f"s{i}", **s} for i, s in enumerate(specs)],
            "hysteresis": hysteresis,
            "balanceTolerance": tolerance,
            "minMoveInterval": "30s",
        }
    )
    rows = [
        (f"n{i:03d}", {"pool": "x"} if in_pool else {}, cores * 1000, cores * GIB, cores * 10 * pct)
        for i, (cores, pct, in_pool, _, _, _) in enumerate(nodes)
    ]
    for i, (_cores, _pct, _in_pool, warm, _, _) in enumerate(nodes):
        if warm:
            rows[i][1][WARMUP_LABEL] = "true"
    t = NodeTable.build(config, rows)
    owner = np.array([min(o, len(specs) - 1) for *_, o, _ in nodes], np.int32)
    moved = np.array([m for *_, m in nodes], np.float64)
    assert assign(t, config).tolist() == assign_reference(t, config)
    assert assign(t, config, owner, moved, 100.0).tolist() == assign_reference(t, config, owner, moved, 100.0)
