"""GPUPlacement (vcore's): choose the node and its GPUs together with a GPU placement policy (score).

Its typed arguments say which policy scores nodes, and the target workload FGD uses.

Shape in a profile's ``pluginConfig`` (camelCase, as kube-scheduler plugin args)::

    - name: GPUPlacement
      args:
        policy: fgd              # first-fit | best-fit | random | fgd | dot-product | gpu-packing |
                                 # gpu-clustering | binpack | spread | vcore (default); the FGD paper's names
                                 # (FGD, BestFit, DotProd ...) are accepted too
        coverage: 95             # fgd: the learned target keeps the most frequent specs covering this % of pods
        targetWorkload:          # optional: a fixed target instead of the one learned from the pods seen
          - {cpuMilli: 8000, gpuMilli: 500, numGpu: 1, weight: 3}
          - {cpuMilli: 32000, gpuMilli: 1000, numGpu: 4, models: [A100], weight: 1}
        vcore: {scale: 1000, packPoints: 1, balancePoints: 10}   # the vcore policy's knobs
        tieBreak: Random         # Random (kube-scheduler: a seeded random best node) | NodeName (the smallest
                                 # node name among the best, the FGD simulator's rule: replays its protocol)

Every key is validated; an unknown key or a bad value is a ProfileError naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.gpu.policies import DEFAULT_POLICY, native_policy_name
from vcore.plugins.base import SCORE, NodePlugin
from vcore.validation import ANY, Integer, ListOf, Number, Record, String, fail, join

__all__ = ["PLUGIN", "GPUPlacementArgs", "TargetSpec", "parse_args"]

TIE_BREAKS = ("Random", "NodeName")


@dataclass(frozen=True)
class TargetSpec:
    """One pod spec of a given target workload: CPU milli, GPU share per GPU (milli), GPU count, allowed models."""

    cpu_milli: int
    gpu_milli: int
    num_gpu: int
    models: tuple[str, ...] = ()
    weight: float = 1.0


@dataclass(frozen=True)
class GPUPlacementArgs:
    policy: str = DEFAULT_POLICY
    coverage: float = 95.0
    target: tuple[TargetSpec, ...] | None = None  # None: learned online from the pods the scheduler sees
    vcore_scale: float = 1000.0
    vcore_pack_points: float = 1.0
    vcore_balance_points: float = 10.0
    tie_break: str = "Random"

    @property
    def max_score(self) -> int:
        """Largest node score: tenths of a point, 0..1000 (vcore adds up to 10 x its bonus points)."""
        if self.policy != "vcore":
            return 1000
        return 1000 + math.ceil(10 * (self.vcore_pack_points + self.vcore_balance_points))

    def native(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "coverage": self.coverage,
            "learn": self.target is None,
            "target": [(t.cpu_milli, t.gpu_milli, t.num_gpu, list(t.models), t.weight) for t in self.target or ()],
            "vcore_scale": self.vcore_scale,
            "vcore_pack_points": self.vcore_pack_points,
            "vcore_balance_points": self.vcore_balance_points,
            "tie_break": self.tie_break,
        }

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "policy": self.policy,
            "coverage": self.coverage,
            "vcore": {
                "scale": self.vcore_scale,
                "packPoints": self.vcore_pack_points,
                "balancePoints": self.vcore_balance_points,
            },
            "tieBreak": self.tie_break,
        }
        if self.target is not None:
            out["targetWorkload"] = [
                {
                    "cpuMilli": t.cpu_milli,
                    "gpuMilli": t.gpu_milli,
                    "numGpu": t.num_gpu,
                    "models": list(t.models),
                    "weight": t.weight,
                }
                for t in self.target
            ]
        return out


_SPEC = Record(
    {
        "cpuMilli": Integer(0, 2**62),
        "gpuMilli": Integer(0, 1000),
        "numGpu": Integer(0, 64),
        "models": ListOf(String(nonempty=True)),
        "weight": Number(0.0, open_lo=True),
    }
)
_ARGS = Record(
    {
        "policy": ANY,
        "coverage": Number(0.0, 100.0, open_lo=True),
        "targetWorkload": ANY,
        "vcore": ANY,
        "tieBreak": String(choices=TIE_BREAKS),
        "apiVersion": ANY,
        "kind": ANY,
    }
)
_KNOBS = Record(
    {"scale": Number(0.0, open_lo=True), "packPoints": Number(0.0, 100.0), "balancePoints": Number(0.0, 100.0)}
)


def _spec(value: Any, path: str) -> TargetSpec:
    spec = _SPEC(value, path, ProfileError)
    milli = spec.get("gpuMilli", 0)
    num = spec.get("numGpu", 1 if milli else 0)
    if 0 < milli < 1000 and num > 1:
        raise fail(ProfileError, join(path, "numGpu"), f"a fractional gpuMilli needs numGpu 1, got {num}")
    return TargetSpec(spec.get("cpuMilli", 0), milli, num, spec.get("models", ()), spec.get("weight", 1.0))


def parse_args(args: Mapping[str, Any], path: str) -> GPUPlacementArgs:
    """Validate GPUPlacement ``args`` (path names the args in error messages)."""
    checked = _ARGS(args, path, ProfileError)
    try:
        policy = native_policy_name(args.get("policy", DEFAULT_POLICY))
    except (TypeError, ValueError) as exc:
        raise fail(ProfileError, join(path, "policy"), str(exc)) from None
    target = None
    if args.get("targetWorkload") is not None:
        specs = ListOf(ANY, min_len=1)(args["targetWorkload"], join(path, "targetWorkload"), ProfileError)
        target = tuple(_spec(v, join(join(path, "targetWorkload"), i)) for i, v in enumerate(specs))
    knobs = _KNOBS(args.get("vcore") or {}, join(path, "vcore"), ProfileError)
    return GPUPlacementArgs(
        policy=policy,
        coverage=checked.get("coverage", 95.0),
        target=target,
        tie_break=checked.get("tieBreak", "Random"),
        vcore_scale=knobs.get("scale", 1000.0),
        vcore_pack_points=knobs.get("packPoints", 1.0),
        vcore_balance_points=knobs.get("balancePoints", 10.0),
    )


PLUGIN = NodePlugin(
    "GPUPlacement",
    frozenset({SCORE}),
    parse_args,
    GPUPlacementArgs(),
    max_score=lambda args: args.max_score,
    to_args=GPUPlacementArgs.to_dict,
)
