"""numpy baseline of the native gang placement (Engine.place_gang), for the gang benchmarks.

It is the same rule, written as one numpy pass over all nodes per task: NodeResourcesFit's resource and pod-count
filter, its LeastAllocated score over cpu and memory (kube-scheduler's integer formula on non-zero requests),
percentageOfNodesToScore 100, the highest score winning and ties going to the smallest seeded key, as the engine
breaks them (splitmix64 of the seed and the run's sequence number, then of the slot). A run of identical tasks
shares one tie order; each run takes the next sequence numbers, as the engine counts them.
"""

from __future__ import annotations

import numpy as np

MASK = np.uint64(2**64 - 1)


def mix64(x):
    """splitmix64's finalizer, elementwise on uint64 (numpy wraps like C++ unsigned arithmetic)."""
    with np.errstate(over="ignore"):
        x = (np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)) & MASK
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & MASK
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & MASK
        return x ^ (x >> np.uint64(31))


def place_runs(
    alloc: dict[str, np.ndarray],
    used: dict[str, np.ndarray],
    runs: list[tuple[int, int, int]],
    seed: int,
    sequence: int,
    headroom: list[int] | None = None,
) -> np.ndarray:
    """Place runs of identical tasks, (count, cpu milli, memory bytes) each, in order; returns the slot of every
    task (-1 when none fits, or when it exceeds the queue's cpu/memory ``headroom``, which it then takes) and
    updates ``used`` (cpu, memory, pods rows) and ``headroom`` in place."""
    cpu_a, mem_a, pods_a = alloc["cpu"], alloc["memory"], alloc["pods"]
    cpu_u, mem_u, pods_u = used["cpu"], used["memory"], used["pods"]
    slots = np.arange(cpu_a.size, dtype=np.uint64)
    out = []
    for count, cpu, mem in runs:
        tie = mix64(mix64(np.uint64(seed) ^ mix64(np.uint64(sequence))) ^ slots)
        sequence += count
        order = np.argsort(tie, kind="stable")  # among equal scores the smallest key wins
        for _ in range(count):
            if headroom is not None and (cpu > headroom[0] or mem > headroom[1]):
                out.append(-1)
                continue
            ok = (pods_u + 1 <= pods_a) & (cpu_u + cpu <= cpu_a) & (mem_u + mem <= mem_a)
            if not ok.any():
                out.append(-1)
                continue
            s_cpu = np.where(cpu_a > 0, (cpu_a - (cpu_u + cpu)) * 100 // np.maximum(cpu_a, 1), 0)
            s_mem = np.where(mem_a > 0, (mem_a - (mem_u + mem)) * 100 // np.maximum(mem_a, 1), 0)
            score = np.where(ok, (s_cpu + s_mem) // 2, -1)
            ranked = score[order]
            best = int(order[int(np.argmax(ranked))])
            cpu_u[best] += cpu
            mem_u[best] += mem
            pods_u[best] += 1
            if headroom is not None:
                headroom[0] -= cpu
                headroom[1] -= mem
            out.append(best)
    return np.array(out, dtype=np.int32)
