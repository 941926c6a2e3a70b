"""FGD's fragmentation measure and score: hand-computed cases and native vs pure-Python reference (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.gpu import reference as ref


def target(specs):
    """Native target tuple from (cpu, gpu_milli, num_gpu, mask, weight) specs."""
    return (
        np.array([s[0] for s in specs], dtype=np.int64),
        np.array([s[1] for s in specs], dtype=np.int32),
        np.array([s[2] for s in specs], dtype=np.int32),
        np.array([s[3] for s in specs], dtype=np.uint64),
        np.array([s[4] for s in specs], dtype=np.float64),
    )


def inventory(gpu, nodes):
    """nodes: list of dicts cpu, mem, model, frees."""
    counts = [len(n["frees"]) for n in nodes]
    offsets = np.zeros(len(nodes) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    frees = np.array([x for n in nodes for x in n["frees"]], dtype=np.int32)
    return gpu.GpuInventory(
        np.array([n["cpu"] for n in nodes], dtype=np.int64),
        np.array([n["mem"] for n in nodes], dtype=np.int64),
        np.array([n["model"] for n in nodes], dtype=np.int32),
        offsets,
        frees,
    )


# (id, node, specs, expected F_n)
HAND = [
    # one spec, 0.5 GPU: GPUs with < 500 free are fragment: 300 + 200
    ("half-gpu", dict(cpu=8000, frees=[1000, 300, 200, 600], model=0), [(1000, 500, 1, 0, 1.0)], 500.0),
    # whole-GPU spec needing 2 idle GPUs, only one idle: everything (2100) is fragment
    ("two-gpu-does-not-fit", dict(cpu=8000, frees=[1000, 300, 200, 600], model=0), [(1000, 1000, 2, 0, 1.0)], 2100.0),
    # one whole GPU fits: fragment = GPUs below 1000 = 1100
    ("one-gpu", dict(cpu=8000, frees=[1000, 300, 200, 600], model=0), [(1000, 1000, 1, 0, 1.0)], 1100.0),
    # CPU lacking: all free GPU milli is fragment
    ("cpu-lacking", dict(cpu=500, frees=[1000, 1000], model=0), [(1000, 500, 1, 0, 1.0)], 2000.0),
    # CPU-only spec counts every idle GPU
    ("cpu-only-spec", dict(cpu=8000, frees=[1000, 400], model=0), [(1000, 0, 0, 0, 1.0)], 1400.0),
    # model not allowed: everything is fragment
    ("model-mismatch", dict(cpu=8000, frees=[1000, 400], model=1), [(1000, 300, 1, 0b01, 1.0)], 1400.0),
    # weighted mix: 0.25 * 200 (half-GPU spec: 200 < 500) + 0.75 * 1200 (two GPUs do not fit)
    (
        "mix",
        dict(cpu=8000, frees=[1000, 200], model=0),
        [(1000, 500, 1, 0, 0.25), (1000, 1000, 2, 0, 0.75)],
        0.25 * 200 + 0.75 * 1200,
    ),
    # no GPU left: zero
    ("empty", dict(cpu=8000, frees=[0, 0], model=0), [(1000, 500, 1, 0, 1.0)], 0.0),
]


@pytest.mark.parametrize("node,specs,expected", [h[1:] for h in HAND], ids=[h[0] for h in HAND])
def test_fragment_hand_computed(gpu_native, node, specs, expected):
    node = dict(node, mem=1 << 20)
    inv = inventory(gpu_native, [node])
    got = gpu_native.node_fragments(inv, target(specs))
    assert got[0] == pytest.approx(expected)
    assert ref.node_fragment(node["cpu"], node["model"], node["frees"], specs) == pytest.approx(expected)


def test_fgd_score_hand_computed(gpu_native):
    # half-GPU pod on [1000, 600]: putting it on the 600 GPU leaves [1000, 100]; target = 0.5-GPU spec.
    # F_before = 0 (both GPUs can host 500); after on GPU1: 100 is fragment -> delta -100 -> int(100*sigmoid(-0.1))
    specs = [(0, 500, 1, 0, 1.0)]
    node = dict(cpu=8000, mem=1 << 20, model=0, frees=[1000, 600])
    inv = inventory(gpu_native, [node])
    score, mask = gpu_native.fgd_scores(inv, 1000, 0, 1, 500, 0, target(specs))
    # on GPU0: [500, 600] -> F = 0 -> 50; on GPU1: [1000, 100] -> F = 100 -> int(47.5) = 47
    assert score.tolist() == [50]
    assert mask.tolist() == [1]  # GPU 0
    assert ref.fgd_score(node, (1000, 0, 1, 500, 0), specs) == (50, [0])


nodes_st = st.lists(
    st.fixed_dictionaries(
        {
            "cpu": st.integers(0, 64000),
            "mem": st.integers(0, 1 << 20),
            "model": st.integers(-1, 2),
            "frees": st.lists(st.sampled_from([0, 50, 100, 250, 500, 700, 1000]), min_size=0, max_size=8),
        }
    ),
    min_size=1,
    max_size=6,
)
spec_st = st.tuples(
    st.integers(0, 32000),
    st.sampled_from([0, 100, 250, 500, 1000]),
    st.integers(0, 4),
    st.sampled_from([0, 1, 2, 6]),
    st.floats(0.01, 1.0),
).map(lambda t: (t[0], t[1], (1 if 0 < t[1] < 1000 else t[2]) if t[1] else 0, t[3], t[4]))
pod_st = st.tuples(
    st.integers(0, 32000),
    st.integers(0, 1 << 18),
    st.integers(0, 4),
    st.sampled_from([0, 100, 300, 500, 1000]),
    st.sampled_from([0, 1, 2, 3]),
).map(
    lambda t: (t[0], t[1], 0 if t[3] == 0 else (1 if t[3] < 1000 else max(1, t[2])), t[3] if t[2] or t[3] else 0, t[4])
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=nodes_st, specs=st.lists(spec_st, min_size=1, max_size=5), pod=pod_st)
def test_fgd_score_native_matches_reference(gpu_native, nodes, specs, pod):
    for n in nodes:
        if n["model"] < 0:
            n["frees"] = []
    inv = inventory(gpu_native, nodes)
    tgt = target(specs)
    frag = gpu_native.node_fragments(inv, tgt)
    for i, n in enumerate(nodes):
        assert frag[i] == ref.node_fragment(n["cpu"], n["model"], n["frees"], specs)
    score, mask = gpu_native.fgd_scores(inv, *pod, tgt)
    for i, n in enumerate(nodes):
        if not ref.fits(n, pod):
            assert score[i] == -1
            continue
        s, gpus = ref.fgd_score(n, pod, specs)
        assert score[i] == s
        assert int(mask[i]) == sum(1 << g for g in gpus)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=nodes_st,
    specs=st.lists(spec_st, min_size=1, max_size=4),
    pods=st.lists(pod_st, max_size=25),
    policy=st.sampled_from(["fgd", "best-fit", "first-fit"]),
    perm_seed=st.integers(0, 1000),
)
def test_replay_native_matches_reference(gpu_native, nodes, specs, pods, policy, perm_seed):
    for n in nodes:
        if n["model"] < 0:
            n["frees"] = []
    order = np.random.default_rng(perm_seed).permutation(len(nodes)).astype(np.int32)
    inv = inventory(gpu_native, nodes)
    arr = np.array(pods, dtype=np.int64).reshape(-1, 5)
    res = gpu_native.replay(
        inv,
        arr[:, 0],
        arr[:, 1],
        arr[:, 2].astype(np.int32),
        arr[:, 3].astype(np.int32),
        arr[:, 4].astype(np.uint64),
        order,
        target(specs),
        policy,
        0,
    )
    expected = ref.replay(nodes, pods, order.tolist(), specs, policy)
    assert res["node_idx"].tolist() == expected
    # the replay works on a copy: the inventory is unchanged
    assert inv.dev_free_milli.tolist() == [x for n in nodes for x in n["frees"]]
