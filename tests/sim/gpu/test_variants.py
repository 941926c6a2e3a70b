"""Held-out workloads of the openb family (vcore.sim.gpu.variants): derivations on small synthetic lists, and the
held-out check on the real trace (skips when ../shared/data/openb is absent).

Tolerances of the derivations: the multi-GPU share lands within one replacement step of the target, i.e.
``|share - target| <= max pod demand / total demand`` of the derived list; the constrained share is exact up to
rounding to whole pods (``<= 0.5 / n_gpu_pods``).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from tests.sim.gpu.conftest import OPENB_DIR, write
from vcore.sim.gpu.trace import NodeList, PodList, load_nodes
from vcore.sim.gpu.variants import (
    HELDOUT_WORKLOADS,
    constrain_gpu_types,
    constrained_share,
    heldout_comparison,
    load_heldout,
    multi_gpu_share,
    raise_multi_gpu_share,
    restrict_gpu_spec,
    spot_node_list,
    write_node_list,
)

DATA_DIR = OPENB_DIR.parent  # ../shared/data relative to the repo root


def synthetic_pods(n: int = 2000, seed: int = 1) -> PodList:
    """An openb-like mix: 15 % CPU-only, 40 % fractional, 44 % one whole GPU, 1 % multi-GPU (2/4/8)."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(4, size=n, p=[0.15, 0.40, 0.44, 0.01])
    num = np.where(kind == 0, 0, np.where(kind == 3, rng.choice([2, 4, 8], size=n), 1)).astype(np.int32)
    milli = np.where(kind == 0, 0, np.where(kind == 1, rng.integers(50, 1000, size=n), 1000)).astype(np.int32)
    cpu = rng.choice([1000, 4000, 8000, 12000, 16000], size=n).astype(np.int64) * np.maximum(num, 1)
    return PodList(
        names=[f"p{i:05d}" for i in range(n)],
        cpu_milli=cpu,
        memory_mib=(cpu // 1000 * 2048).astype(np.int64),
        num_gpu=num,
        gpu_milli=milli,
        gpu_spec=[() for _ in range(n)],
        source="synthetic",
    )


def synthetic_nodes() -> NodeList:
    specs = [("A", 8, 96000)] * 20 + [("B", 2, 104000)] * 30 + [("C", 4, 32000)] * 5 + [("D", 1, 8000)] * 3
    return NodeList(
        names=[f"n{i:03d}" for i in range(len(specs))],
        cpu_milli=np.array([s[2] for s in specs], dtype=np.int64),
        memory_mib=np.array([s[2] * 4 for s in specs], dtype=np.int64),
        gpu_count=np.array([s[1] for s in specs], dtype=np.int32),
        model=[s[0] for s in specs],
        source="synthetic-nodes",
    )


def same(a: PodList, b: PodList) -> bool:
    return (
        a.names == b.names
        and a.gpu_spec == b.gpu_spec
        and np.array_equal(a.cpu_milli, b.cpu_milli)
        and np.array_equal(a.memory_mib, b.memory_mib)
        and np.array_equal(a.num_gpu, b.num_gpu)
        and np.array_equal(a.gpu_milli, b.gpu_milli)
    )


# ------------------------------------------------------------------------------------------------ multi-GPU share


@pytest.mark.parametrize("percent", [10, 20, 30, 40, 50, 75])
def test_multi_gpu_share_hits_target(percent):
    pods = synthetic_pods()
    out = raise_multi_gpu_share(pods, percent, seed=3)
    demand = out.gpu_demand_milli
    assert abs(multi_gpu_share(out) - percent / 100) <= demand.max() / demand.sum()
    assert out.n_pods == pods.n_pods
    # CPU-only pods and the original multi-GPU pods are untouched; only single-GPU pods were replaced
    changed = np.flatnonzero([a != b for a, b in zip(out.names, pods.names)])
    assert len(changed) > 0 and (pods.num_gpu[changed] == 1).all() and (out.num_gpu[changed] > 1).all()
    keep = np.setdiff1d(np.arange(pods.n_pods), changed)
    assert np.array_equal(out.cpu_milli[keep], pods.cpu_milli[keep])
    # every replacement is a copy of a multi-GPU pod of the source list
    rows = {
        (int(c), int(m), int(n), int(g))
        for c, m, n, g in zip(pods.cpu_milli, pods.memory_mib, pods.num_gpu, pods.gpu_milli)
        if n > 1
    }
    for i in changed:
        assert (int(out.cpu_milli[i]), int(out.memory_mib[i]), int(out.num_gpu[i]), int(out.gpu_milli[i])) in rows


def test_multi_gpu_share_deterministic_per_seed_and_input_untouched():
    pods = synthetic_pods()
    before = synthetic_pods()
    a = raise_multi_gpu_share(pods, 30, seed=5)
    b = raise_multi_gpu_share(pods, 30, seed=5)
    c = raise_multi_gpu_share(pods, 30, seed=6)
    assert same(a, b)
    assert not same(a, c)
    assert same(pods, before)


def test_multi_gpu_share_at_current_share_changes_nothing():
    pods = synthetic_pods()
    out = raise_multi_gpu_share(pods, 100 * multi_gpu_share(pods), seed=0)
    assert out.names == pods.names


@pytest.mark.parametrize(
    "percent,exc,word",
    [
        (0, ValueError, "percent"),
        (100, ValueError, "percent"),
        (-5, ValueError, "percent"),
        (float("nan"), ValueError, "percent"),
        ("20", TypeError, "percent"),
        (1, ValueError, "below"),
    ],
)
def test_multi_gpu_share_rejects_bad_percent(percent, exc, word):
    with pytest.raises(exc, match=word):
        raise_multi_gpu_share(synthetic_pods(), percent, seed=0)


def test_multi_gpu_share_rejects_bad_pods_and_seed():
    pods = synthetic_pods()
    no_multi = pods.take(np.flatnonzero(pods.num_gpu <= 1))
    with pytest.raises(ValueError, match="pods: .*no multi-GPU pod"):
        raise_multi_gpu_share(no_multi, 20, seed=0)
    with pytest.raises(TypeError, match="pods"):
        raise_multi_gpu_share([1, 2, 3], 20, seed=0)
    with pytest.raises(ValueError, match="seed"):
        raise_multi_gpu_share(pods, 20, seed=-1)
    with pytest.raises(TypeError, match="seed"):
        raise_multi_gpu_share(pods, 20, seed=1.5)
    few = pods.take(
        np.concatenate(
            [
                np.flatnonzero(pods.num_gpu > 1)[:1],
                np.flatnonzero(pods.num_gpu == 1)[:50],
                np.flatnonzero(pods.num_gpu == 0),
            ]
        )
    )
    out = raise_multi_gpu_share(few, 99.9, seed=0)  # any target below 100 % is reachable
    assert multi_gpu_share(out) >= 0.999 - out.gpu_demand_milli.max() / out.gpu_demand_milli.sum()


# ------------------------------------------------------------------------------------------------ GPU-type constraints


@pytest.mark.parametrize("percent", [10, 20, 25, 33, 100])
def test_gpu_spec_share_hits_target(percent):
    pods, nodes = synthetic_pods(), synthetic_nodes()
    out = constrain_gpu_types(pods, nodes, percent, seed=2)
    n_gpu = int((pods.num_gpu > 0).sum())
    assert abs(constrained_share(out) - percent / 100) <= 0.5 / n_gpu + 1e-12
    models = {"A", "B", "C", "D"}
    for i, spec in enumerate(out.gpu_spec):
        if not spec:
            continue
        assert pods.num_gpu[i] > 0  # only GPU pods are constrained
        assert set(spec) <= models and list(spec) == sorted(set(spec))
        # the allowed models include a node that can host the pod when empty
        ok = [
            m
            for m, g, c, mem in zip(nodes.model, nodes.gpu_count, nodes.cpu_milli, nodes.memory_mib)
            if m in spec and g >= pods.num_gpu[i] and c >= pods.cpu_milli[i] and mem >= pods.memory_mib[i]
        ]
        assert ok, (i, spec)
    # the other columns are untouched
    assert np.array_equal(out.num_gpu, pods.num_gpu) and np.array_equal(out.cpu_milli, pods.cpu_milli)


def test_gpu_spec_models_follow_capacity_and_mostly_single():
    out = constrain_gpu_types(synthetic_pods(4000), synthetic_nodes(), 50, seed=0)
    specs = [s for s in out.gpu_spec if s]
    sizes = np.bincount([len(s) for s in specs])
    assert sizes[1] > sizes[2] > sizes[3]  # P(k) ~ 2^-(k-1)
    singles = [s[0] for s in specs if len(s) == 1]
    assert singles.count("A") > singles.count("B") > singles.count("D")  # 160 > 60 > 3 GPUs


def test_gpu_spec_deterministic_per_seed_and_existing_constraints_counted():
    pods, nodes = synthetic_pods(), synthetic_nodes()
    a = constrain_gpu_types(pods, nodes, 20, seed=1)
    assert same(a, constrain_gpu_types(pods, nodes, 20, seed=1))
    assert not same(a, constrain_gpu_types(pods, nodes, 20, seed=2))
    assert all(not s for s in pods.gpu_spec)  # input untouched
    b = constrain_gpu_types(a, nodes, 33, seed=1)  # adds constraints on top of the 20 % already there
    assert all(b.gpu_spec[i] == s for i, s in enumerate(a.gpu_spec) if s)
    assert abs(constrained_share(b) - 0.33) <= 0.5 / int((pods.num_gpu > 0).sum()) + 1e-12
    with pytest.raises(ValueError, match="percent: 10 is below"):
        constrain_gpu_types(a, nodes, 10, seed=1)


def test_gpu_spec_rejects_bad_arguments():
    pods, nodes = synthetic_pods(), synthetic_nodes()
    for bad in (0, 100.5, -1, float("inf")):
        with pytest.raises(ValueError, match="percent"):
            constrain_gpu_types(pods, nodes, bad, seed=0)
    with pytest.raises(TypeError, match="nodes"):
        constrain_gpu_types(pods, pods, 10, seed=0)
    cpu_nodes = NodeList(["x"], np.array([1000]), np.array([1000]), np.array([0], dtype=np.int32), [""])
    with pytest.raises(ValueError, match="nodes: .*no GPU node"):
        constrain_gpu_types(pods, cpu_nodes, 10, seed=0)
    cpu_pods = pods.take(np.flatnonzero(pods.num_gpu == 0))
    with pytest.raises(ValueError, match="pods: .*no GPU pod"):
        constrain_gpu_types(cpu_pods, nodes, 10, seed=0)


# ------------------------------------------------------------------------------------------------ spot cluster


def test_spot_node_list_converts_to_openb_form(tmp_path):
    path = write(
        tmp_path,
        "node_info_df.csv",
        "gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,128,0\nH800,8,192,10\nGPU-series-1,4,192,2\n",
    )
    nodes = spot_node_list(path)
    assert nodes.names == ["spot-00", "spot-10", "spot-02"]  # zero-padded: name order = numeric order
    assert nodes.cpu_milli.tolist() == [128000, 192000, 192000]
    assert nodes.memory_mib.tolist() == [128 * 4096, 192 * 4096, 192 * 4096]
    assert nodes.gpu_count.tolist() == [1, 8, 4] and nodes.model == ["A10", "H800", "GPU-series-1"]
    out = str(tmp_path / "openb_nodes.csv")
    write_node_list(nodes, out)
    back = load_nodes(out)
    assert back.names == nodes.names and back.model == nodes.model
    assert np.array_equal(back.cpu_milli, nodes.cpu_milli) and np.array_equal(back.memory_mib, nodes.memory_mib)
    assert spot_node_list(path, mib_per_cpu=1024).memory_mib.tolist() == [128 * 1024, 192 * 1024, 192 * 1024]


@pytest.mark.parametrize(
    "text,word",
    [
        ("sn,cpu_milli,memory_mib,gpu,model\n", "header"),
        (
            "gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,x,128,0\n",
            r"n.csv:2: node '0': gpu_capacity_num: must be an integer, got 'x'",
        ),
        (
            "gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,65,128,0\n",
            r"gpu_capacity_num: must be in \[0, 64\], got 65",
        ),
        ("gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,-4,0\n", r"node '0': cpu_num: must be >= 0"),
        ("gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,nan,0\n", "cpu_num: must be a finite number, got nan"),
        ("gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,abc,0\n", "cpu_num: must be a number, got 'abc'"),
        ("gpu_model,gpu_capacity_num,cpu_num,node_name\n,1,128,0\n", "gpu_model"),
        ("gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,128,0\nA10,1,128,0\n", "duplicate"),
        ("gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,128\n", "columns"),
    ],
)
def test_spot_node_list_rejects_bad_rows(tmp_path, text, word):
    with pytest.raises(ValueError, match=word):
        spot_node_list(write(tmp_path, "n.csv", text))


def test_spot_node_list_rejects_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="path"):
        spot_node_list(str(tmp_path / "absent.csv"))
    path = write(tmp_path, "n.csv", "gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,128,0\n")
    with pytest.raises(ValueError, match="mib_per_cpu"):
        spot_node_list(path, mib_per_cpu=0)


def test_restrict_gpu_spec_drops_absent_models():
    pods = synthetic_pods(5)
    pods.gpu_spec[1] = ("T4",)
    pods.gpu_spec[2] = ("A10", "T4")
    pods.gpu_spec[3] = ("A10",)
    nodes = NodeList(
        ["a", "b"],
        np.array([64000, 64000]),
        np.array([1 << 20, 1 << 20]),
        np.array([1, 8], dtype=np.int32),
        ["A10", "H800"],
    )
    out, dropped, narrowed = restrict_gpu_spec(pods, nodes)
    assert (dropped, narrowed) == (1, 1)
    assert out.gpu_spec[1] == () and out.gpu_spec[2] == ("A10",) and out.gpu_spec[3] == ("A10",)
    assert pods.gpu_spec[1] == ("T4",)  # input untouched


def test_load_heldout_rejects_unknown_workload(tmp_path):
    with pytest.raises(ValueError, match="workload"):
        load_heldout(str(tmp_path), "gpuspec99")
    with pytest.raises(FileNotFoundError, match="data_dir"):
        load_heldout(str(tmp_path), "gpuspec10")
    with pytest.raises(ValueError, match="workloads"):
        heldout_comparison(str(tmp_path), ["default"])


# ------------------------------------------------------------------------------------------------ the held-out check


@pytest.fixture(scope="module")
def heldout_data(openb_dir) -> str:
    if not (DATA_DIR / "alibaba-spot-gpu-v2026" / "node_info_df.csv").is_file():
        pytest.skip(f"spot node list not available: {DATA_DIR / 'alibaba-spot-gpu-v2026'} is absent")
    return str(DATA_DIR)


def test_heldout_workloads_shape(heldout_data):
    for w in HELDOUT_WORKLOADS:
        nodes, pods, info = load_heldout(heldout_data, w)
        if w.startswith("multigpu"):
            assert 100 * info["multi_gpu_share"] == pytest.approx(int(w[-2:]), abs=0.1)
        elif w.startswith("gpuspec"):
            assert 100 * info["constrained_share"] == pytest.approx(int(w[-2:]), abs=0.02)
        else:
            assert nodes.n_nodes == 4278 and int(nodes.gpu_count.sum()) == 10412
            assert info["gpu_spec_dropped"] == 0  # the default list has no gpu_spec at all


@pytest.fixture(scope="module")
def heldout_result(heldout_data, gpu_native):
    t0 = time.perf_counter()
    res = heldout_comparison(heldout_data, HELDOUT_WORKLOADS, ("fgd", "vcore"), range(42, 52), ("name",), jobs=2)
    return res["name"], time.perf_counter() - t0


@pytest.mark.parametrize("workload", HELDOUT_WORKLOADS)
def test_vcore_beats_fgd_on_heldout_workload(heldout_result, workload):
    by_w, _ = heldout_result
    fgd, vcore = by_w[workload]["fgd"]["mean"], by_w[workload]["vcore"]["mean"]
    assert vcore > fgd, f"{workload}: vcore {100 * vcore:.2f} % <= fgd {100 * fgd:.2f} % (mean of seeds 42-51)"
