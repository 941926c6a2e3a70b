"""Job plugins: how the cycle's actions see jobs, tasks and queues, one plugin per volcano-scheduler.conf name.

``Framework(config)`` builds the configured plugins in tier order and answers the actions' questions the way
Volcano's session does (see ``framework``); each plugin registers the parts it answers (see ``base``): priority,
gang, conformance, drf, overcommit, pdb, sla, and the queue-share plugins of :mod:`vcore.batch.shares`.
"""

from vcore.batch.plugins.base import ABSTAIN, PART_SWITCHES, PERMIT, REJECT, Candidate, JobPlugin, Preemptor
from vcore.batch.plugins.framework import JOB_PLUGINS, Framework, build_plugin

__all__ = [
    "ABSTAIN",
    "JOB_PLUGINS",
    "PART_SWITCHES",
    "PERMIT",
    "REJECT",
    "Candidate",
    "Framework",
    "JobPlugin",
    "Preemptor",
    "build_plugin",
]
