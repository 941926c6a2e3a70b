"""The agent fast path: latency-sensitive pods placed on arrival, from their watch event, in micro-batches, on the
same vcore cluster the batch cycle uses.

A pod takes the fast path when its schedulerName is the fast path's (``fastPath.schedulerName``, e.g.
``vcore-agent``), or it is this scheduler's pod and its priority class is one of ``fastPath.priorityClassNames``
or it carries the annotation ``vcore.io/fast-path: "true"``. The first pod to arrive opens a micro-batch; every
pod that arrives within ``fastPath.window`` (1 ms by default) of it joins, and the batch is placed with one
``Scheduler.schedule()`` call (its own profile: say MostAllocated, to fill the fragments batch work leaves). The
pods wait in kube-scheduler's queue (schedqueue.py) between attempts. The loop runs a due micro-batch between
its other work, and between two jobs of a running batch cycle (``run_cycle(between_jobs=...)``): a cycle never
holds the fast path up for longer than one job's commit, and a micro-batch never delays the cycle by more than
itself. Both bind into one native state, each decision made on what the other has bound: nothing is
double-allocated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import vcore
from vcore_kube.config import FastPathConfig
from vcore_kube.convert import scheduler_name_of
from vcore_kube.schedqueue import SchedulingQueue

FAST_PATH_ANNOTATION = "vcore.io/fast-path"


def selects(config: FastPathConfig, scheduler_name: str, pod: dict[str, Any]) -> bool:
    """Whether a pending pod takes the fast path."""
    if not config.enabled:
        return False
    name = scheduler_name_of(pod)
    if config.scheduler_name and name == config.scheduler_name:
        return True
    if name != scheduler_name:
        return False
    if ((pod["metadata"].get("annotations") or {}).get(FAST_PATH_ANNOTATION)) == "true":
        return True
    return (
        bool(config.priority_class_names)
        and (pod.get("spec") or {}).get("priorityClassName") in config.priority_class_names
    )


@dataclass
class Waiting:
    """A fast-path pod in the queue: its latest object and when its watch event arrived (perf_counter)."""

    pod: dict[str, Any]
    received: float


@dataclass
class Batch:
    """What one micro-batch decided: (key, placement) of the placed pods, and the unplaced ones."""

    placed: list[tuple[str, vcore.Placement]] = field(default_factory=list)
    unschedulable: list[tuple[str, vcore.Placement]] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # key -> why vcore cannot read the pod
    seconds: float = 0.0  # the native call


class FastPath:
    def __init__(
        self,
        config: FastPathConfig,
        scheduler_name: str,
        cluster: vcore.Cluster,
        profile: dict[str, Any] | None,
        queue: SchedulingQueue,
        *,
        seed: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config, self.scheduler_name = config, scheduler_name
        self.scheduler = vcore.Scheduler(cluster, config.profile if config.profile is not None else profile, seed=seed)
        self.queue, self.clock = queue, clock
        self.waiting: dict[str, Waiting] = {}
        self._opened: float | None = None  # when the open micro-batch's first pod arrived (monotonic)

    def selects(self, pod: dict[str, Any]) -> bool:
        return selects(self.config, self.scheduler_name, pod)

    # -- the queue -------------------------------------------------------------------------------------------
    def add(self, key: str, pod: dict[str, Any], received: float) -> None:
        """A pending fast-path pod arrived or changed (`received`: perf_counter of its watch event)."""
        now = self.clock()
        known = self.waiting.get(key)
        self.waiting[key] = Waiting(pod, known.received if known is not None else received)
        self.queue.add(key, int((pod.get("spec") or {}).get("priority") or 0), now)
        if self._opened is None and self.queue.n_active:
            self._opened = now

    def remove(self, key: str) -> None:
        """Deleted, bound by someone, or bound by us (its binding is under way)."""
        self.waiting.pop(key, None)
        self.queue.delete(key)

    def __contains__(self, key: str) -> bool:
        return key in self.waiting

    # -- micro-batches --------------------------------------------------------------------------------------
    def due(self) -> bool:
        """A micro-batch should run now: its window has passed, or it is full."""
        self.queue.flush(self.clock())
        if not self.queue.n_active:
            self._opened = None
            return False
        now = self.clock()
        if self._opened is None:
            self._opened = now  # pods that came back from backoff or the pool open a batch themselves
        return now - self._opened >= self.config.window or self.queue.n_active >= self.config.max_batch

    def next_wakeup(self) -> float | None:
        """When the loop must look again (the open batch's end, the earliest backoff), monotonic; or None."""
        times = [
            t
            for t in (
                self._opened + self.config.window if self._opened is not None else None,
                self.queue.next_backoff(),
            )
            if t is not None
        ]
        return min(times) if times else None

    def run(self, hit: Callable[[str, dict[str, Any]], Any] | None = None) -> Batch:
        """Place the micro-batch: up to maxBatch pods from the active queue, each offered to `hit` first (a warm
        pool's placeholder; the pods it takes are left out of the native call), the rest with one schedule()."""
        now = self.clock()
        self._opened = None
        keys = self.queue.pop(self.config.max_batch, now)
        out = Batch()
        batch: list[tuple[str, Any]] = []
        for key in keys:
            pod = self.waiting[key].pod
            if self.scheduler.cluster.node_of(key) is not None:  # a pod of that name is still accounted
                out.invalid.append((key, "a pod of the same name is still bound in vcore's state"))
                continue
            if hit is not None and hit(key, pod):
                continue
            try:
                batch.append((key, self.scheduler.compile(pod)))
            except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
                out.invalid.append((key, str(e)))
        if batch:
            started = time.perf_counter()
            placements = self.scheduler.schedule([compiled for _, compiled in batch])
            out.seconds = time.perf_counter() - started
            for (key, _), placement in zip(batch, placements):
                (out.placed if placement.node is not None else out.unschedulable).append((key, placement))
        return out
