"""GPU placement policies of the GPUPlacement plugin and the trace replay: names, aliases and what each one does.

vcore's default policy (``vcore``) = FGD's fragmentation score, computed on a target workload averaged over the
coverage cut-offs 95..100 % (every spec counts, rare ones a little; FGD's single 95 % cut-off makes it blind to
the rare CPU-heavy specs that strand GPUs), plus two bonuses in score points: up to 1 point for packing (share of
the node's GPU already allocated) and up to 10 points for keeping the node's CPU and GPU allocated in the same
proportion. The balance bonus guards against CPU stranding GPUs, so it is scaled by the workload's CPU pressure
(the CPU it asks per GPU over the CPU the cluster has per GPU): full at >= 0.8, none at <= 0.5, where CPU is
abundant and the bonus would only override FGD. Measured on the 15 shared openb workloads and 9 held-out ones
(vcore.sim.gpu.variants: multi-GPU-heavy, GPU-type-constrained, and the spot-GPU cluster), seeds 42-51, it
allocates at least as much GPU as FGD on every one; see bench/test_gpu_bench.py.

All policies are native kernels (``vcore._native._core.gpu``); this module only maps user-facing names to them.
Every policy scores each feasible node with an integer 0..100 and the highest score wins, ties to the smallest
node name. The published names of the FGD paper (``FGD``, ``BestFit``, ``DotProd`` ...) are accepted as aliases.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

__all__ = [
    "POLICIES",
    "ALIASES",
    "DEFAULT_POLICY",
    "VCORE_GPU_RES_WEIGHT",
    "PolicyName",
    "native_policy_name",
    "describe",
]

#: The canonical policy names (the native kernels'), the keys of POLICIES.
PolicyName = Literal[
    "first-fit",
    "best-fit",
    "random",
    "fgd",
    "dot-product",
    "gpu-packing",
    "gpu-clustering",
    "binpack",
    "spread",
    "vcore",
]

POLICIES: dict[PolicyName, str] = {
    "first-fit": "first feasible node in name order, first GPU that fits",
    "best-fit": "int(100*(1 - 0.5*(cpu_free-cpu)/128000 - 0.5*(gpu_free-gpu)/8000)); tightest GPU",
    "random": "uniformly random feasible node and fitting GPU (seeded)",
    "fgd": "fragmentation gradient descent: int(100*sigmoid((F_before-F_after)/1000))",
    "dot-product": "Tetris dot product of free resources and request, smallest alignment wins",
    "gpu-packing": "shared GPUs first, then idle GPUs of used nodes, then idle nodes",
    "gpu-clustering": "nodes already running pods of the same GPU-count class first",
    "binpack": "Volcano binpack: most allocated node (cpu, memory, GPU), tightest card",
    "spread": "least allocated node, emptiest card",
    "vcore": "vcore default: FGD on a target blended over coverage cut-offs + GPU packing + CPU/GPU balance",
}

ALIASES: dict[str, PolicyName] = {
    "fgd": "fgd",
    "FGD": "fgd",
    "bestfit": "best-fit",
    "BestFit": "best-fit",
    "firstfit": "first-fit",
    "FirstFit": "first-fit",
    "Random": "random",
    "dotprod": "dot-product",
    "DotProd": "dot-product",
    "dotproduct": "dot-product",
    "tetris": "dot-product",
    "packing": "gpu-packing",
    "GpuPacking": "gpu-packing",
    "clustering": "gpu-clustering",
    "GpuClustering": "gpu-clustering",
    "vcore-default": "vcore",
    "default": "vcore",
}

DEFAULT_POLICY = "vcore"

# vcore's target workload counts a pod of n whole GPUs as 1 + n * VCORE_GPU_RES_WEIGHT pods.
VCORE_GPU_RES_WEIGHT = 0.0


def _canonical(name: str) -> TypeGuard[PolicyName]:
    return name in POLICIES


def native_policy_name(name: str) -> PolicyName:
    """The canonical policy name for ``name`` (case-sensitive aliases, then case-insensitive); ValueError if unknown."""
    if not isinstance(name, str):
        raise TypeError(f"policy: expected a string, got {type(name).__name__}")
    if _canonical(name):
        return name
    if name in ALIASES:
        return ALIASES[name]
    low = name.lower().replace("_", "-")
    if _canonical(low):
        return low
    if low in ALIASES:
        return ALIASES[low]
    raise ValueError(f"policy: unknown GPU policy {name!r} (known: {', '.join(POLICIES)})")


def describe(name: str) -> str:
    """One-line description of a policy."""
    return POLICIES[native_policy_name(name)]
