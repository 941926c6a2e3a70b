"""The value types shared across vcore's layers: results that the cluster, the scheduler and the batch cycle hand
to each other and to callers.

This module sits below every other vcore module: it imports nothing from vcore but :mod:`vcore.errors`, so any
layer may import it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["GpuChoice", "Placement", "VolumeBinds"]


@dataclass(frozen=True)
class GpuChoice:
    """The GPUs a placed pod takes on its node: ``indices`` ascending for whole GPUs and shared slices; for MIG one
    entry per instance, with the start slot of each instance in ``mig_starts`` (same length)."""

    indices: tuple[int, ...]
    mig_starts: tuple[int, ...] = ()

    def gpu_index_annotation(self) -> str:
        """The value for an annotation such as ``volcano.sh/gpu-index`` (``"0,1"``; distinct GPUs)."""
        return ",".join(str(i) for i in dict.fromkeys(self.indices))


@dataclass(frozen=True)
class VolumeBinds:
    """What kube-scheduler's VolumeBinding PreBind writes before a placed pod is bound (what its Reserve assumed):
    each ``bindings`` entry (PV name, claim ``namespace/name``, claim uid) sets the PV's ``spec.claimRef`` to the
    claim (with the ``pv.kubernetes.io/bound-by-controller`` annotation when it was not bound to it already); each
    claim in ``provisions`` gets the ``volume.kubernetes.io/selected-node: <node>`` annotation. Then the pod waits
    until its claims are bound."""

    node: str
    bindings: tuple[tuple[str, str, str], ...]
    provisions: tuple[str, ...]


class Placement(NamedTuple):
    """Where one pod went: a node name, or None with the reason summary.

    ``gpus`` are the node-local GPU devices a GPU pod took (``gpus.gpu_index_annotation()`` gives the value of
    a ``volcano.sh/gpu-index`` annotation); None for pods without a GPU request or not placed. ``volumes`` is what
    VolumeBinding's PreBind must write for a placed pod whose claims are not all bound yet (None otherwise).
    """

    pod: str
    node: str | None
    reasons: dict[str, int]
    message: str
    gpus: GpuChoice | None = None
    volumes: VolumeBinds | None = None
