"""Volcano's sla plugin (plugins/sla/sla.go): a job waiting longer than its sla-waiting-time goes first and is let
through.

The waiting time is the PodGroup's ``volcano.sh/sla-waiting-time`` annotation, else its ``sla-waiting-time``
annotation, else the plugin's ``sla-waiting-time`` argument (a Go duration string; the conf loader leaves out one that
is not, as Volcano does). An annotation that is not a positive duration is ignored, as Volcano ignores it (it logs a
warning). A job's deadline is its creation time plus its waiting time.

* job_order: jobs with a deadline before jobs without, the earlier deadline first;
* job_enqueueable and job_pipelined: PERMIT once the job has waited past its deadline, else ABSTAIN.
"""

from __future__ import annotations

from vcore.batch.config import SLA_WAITING_TIME, epoch_seconds, go_duration
from vcore.batch.job import Job
from vcore.batch.plugins.base import ABSTAIN, PERMIT, JobPlugin, PluginSession

ANNOTATIONS = ("volcano.sh/" + SLA_WAITING_TIME, SLA_WAITING_TIME)  # Volcano reads them in this order


class SlaPlugin(JobPlugin):
    name = "sla"
    parts = frozenset({"job_order", "job_enqueueable", "job_pipelined"})

    def open(self, ssn: PluginSession) -> None:
        super().open(ssn)
        self.now = ssn.wall_clock
        self._deadlines: dict[str, float | None] = {}

    def waiting_time(self, job: Job) -> float | None:
        """The job's sla-waiting-time in seconds (None: it has none)."""
        annotations = job.podgroup.annotations if job.podgroup is not None else {}
        for key in ANNOTATIONS:
            if key in annotations:
                seconds = go_duration(annotations[key])
                if seconds is not None and seconds > 0:
                    return seconds
        return self.arguments.get(SLA_WAITING_TIME)

    def deadline(self, job: Job) -> float | None:
        """Epoch seconds by which the job should have started (None: no waiting time, or no creation time)."""
        if job.key not in self._deadlines:
            wait = self.waiting_time(job)
            created = epoch_seconds(job.creation) if wait is not None else None
            self._deadlines[job.key] = None if created is None or wait is None else created + wait
        return self._deadlines[job.key]

    def job_order_key(self, job: Job) -> tuple[int, float]:
        deadline = self.deadline(job)
        return (1, 0.0) if deadline is None else (0, deadline)

    def job_enqueueable(self, job: Job) -> int:
        deadline = self.deadline(job)
        return ABSTAIN if deadline is None or self.now < deadline else PERMIT

    job_pipelined = job_enqueueable
