"""TaintToleration: a node's NoSchedule and NoExecute taints must be tolerated (filter); fewer untolerated
PreferNoSchedule taints score higher (score, normalized in reverse). No arguments; fused into the native kernel."""

from vcore.plugins.base import FILTER, PRE_SCORE, SCORE, NodePlugin

PLUGIN = NodePlugin("TaintToleration", frozenset({FILTER, PRE_SCORE, SCORE}))
