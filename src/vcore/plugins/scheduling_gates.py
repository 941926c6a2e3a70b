"""SchedulingGates: a pod with ``spec.schedulingGates`` is not attempted until every gate is removed (preEnqueue).

vcore honors the gates whatever the profile says: the converter marks a gated pod, every scheduling path refuses
it ("waiting for scheduling gates: [...]"), and the Kubernetes adapter keeps it out of its queue with the
PodScheduled=False/SchedulingGated condition. Disabling the plugin is accepted and changes nothing: placing a pod
its owner holds back is never what a vcore user wants.
"""

from vcore.plugins.base import PRE_ENQUEUE, NodePlugin

PLUGIN = NodePlugin("SchedulingGates", frozenset({PRE_ENQUEUE}))
