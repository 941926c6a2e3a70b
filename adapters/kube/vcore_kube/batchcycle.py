"""The batch's decision seam: the only module that asks vcore's gang cycle where the batch's pods go (the fast
path and warm pools have their own, fastpath.py and warmpool.py).

A cycle is ``vcore.Scheduler.run_cycle()``: vcore's gang cycle over the pending pods it holds (the converter puts
this scheduler's pending pods there as they arrive and change), their PodGroups and queues, with the configured
actions (Volcano's configuration shape; Volcano's default without one). The loop names the pods that are due
(not backing off, not waiting for a cluster change): a job is tried when one of its pending pods is due. The
outcome is what the loop acts on: the bindings to make, why the others stay pending, each PodGroup's status, each
queue's standing and the pods to evict for preemption.

Then, as kube-scheduler's PostFilter, DefaultPreemption (when the profile runs it) for each pod the cycle could not
place that has no gang of its own (no PodGroup, or one with minMember 1) and failed for want of a node: highest
priority first, ``vcore.Scheduler.preempt`` picks a node and victims. Each decision is taken as kube-scheduler's
nominator takes it, at once: the preemptor counts as nominated to the node in vcore (the pods that preempt after it
leave it the room), and lower-priority pods nominated there lose that nomination; the loop writes the same to the
API server and evicts the victims.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import vcore
from vcore.batch.result import Event
from vcore.plugins import DEFAULT_PREEMPTION
from vcore.reasons import PodRejection, is_pod_refusal, post_filter_message
from vcore_kube.convert import Converter


@dataclass(frozen=True)
class Binding:
    """Bind pod `key` to `node`; `gpu_index` is the volcano.sh/gpu-index annotation to write first (or None);
    `volumes` what VolumeBinding's PreBind writes and waits for before (None when every claim is bound)."""

    key: str
    node: str
    gpu_index: str | None = None
    volumes: vcore.VolumeBinds | None = None


@dataclass(frozen=True)
class Preempting:
    """DefaultPreemption's decision for pending pod `key`: evict `victims` (keys) so that it fits `node`; the pods
    in `denominated` lose their nomination to that node."""

    key: str
    node: str
    victims: tuple[str, ...]
    denominated: tuple[str, ...] = ()


@dataclass
class Outcome:
    bindings: list[Binding] = field(default_factory=list)
    unschedulable: dict[str, tuple[dict[str, int], str]] = field(default_factory=dict)  # key -> (reasons, message)
    podgroups: dict[str, vcore.PodGroupStatus] = field(default_factory=dict)  # "ns/name" -> status after the cycle
    queues: dict[str, vcore.QueueStatus] = field(default_factory=dict)  # queue name -> standing after the cycle
    evictions: list[vcore.Eviction] = field(default_factory=list)  # victims of preemption and reclaim
    preemptions: list[Preempting] = field(default_factory=list)  # DefaultPreemption, for pods without a gang
    events: list[Event] = field(default_factory=list)  # what the cycle tells about PodGroups


class BatchCycle:
    def __init__(
        self,
        converter: Converter,
        profile: dict[str, Any] | None = None,
        cycle: dict[str, Any] | None = None,
        seed: int = 0,
    ) -> None:
        self.converter = converter
        self.scheduler = vcore.Scheduler(converter.cluster, profile, cycle=cycle, seed=seed)
        self.preempts = DEFAULT_PREEMPTION in self.scheduler.profile.post_filters
        self._pending: dict[str, dict[str, Any]] = {}  # the pending pods vcore holds, as the API has them

    def add(self, key: str, pod: dict[str, Any]) -> str | None:
        """A pending pod arrived or changed; returns why vcore cannot read it, or None."""
        error = self.converter.pod_pending(pod)
        if error is None:
            self._pending[key] = pod
        else:
            self._pending.pop(key, None)
        return error

    update = add

    def remove(self, key: str) -> None:
        """A pending pod left the queue (deleted, going, or bound by someone): vcore stops placing it."""
        self._pending.pop(key, None)
        cluster = self.converter.cluster
        if cluster.has_pod(key) and cluster.node_of(key) is None:
            cluster.remove_pod(key)

    def run(self, due: list[str], between_jobs: Callable[[], None] | None = None) -> Outcome:
        """One gang cycle trying the jobs of the due pods; each placed pod is assumed (bound in vcore's cluster)
        until `forget`. `between_jobs` runs after each job (the fast path's turn)."""
        result = self.scheduler.run_cycle(eligible=due, between_jobs=between_jobs)
        outcome = Outcome(
            unschedulable=result.unschedulable,
            podgroups=result.podgroups,
            queues=result.queues,
            evictions=result.evictions,
            events=result.events,
        )
        for placement in result.bindings:
            assert placement.node is not None, "a binding has its node"
            gpus = placement.gpus.gpu_index_annotation() if placement.gpus is not None else None
            outcome.bindings.append(Binding(placement.pod, placement.node, gpus, placement.volumes))
            self._pending.pop(placement.pod, None)
        if self.preempts:
            self._preempt(outcome)
        return outcome

    @property
    def bind_timeout_seconds(self) -> int:
        """VolumeBinding's bindTimeoutSeconds (how long PreBind waits for the claims to be bound)."""
        return self.scheduler.profile.args["VolumeBinding"].bind_timeout_seconds

    def _preempt(self, outcome: Outcome) -> None:
        """DefaultPreemption for the unplaced pods without a gang that no node fits, highest priority first; each
        one's PostFilter text joins its FailedScheduling message."""
        batch = self.converter.cluster.batch
        # Not for a pod vcore refuses as a whole (its gates or a field it does not honor say why), nor for one the
        # cycle's own preempt or reclaim evicted for.
        waiting = {e.preemptor for e in outcome.evictions} | set(batch.nominated)
        # A plugin's PreFilter rejection is tried: kube-scheduler's PostFilter runs for it (and says it cannot help).
        tried = [
            k
            for k, (reasons, _) in outcome.unschedulable.items()
            if reasons
            and not any(is_pod_refusal(r) and not isinstance(r, PodRejection) for r in reasons)
            and k in self._pending
            and k in batch.pods
            and k not in waiting
            and not self._in_gang(k)
        ]
        tried.sort(key=lambda k: (-_priority(batch.pods[k]), k))
        for key in tried:
            preemption = self.scheduler.preempt(self._pending[key])
            reasons, message = outcome.unschedulable[key]
            post_filter = post_filter_message(reasons, preemption.message)
            if post_filter:
                outcome.unschedulable[key] = (reasons, f"{message} {post_filter}")
            if preemption.node is None:
                continue
            denominated = self._nominate(key, preemption.node)
            outcome.preemptions.append(Preempting(key, preemption.node, preemption.victims, denominated))

    def _in_gang(self, key: str) -> bool:
        """Whether the pod belongs to a PodGroup of more than one (the cycle's preempt action serves those)."""
        batch = self.converter.cluster.batch
        group = batch.pods[key].group
        podgroup = batch.podgroups.get(group) if group is not None else None
        return podgroup is not None and podgroup.min_member > 1

    def _nominate(self, key: str, node: str) -> tuple[str, ...]:
        """Record in vcore that `key` waits for `node` and that the lower-priority pods nominated there do not;
        returns those."""
        batch = self.converter.cluster.batch
        priority = _priority(batch.pods[key])
        denominated = tuple(
            sorted(
                k
                for k, info in batch.pods.items()
                if k != key
                and k in self._pending
                and info.spec.get("nominated_node") == node
                and _priority(info) < priority
            )
        )
        self._set_nominated(key, node)
        for k in denominated:
            self._set_nominated(k, None)
        return denominated

    def _set_nominated(self, key: str, node: str | None) -> None:
        pod = copy.copy(self._pending[key])
        status = dict(pod.get("status") or {})
        if node is None:
            status.pop("nominatedNodeName", None)
        else:
            status["nominatedNodeName"] = node
        pod["status"] = status
        self.add(key, pod)

    def forget(self, key: str) -> None:
        """Undo an assumption whose bind failed; the pod's resources are free again and it waits in vcore."""
        self.converter.unassume(key)


def _priority(info: Any) -> int:
    """A pod's priority as vcore resolved it (its compiled record; spec.priority otherwise)."""
    if info.compiled is not None:
        return info.compiled.priority
    return info.spec_priority or 0
