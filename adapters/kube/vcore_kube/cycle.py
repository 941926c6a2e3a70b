"""The decision seam: the only module that asks vcore where pods go.

Today a cycle is ``vcore.Scheduler.schedule()`` over the pending pods that are due (each compiled once, when
it arrives or changes, so one malformed pod is reported alone and never fails a batch). Switching to vcore's gang
API (``cluster.add_pod``/``update_pod``/``remove_pod`` and ``Scheduler.run_cycle()``) changes this module alone: `add`/`update`/`remove` feed the cluster's pending pods, `run` calls ``run_cycle()`` and copies
its bindings, unschedulable pods, PodGroup statuses and evictions into the same `Outcome`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import vcore

from vcore_kube.convert import Converter


class CycleConfigError(ValueError):
    """A configuration this vcore cannot run."""


@dataclass(frozen=True)
class Binding:
    """Bind pod `key` to `node`; `gpu_index` is the volcano.sh/gpu-index annotation to write first (or None)."""

    key: str
    node: str
    gpu_index: str | None = None


@dataclass
class Outcome:
    bindings: list[Binding] = field(default_factory=list)
    unschedulable: dict[str, tuple[dict[str, int], str]] = field(default_factory=dict)  # key -> (reasons, message)
    podgroups: dict[str, object] = field(default_factory=dict)  # "ns/name" -> status (with the gang API)
    evictions: list[object] = field(default_factory=list)  # with the gang API's preemption


class Cycle:
    def __init__(self, converter: Converter, profile: dict | None = None, cycle: dict | None = None,
                 seed: int = 0) -> None:
        if cycle is not None:
            raise CycleConfigError("cycle: the adapter does not run vcore's gang cycle (Scheduler.run_cycle) yet; "
                                   "remove the key to schedule pod by pod")
        self.converter = converter
        self.scheduler = vcore.Scheduler(converter.cluster, profile, seed=seed)
        self._compiled: dict[str, object] = {}

    def add(self, key: str, pod: dict) -> str | None:
        """A pending pod arrived or changed; returns why vcore cannot read it, or None."""
        try:
            self._compiled[key] = self.scheduler.compile(pod)
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self._compiled.pop(key, None)
            return str(e)
        return None

    update = add

    def remove(self, key: str) -> None:
        self._compiled.pop(key, None)

    def run(self, due: list[str]) -> Outcome:
        """Place the due pending pods (highest priority first, then in the given order); each placed pod is
        assumed (bound in vcore's cluster) until `forget`."""
        batch = [self._compiled[k] for k in due if k in self._compiled]
        batch.sort(key=lambda p: -p.priority)  # stable: equal priorities keep the caller's (arrival) order
        outcome = Outcome()
        for placement in self.scheduler.schedule(batch):
            if placement.node is None:
                outcome.unschedulable[placement.pod] = (placement.reasons, placement.message)
            else:
                gpus = placement.gpus.gpu_index_annotation() if placement.gpus is not None else None
                outcome.bindings.append(Binding(placement.pod, placement.node, gpus))
                self._compiled.pop(placement.pod, None)
        return outcome

    def forget(self, key: str) -> None:
        """Undo an assumption whose bind failed; the pod's resources are free again."""
        self.converter.pod_released(key)
