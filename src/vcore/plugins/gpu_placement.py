"""GPUPlacement's typed arguments: which GPU placement policy scores nodes, and the target workload FGD uses.

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
from dataclasses import dataclass
from typing import Any, Mapping

from vcore.errors import ProfileError
from vcore.gpu.policies import DEFAULT_POLICY, native_policy_name

__all__ = ["TargetSpec", "GPUPlacementArgs", "parse_gpu_placement_args"]

_KEYS = ("policy", "coverage", "targetWorkload", "vcore", "tieBreak", "apiVersion", "kind")
TIE_BREAKS = ("Random", "NodeName")
_SPEC_KEYS = ("cpuMilli", "gpuMilli", "numGpu", "models", "weight")
_VCORE_KEYS = ("scale", "packPoints", "balancePoints")


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
            "vcore": {"scale": self.vcore_scale, "packPoints": self.vcore_pack_points,
                      "balancePoints": self.vcore_balance_points},
            "tieBreak": self.tie_break,
        }
        if self.target is not None:
            out["targetWorkload"] = [
                {"cpuMilli": t.cpu_milli, "gpuMilli": t.gpu_milli, "numGpu": t.num_gpu, "models": list(t.models),
                 "weight": t.weight} for t in self.target]
        return out


def _check_keys(value: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
    for key in value:
        if key not in allowed:
            raise ProfileError(f"{path}.{key}: unknown field (known: {', '.join(allowed)})")


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ProfileError(f"{path}: expected a mapping, got {type(value).__name__}")
    return value


def _number(value: Any, path: str, lo: float, hi: float, *, lo_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProfileError(f"{path}: expected a number, got {value!r}")
    if value < lo or value > hi or (lo_open and value == lo):
        raise ProfileError(f"{path}: must be in {'(' if lo_open else '['}{lo}, {hi}], got {value}")
    return float(value)


def _int(value: Any, path: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProfileError(f"{path}: expected an integer, got {value!r}")
    if not lo <= value <= hi:
        raise ProfileError(f"{path}: must be in [{lo}, {hi}], got {value}")
    return value


def _spec(value: Any, path: str) -> TargetSpec:
    value = _mapping(value, path)
    _check_keys(value, _SPEC_KEYS, path)
    cpu = _int(value.get("cpuMilli", 0), f"{path}.cpuMilli", 0, 2**62)
    milli = _int(value.get("gpuMilli", 0), f"{path}.gpuMilli", 0, 1000)
    num = _int(value.get("numGpu", 1 if milli else 0), f"{path}.numGpu", 0, 64)
    if 0 < milli < 1000 and num > 1:
        raise ProfileError(f"{path}.numGpu: a fractional gpuMilli needs numGpu 1, got {num}")
    models = value.get("models") or ()
    if not isinstance(models, (list, tuple)) or not all(isinstance(m, str) and m for m in models):
        raise ProfileError(f"{path}.models: expected a list of model names, got {models!r}")
    weight = _number(value.get("weight", 1.0), f"{path}.weight", 0.0, math.inf, lo_open=True)
    return TargetSpec(cpu, milli, num, tuple(models), weight)


def parse_gpu_placement_args(args: Mapping[str, Any], path: str) -> GPUPlacementArgs:
    """Validate GPUPlacement ``args`` (path names the args in error messages)."""
    _check_keys(args, _KEYS, path)
    policy = args.get("policy", DEFAULT_POLICY)
    try:
        policy = native_policy_name(policy)
    except (TypeError, ValueError) as exc:
        raise ProfileError(f"{path}.policy: {exc}") from None
    coverage = _number(args.get("coverage", 95.0), f"{path}.coverage", 0.0, 100.0, lo_open=True)
    target = None
    if args.get("targetWorkload") is not None:
        raw = args["targetWorkload"]
        if not isinstance(raw, (list, tuple)) or not raw:
            raise ProfileError(f"{path}.targetWorkload: expected a non-empty list of specs")
        target = tuple(_spec(v, f"{path}.targetWorkload[{i}]") for i, v in enumerate(raw))
    tie_break = args.get("tieBreak", "Random")
    if tie_break not in TIE_BREAKS:
        raise ProfileError(f"{path}.tieBreak: must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    knobs = _mapping(args.get("vcore") or {}, f"{path}.vcore")
    _check_keys(knobs, _VCORE_KEYS, f"{path}.vcore")
    return GPUPlacementArgs(
        policy=policy, coverage=coverage, target=target, tie_break=tie_break,
        vcore_scale=_number(knobs.get("scale", 1000.0), f"{path}.vcore.scale", 0.0, math.inf, lo_open=True),
        vcore_pack_points=_number(knobs.get("packPoints", 1.0), f"{path}.vcore.packPoints", 0.0, 100.0),
        vcore_balance_points=_number(knobs.get("balancePoints", 10.0), f"{path}.vcore.balancePoints", 0.0, 100.0),
    )
