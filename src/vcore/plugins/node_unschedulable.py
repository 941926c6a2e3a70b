"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate
node.kubernetes.io/unschedulable:NoSchedule (filter). No arguments; fused into the native kernel."""

from vcore.plugins.base import FILTER, NodePlugin

PLUGIN = NodePlugin("NodeUnschedulable", frozenset({FILTER}))
