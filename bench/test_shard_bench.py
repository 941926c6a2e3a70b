"""The sharding controller's assignment rule: vcore_kube.shardplan.assign on 10,000 nodes (size:
VCORE_SHARD_BENCH_NODES), against the plain-Python reference (tests/kube/shard_reference.py) in the same run,
results asserted equal.

- fresh: no current owners (a controller's first assignment): a Volcano utilization shard (agent: 70..100% cpu,
  warm nodes first, at most 30% of the nodes) and two capacity shards (2:1) over the rest.
- reassign: the same cluster a while later: every owner known, 10% of the nodes' utilization changed, some in
  their move cooldown (the controller's periodic and event-driven run).
Target: well under 1 s for 10,000 nodes (Volcano's design targets under 30 s for 1000 nodes).
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from tests.kube.shard_reference import assign_reference
from vcore_kube.shardplan import WARMUP_LABEL, NodeTable, assign, load_sharding_config

NODES = int(os.environ.get("VCORE_SHARD_BENCH_NODES", 10_000))
GIB = 2**30


@pytest.fixture(scope="module")
def setting():
    config = load_sharding_config(
        {
            "schedulerConfigs": [
                {
                    "name": "agent",
                    "cpuUtilizationMin": 0.7,
                    "cpuUtilizationMax": 1.0,
                    "preferWarmupNodes": True,
                    "minNodes": 1,
                    "maxNodes": int(NODES * 0.3),
                },
                {"name": "batch-a", "strategy": "capacity", "weight": 2},
                {"name": "batch-b", "strategy": "capacity", "weight": 1},
            ],
            "hysteresis": 0.05,
            "balanceTolerance": 0.1,
            "minMoveInterval": "30s",
        }
    )
    rng = np.random.default_rng(11)
    cores = rng.choice([16, 32, 64], size=NODES)
    used = (cores * rng.random(NODES)).round(2)
    rows = [
        (f"n{i:06d}", {WARMUP_LABEL: "true"} if i % 7 == 0 else {}, int(c) * 1000, int(c) * 4 * GIB, int(u * 1000))
        for i, (c, u) in enumerate(zip(cores, used))
    ]
    table = NodeTable.build(config, rows)
    owner = assign(table, config)
    later = NodeTable.build(config, rows)
    changed = rng.choice(NODES, size=NODES // 10, replace=False)
    later.cpu_req[changed] = (later.cpu_alloc[changed] * rng.random(changed.size)).astype(np.int64)
    moved = np.where(rng.random(NODES) < 0.02, 990.0, -np.inf)  # 2% moved 10 s ago: cooling
    return config, table, later, owner, moved


def _bench(benchmark, bench_report, group, run, reference):
    t0 = time.perf_counter()
    want = reference()
    reference_s = time.perf_counter() - t0
    got = run()
    assert got.tolist() == want  # the same shard for every node
    benchmark.group = group
    benchmark.pedantic(run, rounds=10, warmup_rounds=1)
    if benchmark.stats is None:
        return
    median = benchmark.stats.stats.median
    bench_report.add(
        benchmark,
        group,
        "numpy assign",
        target="< 1 s",
        ms=round(median * 1e3, 2),
        ns_per_node=round(median / NODES * 1e9),
        reference_ms=round(reference_s * 1e3, 1),
        speedup_vs_python=round(reference_s / median, 1),
        nodes_per_shard=str(np.bincount(got + 1).tolist()),
    )


def test_shard_fresh_assignment(benchmark, bench_report, setting):
    config, table, _, _, _ = setting
    _bench(
        benchmark,
        bench_report,
        f"sharder fresh {NODES} nodes",
        lambda: assign(table, config),
        lambda: assign_reference(table, config),
    )


def test_shard_reassignment(benchmark, bench_report, setting):
    config, _, later, owner, moved = setting
    _bench(
        benchmark,
        bench_report,
        f"sharder reassign {NODES} nodes",
        lambda: assign(later, config, owner, moved, 1000.0),
        lambda: assign_reference(later, config, owner, moved, 1000.0),
    )
