"""VolumeRestrictions: a pod may not mount a disk a pod on the node mounts (the same GCE PD, AWS EBS volume, iSCSI
IQN or RBD image, unless all mount it read-only; an EBS volume never twice), nor use a ReadWriteOncePod claim another
pod uses (filter); a claim it names must exist (PreFilter), as kube-scheduler v1.34 has it. No arguments; its kernel
is the native node plugin core/src/plugins/volume_restrictions.cpp, reading the cluster's volume store."""

from vcore.plugins.base import FILTER, PRE_FILTER, NodePlugin

PLUGIN = NodePlugin("VolumeRestrictions", frozenset({PRE_FILTER, FILTER}), native_args=lambda args: {})
