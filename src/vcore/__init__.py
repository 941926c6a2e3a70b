"""vcore: a compiled scheduling core for AI clusters.

Place Kubernetes pods on nodes exactly as kube-scheduler's resource plugins would (and Volcano's binpack),
with the hot path in C++:

    cluster = vcore.Cluster()
    cluster.add_node(node_dict)
    placements = vcore.Scheduler(cluster).schedule(pod_dicts)
"""

from vcore._native._convert import parse_quantity
from vcore.batch.config import CycleConfig
from vcore.batch.queue import QueueSpec
from vcore.batch.result import CycleResult, Eviction, PodGroupStatus, QueueStatus
from vcore.cluster import Cluster
from vcore.errors import (
    HyperNodeNotFoundError,
    NodeExistsError,
    NodeInUseError,
    NodeNotFoundError,
    PodAlreadyBoundError,
    PodExistsError,
    PodGroupExistsError,
    PodGroupNotFoundError,
    PodNotFoundError,
    ProfileError,
    ProfileWarning,
    QueueExistsError,
    QueueInUseError,
    QueueNotFoundError,
    TopologyError,
    VCoreError,
)
from vcore.profile import Profile
from vcore.scheduler import Evaluation, FilterResult, NodeScope, Scheduler
from vcore.types import Placement, VolumeBinds

__version__ = "0.1.0"

__all__ = [
    "Cluster",
    "CycleConfig",
    "CycleResult",
    "Evaluation",
    "Eviction",
    "FilterResult",
    "HyperNodeNotFoundError",
    "NodeExistsError",
    "NodeInUseError",
    "NodeNotFoundError",
    "NodeScope",
    "Placement",
    "PodAlreadyBoundError",
    "PodExistsError",
    "PodGroupExistsError",
    "PodGroupNotFoundError",
    "PodGroupStatus",
    "PodNotFoundError",
    "Profile",
    "ProfileError",
    "ProfileWarning",
    "QueueExistsError",
    "QueueInUseError",
    "QueueNotFoundError",
    "QueueSpec",
    "QueueStatus",
    "Scheduler",
    "TopologyError",
    "VCoreError",
    "VolumeBinds",
    "parse_quantity",
]
