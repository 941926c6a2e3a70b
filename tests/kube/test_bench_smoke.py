"""The Kubernetes and agent benchmarks (bench/kube_bench.py, bench/agent_bench.py) at a small size on a control
plane of their own, so CI keeps them working: every pod bound by every scheduler, the figures produced. The times
are the benchmarks' business (bench/); nothing here asserts one."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from tests.conftest import control_plane_unavailable

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

NODES, PODS = 60, 150


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    why = control_plane_unavailable()
    if why:
        pytest.skip(why)
    from kube_bench import plane_with_nodes

    with plane_with_nodes(tmp_path_factory.mktemp("bench-smoke"), NODES, gpu_every=10, workers=8) as p:
        yield p


def test_side_by_side(plane, tmp_path):
    from kube_bench import side_by_side

    results = side_by_side(plane, PODS, tmp_path)
    for key in ("limit", "create+bind", "kube-scheduler", "vcore", "vcore-no-events"):
        assert results[key].bound == PODS, key
        assert results[key].pods_per_second > 0
    assert math.isfinite(results["vcore"].p99_ms)


def test_agent_fast_path_beside_gang_cycles(plane, tmp_path):
    from agent_bench import fast_path

    results = fast_path(plane, tmp_path, NODES, n_jobs=20, n_agents=PODS, rate=200.0, max_gang=4)
    assert {r.bound for r in results.values()} == {PODS}
    batch = results["vcore+batch"]
    assert batch.extra["cycles"] > 0 and math.isfinite(batch.event_to_bind_p99_ms)


def test_sharded_and_warm_pool(plane, tmp_path):
    from agent_bench import sharded, warm_pool

    assert {r.bound for r in sharded(plane, tmp_path, PODS, [1, 2]).values()} == {PODS}
    pool = warm_pool(plane, tmp_path, 20, 50.0)
    assert pool["hit"].bound == pool["no pool"].bound == 20 and pool["hit"].extra["hits"] == 20
