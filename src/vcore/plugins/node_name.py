"""NodeName: a pod with spec.nodeName fits only the node of that name (filter). No arguments; its kernel is the
native node plugin core/src/plugins/node_name.cpp."""

from vcore.plugins.base import FILTER, NodePlugin

PLUGIN = NodePlugin("NodeName", frozenset({FILTER}), native_args=lambda args: {})
