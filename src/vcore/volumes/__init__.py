"""Storage for kube-scheduler's volume plugins: the objects (PersistentVolumes, PersistentVolumeClaims,
StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments) and a pod's volumes, parsed into the
native volume store that VolumeRestrictions, NodeVolumeLimits, VolumeZone and VolumeBinding read.

Modules, lowest first: ``translation`` (in-tree volumes as CSI, as csi-translation-lib has them), ``objects`` (the
objects parsed into native records), ``pods`` (a pod's volumes), ``store`` (the objects a Cluster holds, and what
VolumeBinding assumed for a placed pod).
"""
