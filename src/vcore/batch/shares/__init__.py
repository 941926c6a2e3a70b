"""Queue-share plugins: how the cycle's actions (enqueue, allocate, preempt, reclaim) see queues' shares.

``SHARE_PLUGINS`` maps a volcano-scheduler.conf plugin name to its class; build one with
``SHARE_PLUGINS[name](arguments, hierarchy=enable_hierarchy)`` and open it once per cycle (see ``base``).
"""

from typing import Any

from vcore.batch.shares.base import ABSTAIN, PERMIT, REJECT, Claim, QueueShare, QueueUsage, SharePlugin
from vcore.batch.shares.capacity import CapacityPlugin
from vcore.batch.shares.cohort import CohortPlugin
from vcore.batch.shares.hierarchy import HierarchyPlugin
from vcore.batch.shares.proportion import ProportionPlugin

SHARE_PLUGINS: dict[str, type[SharePlugin[Any]]] = {
    plugin.name: plugin for plugin in (ProportionPlugin, CapacityPlugin, HierarchyPlugin, CohortPlugin)
}

__all__ = [
    "ABSTAIN",
    "PERMIT",
    "REJECT",
    "SHARE_PLUGINS",
    "CapacityPlugin",
    "Claim",
    "CohortPlugin",
    "HierarchyPlugin",
    "ProportionPlugin",
    "QueueShare",
    "QueueUsage",
    "SharePlugin",
]
