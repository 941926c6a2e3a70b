"""Fidelity on the real openb trace (skips when ../shared/data/openb is absent): one seed of the default workload.

The full 10-seed comparison with the published numbers is in bench/test_gpu_bench.py; here one seed keeps the suite
fast. Seed 42 with the published protocol: FGD 95.3 %, BestFit 93.3 % (data README).
"""

from __future__ import annotations

import pytest

from vcore.sim.gpu.replay import run_protocol, target_workload
from vcore.sim.gpu.trace import load_nodes, load_pods, node_list_path, workload_path


@pytest.fixture(scope="module")
def default_trace(openb_dir):
    return load_nodes(node_list_path(openb_dir)), load_pods(workload_path(openb_dir, "default"))


def test_trace_shape(default_trace):
    nodes, pods = default_trace
    assert nodes.n_nodes == 1213 and int(nodes.gpu_count.sum()) == 6212
    assert pods.n_pods == 8152
    tw = target_workload(pods)
    assert abs(tw.weight.sum() - 1.0) < 1e-9


@pytest.mark.parametrize("policy,expected", [("fgd", 95.3), ("best-fit", 93.3)])
def test_seed42_matches_published_protocol(default_trace, gpu_native, policy, expected):
    nodes, pods = default_trace
    run = run_protocol(nodes, pods, policy, 42)
    assert 100 * run.final_alloc_ratio == pytest.approx(expected, abs=0.3)
    assert 10_000 < len(run.node_idx) < 11_500  # about 10,600-10,800 pods after inflation to 130 %
