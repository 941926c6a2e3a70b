"""The published protocol through the live scheduler (Node/Pod objects, GPUDeviceFit, GPUPlacement) places every
pod exactly where the native trace replay does, for every deterministic policy; the learned target workload;
GPUPlacement's arguments."""

from __future__ import annotations

import numpy as np
import pytest

import vcore
from vcore.errors import ProfileError
from vcore.sim.gpu import live_replay, replay
from vcore.sim.gpu.trace import NodeList, PodList, load_nodes, load_pods, workload_path

DETERMINISTIC = (
    "first-fit",
    "best-fit",
    "fgd",
    "vcore",
    "dot-product",
    "gpu-packing",
    "gpu-clustering",
    "binpack",
    "spread",
)


def synthetic_trace(seed: int = 3) -> tuple[NodeList, PodList]:
    """Two GPU models, 1-8 GPUs per node; CPU-only, fractional, whole and model-constrained pods."""
    rng = np.random.default_rng(seed)
    n = 24
    gpus = rng.choice([1, 2, 4, 8], size=n).astype(np.int32)
    models = [("V100M16" if i % 3 else "T4") for i in range(n)]
    nodes = NodeList(
        [f"node-{i:03d}" for i in range(n)],
        rng.choice([32000, 64000, 96000], size=n).astype(np.int64),
        np.full(n, 262144, dtype=np.int64),
        gpus,
        models,
    )
    m = 260
    num = rng.choice([0, 1, 1, 1, 2, 4], size=m).astype(np.int32)
    milli = np.where(num == 1, rng.choice([100, 250, 500, 1000], size=m), np.where(num > 1, 1000, 0)).astype(np.int32)
    spec = [("T4",) if k % 11 == 0 and num[k] else () for k in range(m)]
    pods = PodList(
        [f"p{k}" for k in range(m)],
        rng.choice([1000, 4000, 8000, 16000], size=m).astype(np.int64),
        rng.choice([1024, 8192], size=m).astype(np.int64),
        num,
        milli,
        spec,
    )
    return nodes, pods


@pytest.mark.parametrize("policy", DETERMINISTIC)
@pytest.mark.parametrize("seed", [1, 2])
def test_live_scheduler_places_every_pod_like_the_replay(policy, seed):
    nodes, pods = synthetic_trace()
    replayed = replay.run_protocol(nodes, pods, policy, seed)
    scheduled = live_replay.run_protocol_live(nodes, pods, policy, seed)
    np.testing.assert_array_equal(scheduled.node_idx, replayed.node_idx)
    assert scheduled.allocated_milli == replayed.allocated_milli[-1]


@pytest.mark.parametrize("policy", ["fgd", "vcore"])
def test_openb_default_live_equals_replay(openb_dir, policy):
    nodes = load_nodes(f"{openb_dir}/openb_node_list_gpu_node.csv")
    pods = load_pods(workload_path(openb_dir, "default"))
    replayed = replay.run_protocol(nodes, pods, policy, 42)
    scheduled = live_replay.run_protocol_live(nodes, pods, policy, 42)
    np.testing.assert_array_equal(scheduled.node_idx, replayed.node_idx)


def test_random_tie_break_still_places_by_score():
    nodes, pods = synthetic_trace()
    by_name = live_replay.run_protocol_live(nodes, pods, "fgd", 1)
    random_ties = live_replay.run_protocol_live(nodes, pods, "fgd", 1, tie_break="Random")
    assert (random_ties.node_idx >= 0).sum() > 0
    assert not np.array_equal(by_name.node_idx, random_ties.node_idx)  # ties are common: some pods move


def learning_scheduler(nodes: NodeList) -> tuple[vcore.Cluster, vcore.Scheduler]:
    """A cluster of the trace's nodes and an FGD scheduler that learns its target workload."""
    cluster = vcore.Cluster()
    for node in live_replay.node_objects(nodes):
        cluster.add_node(node)
    return cluster, vcore.Scheduler(cluster, live_replay.profile_for("fgd"))


def test_learned_target_equals_the_artifacts_rule():
    nodes, pods = synthetic_trace()
    cluster, sched = learning_scheduler(nodes)
    sched.observe(live_replay.pod_objects(pods))
    got = sched.gpu_target()
    want = replay.target_workload(pods, 95.0)
    models = cluster.gpu_devices()["model_names"]

    def as_set(cpu, milli, num, model_sets, weight):
        return sorted(
            (int(c), int(g), int(n), tuple(sorted(m)), round(float(w), 12))
            for c, g, n, m, w in zip(cpu, milli, num, model_sets, weight)
        )

    got_models = [tuple(models[b] for b in range(len(models)) if (int(mask) >> b) & 1) for mask in got["model_mask"]]
    assert as_set(got["cpu_milli"], got["gpu_milli"], got["num_gpu"], got_models, got["weight"]) == as_set(
        want.cpu_milli, want.gpu_milli, want.num_gpu, want.models, want.weight
    )


def test_learned_target_is_refreshed_as_pods_arrive():
    nodes, pods = synthetic_trace()
    _, sched = learning_scheduler(nodes)
    assert len(sched.gpu_target()["weight"]) == 0  # nothing seen yet: no fragmentation to avoid
    sched.schedule(live_replay.pod_objects(pods.take(np.arange(40))))
    first = sched.gpu_target()
    assert 0 < len(first["weight"]) and abs(first["weight"].sum() - 1) < 1e-9


@pytest.mark.parametrize(
    "args, match",
    [
        pytest.param({"policy": "tetris2"}, r"GPUPlacement\).args.policy: .*unknown GPU policy", id="policy"),
        pytest.param({"coverage": 0}, r"args.coverage: must be > 0, got 0", id="coverage"),
        pytest.param({"tieBreak": "Name"}, r"args.tieBreak: must be one of Random, NodeName", id="tie-break"),
        pytest.param({"targetWorkload": []}, r"args.targetWorkload: must have at least 1 item", id="empty-target"),
        pytest.param(
            {"targetWorkload": [{"gpuMilli": 1500}]},
            r"targetWorkload\[0\].gpuMilli: must be in \[0, 1000\]",
            id="target-milli",
        ),
        pytest.param(
            {"targetWorkload": [{"gpuMilli": 500, "numGpu": 2}]},
            r"targetWorkload\[0\].numGpu: a fractional",
            id="target-fraction-count",
        ),
        pytest.param({"targetWorkload": [{"weight": 0}]}, r"targetWorkload\[0\].weight: must be > 0", id="weight"),
        pytest.param({"vcore": {"scale": -1}}, r"args.vcore.scale: must be > 0", id="scale"),
        pytest.param({"vcore": {"pack": 1}}, r"args.vcore.pack: unknown key", id="vcore-key"),
        pytest.param({"polcy": "fgd"}, r"args.polcy: unknown key", id="unknown-key"),
    ],
)
def test_gpu_placement_args_are_validated(args, match):
    config = {"pluginConfig": [{"name": "GPUPlacement", "args": args}]}
    with pytest.raises(ProfileError, match=match):
        vcore.Scheduler(vcore.Cluster(), config)


def test_gpu_placement_args_round_trip():
    config = live_replay.profile_for("vcore")
    config["pluginConfig"][0]["args"]["targetWorkload"] = [
        {"cpuMilli": 4000, "gpuMilli": 500, "weight": 2},
        {"numGpu": 8, "gpuMilli": 1000, "models": ["A100"]},
    ]
    profile = vcore.Profile.from_config(config)
    assert vcore.Profile.from_config(profile.to_dict()) == profile
    assert profile.args["GPUPlacement"].target[0].num_gpu == 1 and profile.args["GPUPlacement"].max_score == 1110


@pytest.mark.parametrize(
    "cpu_per_node, balance_matters", [(4_000_000, False), (24_000, True)], ids=["cpu-abundant", "cpu-scarce"]
)
def test_vcore_balance_bonus_follows_cpu_pressure(cpu_per_node, balance_matters):
    # The balance bonus guards against CPU stranding GPUs: with CPU ~100x what the pods ask (pressure << 0.5) it
    # is off, so vcore places exactly as with vcore_balance_points=0; where CPU is scarce it changes placements.
    nodes, pods = synthetic_trace()
    nodes.cpu_milli[:] = cpu_per_node
    default = replay.run_protocol(nodes, pods, "vcore", 1)
    no_balance = replay.run_protocol(nodes, pods, "vcore", 1, vcore_balance_points=0.0)
    assert np.array_equal(default.node_idx, no_balance.node_idx) != balance_matters
