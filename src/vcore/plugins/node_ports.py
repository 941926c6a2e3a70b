"""NodePorts: a pod fits only nodes where the host ports its containers take are free (filter). No arguments; its
kernel is the native node plugin core/src/plugins/node_ports.cpp over the ports bound pods hold."""

from vcore.plugins.base import FILTER, PRE_FILTER, NodePlugin

PLUGIN = NodePlugin("NodePorts", frozenset({PRE_FILTER, FILTER}), native_args=lambda args: {})
