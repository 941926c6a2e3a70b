"""Volcano's resourcequota plugin (plugins/resourcequota/resourcequota.go): a PodGroup is enqueued only when its
``minResources`` fit every ResourceQuota of its namespace.

For each quota, the resources of ``minResources`` the quota's ``status.hard`` names (by exact name: ``cpu`` is held to
a ``cpu`` entry, not to ``requests.cpu``) are added to its ``status.used`` and to what the jobs of the namespace
already enqueued in this cycle ask (their whole minResources); the job is rejected when any sum exceeds the hard
limit, with a Normal "Unschedulable" PodGroup event saying which resources, as Volcano records it. A job without
minResources is never asked (enqueue admits it), and a namespace without quotas lets every job through.
"""

from __future__ import annotations

from collections import Counter

from vcore.batch.job import Job
from vcore.batch.plugins.base import PERMIT, REJECT, JobPlugin, PluginSession
from vcore.batch.result import Event

UNSCHEDULABLE = "Unschedulable"  # Volcano's PodGroupUnschedulableType, the event's reason


class ResourceQuotaPlugin(JobPlugin):
    name = "resourcequota"
    parts = frozenset({"job_enqueueable"})

    def open(self, ssn: PluginSession) -> None:
        super().open(ssn)
        self._pending: dict[str, Counter[str]] = {}  # namespace -> the minResources of its jobs let through

    def job_enqueueable(self, job: Job) -> int:
        wanted = None if job.podgroup is None else job.podgroup.min_resources
        if wanted is None:
            return PERMIT
        namespace = job.key.split("/", 1)[0]
        pending = self._pending.setdefault(namespace, Counter())
        for quota in self.ssn.batch.quotas.of(namespace):
            asked = {r: v for r, v in wanted.items() if r in quota.hard}
            exceeded = sorted(r for r, v in asked.items() if quota.used.get(r, 0) + pending[r] + v > quota.hard[r])
            if exceeded:
                message = "resource quota insufficient, requested: {}, used: {}, limited: {}".format(
                    *({r: amounts.get(r, 0) for r in exceeded} for amounts in (asked, quota.used, quota.hard))
                )
                self.ssn.result.events.append(Event(f"PodGroup {job.key}", "Normal", UNSCHEDULABLE, message))
                return REJECT
        pending.update(wanted)
        return PERMIT
