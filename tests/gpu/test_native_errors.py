"""Bad input to the native GPU kernels raises ValueError/TypeError naming the field; the GIL is released."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tests.gpu.test_fragment import target

I64, I32, U64 = np.int64, np.int32, np.uint64
TGT = target([(1000, 500, 1, 0, 1.0)])


def inv(gpu, **over):
    args = dict(
        cpu_milli=np.array([8000, 8000], I64),
        memory=np.array([100, 100], I64),
        node_model=np.array([0, 0], I32),
        dev_offsets=np.array([0, 2, 4], I32),
        dev_free_milli=np.full(4, 1000, I32),
    )
    args.update(over)
    return gpu.GpuInventory(**args)


BAD_INVENTORY = [
    ("offsets-length", dict(dev_offsets=np.array([0, 2], I32)), "dev_offsets has 2 entries"),
    (
        "offsets-decreasing",
        dict(dev_offsets=np.array([0, 3, 2], I32), dev_free_milli=np.full(2, 1000, I32)),
        "dev_offsets is not non-decreasing",
    ),
    ("free-over-1000", dict(dev_free_milli=np.array([1000, 1001, 0, 0], I32)), "dev_free_milli[1] out of range"),
    ("negative-cpu", dict(cpu_milli=np.array([-1, 0], I64)), "cpu_milli[0] is negative"),
    ("model-range", dict(node_model=np.array([0, 64], I32)), "node_model[1] out of range"),
    ("device-count", dict(dev_free_milli=np.full(3, 1000, I32)), "dev_free_milli has 3 entries"),
    ("memory-length", dict(memory=np.array([1], I64)), "memory has 1 entries"),
    (
        "too-many-gpus",
        dict(dev_offsets=np.array([0, 65, 65], I32), dev_free_milli=np.full(65, 1000, I32)),
        "at most 64",
    ),
]


@pytest.mark.parametrize("over,message", [b[1:] for b in BAD_INVENTORY], ids=[b[0] for b in BAD_INVENTORY])
def test_bad_inventory(gpu_native, over, message):
    with pytest.raises(ValueError, match="gpu inventory") as err:
        inv(gpu_native, **over)
    assert message in str(err.value)


def test_wrong_types(gpu_native):
    with pytest.raises(TypeError, match="cpu_milli"):
        inv(gpu_native, cpu_milli=np.array(["a", "b"]))
    with pytest.raises(ValueError, match="1-d"):
        inv(gpu_native, cpu_milli=np.zeros((2, 2), I64))


def replay(gpu, inventory, pods, order=None, tgt=TGT, policy="fgd"):
    arr = np.array(pods, dtype=np.int64).reshape(-1, 5)
    order = np.array([0, 1], I32) if order is None else order
    return gpu.replay(
        inventory,
        arr[:, 0],
        arr[:, 1],
        arr[:, 2].astype(I32),
        arr[:, 3].astype(I32),
        arr[:, 4].astype(U64),
        order,
        tgt,
        policy,
        0,
    )


BAD_PODS = [
    ("fraction-over-one", [(1, 1, 1, 1500, 0)], "pod 0: gpu_milli out of range 0..1000"),
    ("negative-memory", [(1, -1, 0, 0, 0)], "pod 0: memory is negative"),
    ("negative-cpu", [(0, 0, 0, 0, 0), (-5, 0, 0, 0, 0)], "pod 1: cpu_milli is negative"),
    ("fractional-multi", [(1, 1, 2, 500, 0)], "pod 0: a fractional gpu_milli needs num_gpu 1"),
    ("num-gpu-range", [(1, 1, 65, 1000, 0)], "pod 0: num_gpu out of range"),
]


@pytest.mark.parametrize("pods,message", [b[1:] for b in BAD_PODS], ids=[b[0] for b in BAD_PODS])
def test_bad_pods(gpu_native, pods, message):
    with pytest.raises(ValueError) as err:
        replay(gpu_native, inv(gpu_native), pods)
    assert message in str(err.value)


def test_bad_replay_arguments(gpu_native):
    i = inv(gpu_native)
    with pytest.raises(ValueError, match="order is not a permutation"):
        replay(gpu_native, i, [(1, 1, 0, 0, 0)], order=np.array([0, 0], I32))
    with pytest.raises(ValueError, match="order has 3 entries"):
        replay(gpu_native, i, [(1, 1, 0, 0, 0)], order=np.array([0, 1, 2], I32))
    with pytest.raises(ValueError, match="unknown GPU policy 'nope'"):
        replay(gpu_native, i, [(1, 1, 0, 0, 0)], policy="nope")
    with pytest.raises(ValueError, match="target workload spec 0: weight"):
        replay(gpu_native, i, [(1, 1, 0, 0, 0)], tgt=target([(1, 500, 1, 0, float("nan"))]))
    with pytest.raises(ValueError, match="target: expected a tuple"):
        replay(gpu_native, i, [(1, 1, 0, 0, 0)], tgt=TGT[:3])
    with pytest.raises(ValueError, match="equal lengths"):
        gpu_native.replay(
            i,
            np.zeros(2, I64),
            np.zeros(1, I64),
            np.zeros(2, I32),
            np.zeros(2, I32),
            np.zeros(2, U64),
            np.array([0, 1], I32),
            TGT,
            "fgd",
            0,
        )


def test_empty_inputs(gpu_native):
    empty = gpu_native.GpuInventory(
        np.zeros(0, I64), np.zeros(0, I64), np.zeros(0, I32), np.zeros(1, I32), np.zeros(0, I32)
    )
    res = gpu_native.replay(
        empty,
        np.array([1000], I64),
        np.zeros(1, I64),
        np.ones(1, I32),
        np.array([500], I32),
        np.zeros(1, U64),
        np.zeros(0, I32),
        TGT,
        "fgd",
        0,
    )
    assert res["node_idx"].tolist() == [-1]
    res = replay(gpu_native, inv(gpu_native), [])
    assert len(res["node_idx"]) == 0


def test_gil_released_during_replay(gpu_native):
    n = 400
    big = gpu_native.GpuInventory(
        np.full(n, 10**9, I64),
        np.full(n, 10**9, I64),
        np.zeros(n, I32),
        np.arange(0, 8 * n + 1, 8, dtype=I32),
        np.full(8 * n, 1000, I32),
    )
    rng = np.random.default_rng(0)
    p = 20000
    milli = rng.choice([100, 250, 500, 700], p).astype(I32)
    tgt = target([(1000, m, 1, 0, 0.25) for m in (100, 250, 500, 700)])
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        t0 = time.perf_counter()
        gpu_native.replay(
            big,
            np.full(p, 1000, I64),
            np.zeros(p, I64),
            np.ones(p, I32),
            milli,
            np.zeros(p, U64),
            np.arange(n, dtype=I32),
            tgt,
            "best-fit",
            0,
        )
        t1 = time.perf_counter()
    finally:
        stop.set()
        t.join()
    during = [x for x in ticks if t0 < x < t1]
    if t1 - t0 > 0.05:
        assert len(during) >= 3, "the ticker thread made no progress: GIL held during replay"
