"""The default ``vcore simulate`` scenario (``--scenario pods``): one scheduling pass over a synthetic cluster.

The scenario builds a :func:`vcore.sim.synthetic.synthetic_cluster`, ingests its nodes into a
:class:`vcore.Cluster`, and places every pod with a single :meth:`vcore.Scheduler.schedule` call (the same path a
batch scheduler uses).
It reports throughput and, for the pods that stayed pending, how many pods each kube-scheduler reason applied to.
Ingest and schedule are timed separately so the pods/s figure is the scheduling call alone.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from vcore.sim.synthetic import synthetic_cluster

__all__ = ["PodsScenarioResult", "run_pods_scenario"]


@dataclass(frozen=True)
class PodsScenarioResult:
    """What one run of the scenario measured. ``reasons`` maps a kube-scheduler reason to the number of pending pods
    it hit."""

    nodes: int
    pods: int
    scheduled: int
    unscheduled: int
    pods_per_second: float
    ingest_seconds: float
    schedule_seconds: float
    reasons: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object printed by ``vcore simulate --json`` (stable key set)."""
        return asdict(self)


def run_pods_scenario(
    n_nodes: int = 1000,
    n_pods: int = 5000,
    seed: int = 0,
    profile: str | os.PathLike[str] | dict[str, Any] | None = None,
) -> PodsScenarioResult:
    """Generate, ingest and schedule a synthetic cluster once; see the module docstring.

    ``profile`` is anything :class:`vcore.Scheduler` accepts (a dict or a YAML path); ``None`` is the default
    profile. ``seed`` drives both the generator and the scheduler's tie-breaking, so equal arguments give equal
    placements.
    """
    # Imported here so that `vcore --help` and argument errors do not pay for loading the native module.
    from vcore import Cluster, Scheduler

    workload = synthetic_cluster(n_nodes, n_pods, seed)
    if isinstance(profile, os.PathLike):
        profile = os.fspath(profile)

    t0 = time.perf_counter()
    cluster = Cluster()
    for node in workload.nodes:
        cluster.add_node(node)
    ingest_seconds = time.perf_counter() - t0

    scheduler = Scheduler(cluster, profile=profile, seed=seed)
    t0 = time.perf_counter()
    placements = scheduler.schedule(workload.pods)
    schedule_seconds = time.perf_counter() - t0

    reasons: Counter[str] = Counter()
    scheduled = 0
    for placement in placements:
        if placement.node is not None:
            scheduled += 1
        else:
            # Count pods, not nodes: "how many pending pods did this reason affect".
            reasons.update(reason for reason, n in placement.reasons.items() if n > 0)
    n = len(workload.pods)
    return PodsScenarioResult(
        nodes=len(workload.nodes),
        pods=n,
        scheduled=scheduled,
        unscheduled=n - scheduled,
        # 0.0 rather than inf keeps the JSON output valid JSON for an empty workload.
        pods_per_second=n / schedule_seconds if schedule_seconds > 0 else 0.0,
        ingest_seconds=ingest_seconds,
        schedule_seconds=schedule_seconds,
        # Most frequent first; ties by name so the order is deterministic.
        reasons=dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
    )
