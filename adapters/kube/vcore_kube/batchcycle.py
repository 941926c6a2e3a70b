"""The batch's decision seam: the only module that asks vcore's gang cycle where the batch's pods go (the fast
path and warm pools have their own, fastpath.py and warmpool.py).

A cycle is ``vcore.Scheduler.run_cycle()``: vcore's gang cycle over the pending pods it holds (the converter puts
this scheduler's pending pods there as they arrive and change), their PodGroups and queues, with the configured
actions (Volcano's configuration shape; Volcano's default without one). The loop names the pods that are due
(not backing off, not waiting for a cluster change): a job is tried when one of its pending pods is due. The
outcome is what the loop acts on: the bindings to make, why the others stay pending, each PodGroup's status and
the pods to evict for preemption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import vcore

from vcore_kube.convert import Converter


@dataclass(frozen=True)
class Binding:
    """Bind pod `key` to `node`; `gpu_index` is the volcano.sh/gpu-index annotation to write first (or None);
    `volumes` what VolumeBinding's PreBind writes and waits for before (None when every claim is bound)."""

    key: str
    node: str
    gpu_index: str | None = None
    volumes: vcore.VolumeBinds | None = None


@dataclass
class Outcome:
    bindings: list[Binding] = field(default_factory=list)
    unschedulable: dict[str, tuple[dict[str, int], str]] = field(default_factory=dict)  # key -> (reasons, message)
    podgroups: dict[str, vcore.PodGroupStatus] = field(default_factory=dict)  # "ns/name" -> status after the cycle
    evictions: list[vcore.Eviction] = field(default_factory=list)  # victims of preemption and reclaim


class BatchCycle:
    def __init__(self, converter: Converter, profile: dict | None = None, cycle: dict | None = None,
                 seed: int = 0) -> None:
        self.converter = converter
        self.scheduler = vcore.Scheduler(converter.cluster, profile, cycle=cycle, seed=seed)

    def add(self, key: str, pod: dict) -> str | None:
        """A pending pod arrived or changed; returns why vcore cannot read it, or None."""
        return self.converter.pod_pending(pod)

    update = add

    def remove(self, key: str) -> None:
        """A pending pod left the queue (deleted, going, or bound by someone): vcore stops placing it."""
        cluster = self.converter.cluster
        if cluster.has_pod(key) and cluster.node_of(key) is None:
            cluster.remove_pod(key)

    def run(self, due: list[str], between_jobs: Callable[[], None] | None = None) -> Outcome:
        """One gang cycle trying the jobs of the due pods; each placed pod is assumed (bound in vcore's cluster)
        until `forget`. `between_jobs` runs after each job (the fast path's turn)."""
        result = self.scheduler.run_cycle(eligible=due, between_jobs=between_jobs)
        outcome = Outcome(unschedulable=result.unschedulable, podgroups=result.podgroups,
                          evictions=result.evictions)
        for placement in result.bindings:
            assert placement.node is not None, "a binding has its node"
            gpus = placement.gpus.gpu_index_annotation() if placement.gpus is not None else None
            outcome.bindings.append(Binding(placement.pod, placement.node, gpus, placement.volumes))
        return outcome

    @property
    def bind_timeout_seconds(self) -> int:
        """VolumeBinding's bindTimeoutSeconds (how long PreBind waits for the claims to be bound)."""
        return self.scheduler.profile.args["VolumeBinding"].bind_timeout_seconds

    def forget(self, key: str) -> None:
        """Undo an assumption whose bind failed; the pod's resources are free again and it waits in vcore."""
        self.converter.unassume(key)
