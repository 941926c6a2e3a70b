"""The value types shared across vcore's layers: results that the cluster, the scheduler and the batch cycle hand
to each other and to callers.

This module sits below every other vcore module: it imports nothing from vcore but :mod:`vcore.errors`, so any
layer may import it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["GpuChoice", "HeldGpus", "Placement", "Preemption", "PreemptionCandidate", "VolumeBinds"]

#: The GPUs a pod holds as the native core reports them: (GPU index, MIG start slice or -1) per device.
HeldGpus = tuple[tuple[int, int], ...]


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
    a ``volcano.sh/gpu-index`` annotation); None for pods without a GPU request or not placed. ``preemption`` is
    what DefaultPreemption found for a pod that was not placed (its text is part of ``message``). ``volumes`` is
    what VolumeBinding's PreBind must write for a placed pod whose claims are not all bound yet (None otherwise).
    """

    pod: str
    node: str | None
    reasons: dict[str, int]
    message: str
    gpus: GpuChoice | None = None
    preemption: Preemption | None = None  # an unplaced pod's preemption (DefaultPreemption), when it ran
    volumes: VolumeBinds | None = None  # a placed pod's PreBind writes (VolumeBinding), when any


class PreemptionCandidate(NamedTuple):
    """A node where evicting ``victims`` (most important first) lets the pod fit, as the dry run found it."""

    node: str
    victims: tuple[str, ...]
    pdb_violations: int  # victims whose PodDisruptionBudget had no disruption left


@dataclass(frozen=True)
class Preemption:
    """What kube-scheduler's DefaultPreemption decides for a pod no node fits: the node it may have once ``victims``
    (most important first) are evicted, or None with kube-scheduler's PostFilter text in ``message``.

    It is decided, not done: the caller evicts the victims and gives the pod ``node`` as its nominatedNodeName, and
    the pod is scheduled again once they are gone. Until then later preemptions leave it the room (a pending pod
    nominated to a node, of the preemptor's priority or higher, counts as there while they are worked out), but a
    plain placement does not.
    """

    node: str | None
    victims: tuple[str, ...] = ()
    pdb_violations: int = 0  # victims whose PodDisruptionBudget had no disruption left
    message: str = ""
    # Every candidate the dry run kept, the chosen one among them (kube-scheduler's DryRunPreemption: those
    # without violations first, each group in the order the nodes were examined).
    candidates: tuple[PreemptionCandidate, ...] = ()
