"""VolumeZone: a node with topology labels must carry the zone and region labels of the PVs the pod's claims are
bound to (filter); the claims, their StorageClass and PVs must exist (PreFilter), as kube-scheduler v1.34 has it. No
arguments; its kernel is the native node plugin core/src/plugins/volume_zone.cpp, reading the cluster's volume
store."""

from vcore.plugins.base import FILTER, PRE_FILTER, NodePlugin

PLUGIN = NodePlugin("VolumeZone", frozenset({PRE_FILTER, FILTER}), native_args=lambda args: {})
