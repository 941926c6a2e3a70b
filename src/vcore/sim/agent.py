"""A burst of agent pods beside a batch cycle of gangs, in one process (``vcore simulate --scenario agent``).

The batch side is the gang workload of :mod:`vcore.sim.gang` and one ``run_cycle()``. Agent pods (small,
latency-sensitive, a MostAllocated profile to fill fragments) arrive on the wall clock at ``rate`` per second from
the cycle's start; they are placed as the Kubernetes adapter's fast path places them: every arrival so far in one
``Scheduler.schedule()`` call, between two jobs of the running cycle (``run_cycle(between_jobs=...)``) and, once
the cycle is over, as they come. Reported: each agent's wait from arrival to placement (p50, p99, max), the cycle's
time beside the same cycle without agents, and the checks that matter: every agent placed once, no node
over-committed, every gang all or nothing.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from vcore.sim.gang import CycleSource, gang_workload, load

if TYPE_CHECKING:
    from vcore.scheduler import Scheduler

AGENT_NAMESPACE = "agents"
MOST_ALLOCATED = {
    "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]
}


def agent_pod(i: int) -> dict[str, Any]:
    requests = {"cpu": "250m", "memory": "512Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"agent-{i:05d}", "namespace": AGENT_NAMESPACE},
        "spec": {
            "schedulerName": "vcore-agent",
            "containers": [{"name": "agent", "image": "agent", "resources": {"requests": requests}}],
        },
    }


@dataclass(frozen=True)
class AgentScenarioResult:
    nodes: int
    jobs: int
    agents: int
    rate: float
    agents_placed: int
    micro_batches: int
    in_cycle_batches: int
    wait_p50_ms: float
    wait_p99_ms: float
    wait_max_ms: float
    cycle_seconds: float
    cycle_alone_seconds: float
    pods_placed: int
    pods_placed_alone: int
    jobs_running: int
    overcommitted_nodes: int
    partial_gangs: int

    @property
    def checks_passed(self) -> bool:
        """Every agent placed, no node over-committed, no gang below its minimum."""
        return self.agents_placed == self.agents and self.overcommitted_nodes == 0 and self.partial_gangs == 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Arrivals:
    """Agent pods due on the wall clock (pod i at start + i / rate), placed in micro-batches."""

    def __init__(self, scheduler: Scheduler, n: int, rate: float) -> None:
        self.scheduler, self.rate = scheduler, rate
        self.pods = [agent_pod(i) for i in range(n)]
        self.start = 0.0
        self.next = 0
        self.waits: list[float] = []
        self.placed = 0
        self.batches = 0

    def due(self, now: float) -> int:
        return min(len(self.pods), int((now - self.start) * self.rate) + 1)

    def place_due(self) -> None:
        now = time.perf_counter()
        upto = self.due(now)
        if upto <= self.next:
            return
        batch = self.pods[self.next : upto]
        placements = self.scheduler.schedule(batch)
        done = time.perf_counter()
        self.placed += sum(p.node is not None for p in placements)
        self.waits.extend(done - (self.start + i / self.rate) for i in range(self.next, upto))
        self.next = upto
        self.batches += 1

    def finish(self) -> None:
        while self.next < len(self.pods):
            wait = self.start + self.next / self.rate - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            self.place_due()


def run_agent_scenario(
    n_nodes: int = 5000,
    n_jobs: int = 2000,
    n_agents: int = 500,
    rate: float = 1000.0,
    seed: int = 0,
    cycle: CycleSource = None,
) -> AgentScenarioResult:
    from vcore import Cluster, Scheduler

    if rate <= 0:
        raise ValueError(f"agent scenario: rate must be > 0 pods/s, not {rate}")
    workload = gang_workload(n_nodes, n_jobs, seed=seed)

    alone = Cluster()
    load(alone, workload)
    t0 = time.perf_counter()
    alone_result = Scheduler(alone, cycle=cycle, seed=seed).run_cycle()
    cycle_alone = time.perf_counter() - t0

    cluster = Cluster()
    load(cluster, workload)
    batch = Scheduler(cluster, cycle=cycle, seed=seed)
    arrivals = _Arrivals(Scheduler(cluster, MOST_ALLOCATED, seed=seed), n_agents, rate)
    arrivals.start = t0 = time.perf_counter()
    result = batch.run_cycle(between_jobs=arrivals.place_due)
    cycle_seconds = time.perf_counter() - t0
    in_cycle = arrivals.batches
    arrivals.finish()

    group_of = {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}": (
            f"{p['metadata']['namespace']}/{p['metadata']['annotations']['scheduling.k8s.io/group-name']}"
        )
        for p in workload.pods
    }
    bound = Counter(group_of[k] for k in group_of if cluster.node_of(k) is not None)
    min_member = {
        f"{pg['metadata']['namespace']}/{pg['metadata']['name']}": pg["spec"]["minMember"] for pg in workload.podgroups
    }
    partial = sum(1 for g, n in bound.items() if n < min_member[g])
    over = np.zeros(len(cluster.requested("cpu")), dtype=bool)
    for r in cluster.resource_names:
        over |= cluster.requested(r) > cluster.allocatable(r)
    waits = np.asarray(arrivals.waits) * 1e3
    return AgentScenarioResult(
        len(workload.nodes),
        len(workload.podgroups),
        n_agents,
        rate,
        arrivals.placed,
        arrivals.batches,
        in_cycle,
        float(np.percentile(waits, 50)),
        float(np.percentile(waits, 99)),
        float(waits.max()),
        cycle_seconds,
        cycle_alone,
        len(result.bindings),
        len(alone_result.bindings),
        sum(s.phase == "Running" for s in result.podgroups.values()),
        int(over.sum()),
        partial,
    )
