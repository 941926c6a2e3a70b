"""NodeVolumeLimits: the CSI volumes a pod would add to a node stay within the node's CSINode allocatable count per
driver, counting the volumes its pods use and its VolumeAttachments, in-tree disks where their CSI migration is on
(filter), as kube-scheduler v1.34's CSILimits has it. No arguments; its kernel is the native node plugin
core/src/plugins/node_volume_limits.cpp, reading the cluster's volume store."""

from vcore.plugins.base import FILTER, PRE_FILTER, NodePlugin

PLUGIN = NodePlugin("NodeVolumeLimits", frozenset({PRE_FILTER, FILTER}), native_args=lambda args: {})
