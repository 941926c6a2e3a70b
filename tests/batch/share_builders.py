"""Builders for the queue and queue-share tests: Kubernetes-shaped queue objects, resource vectors, sessions."""

from __future__ import annotations

import numpy as np

from vcore import parse_quantity
from vcore.batch.queue import KAI_API, KUEUE_API, VOLCANO_API, QueueSpec, QueueTree
from vcore.batch.shares.base import QueueUsage

NAMES = ("cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu")
_SHORT = {
    "cpu": "cpu",
    "mem": "memory",
    "memory": "memory",
    "gpu": "nvidia.com/gpu",
    "pods": "pods",
    "storage": "ephemeral-storage",
}


def rlist(extra: dict | None = None, **quantities) -> dict:
    """A Kubernetes ResourceList: rlist(cpu="2", mem="4Gi", gpu=1), other names through ``extra``."""
    out = {_SHORT[k]: str(v) for k, v in quantities.items()}
    out.update({k: str(v) for k, v in (extra or {}).items()})
    return out


def vec(names=NAMES, extra: dict | None = None, **quantities) -> np.ndarray:
    """The same resources as an int64 vector over ``names`` (cpu in millicores)."""
    out = np.zeros(len(names), dtype=np.int64)
    for r, q in rlist(extra, **quantities).items():
        out[list(names).index(r)] = parse_quantity(q, milli=r == "cpu")
    return out


def volcano(
    name,
    *,
    weight=None,
    capability=None,
    deserved=None,
    guarantee=None,
    parent=None,
    priority=None,
    state=None,
    reclaimable=None,
) -> dict:
    spec = {}
    for key, value in (
        ("weight", weight),
        ("capability", capability),
        ("deserved", deserved),
        ("parent", parent),
        ("priority", priority),
        ("reclaimable", reclaimable),
    ):
        if value is not None:
            spec[key] = value
    if guarantee is not None:
        spec["guarantee"] = {"resource": guarantee}
    obj = {"apiVersion": VOLCANO_API, "kind": "Queue", "metadata": {"name": name}, "spec": spec}
    if state is not None:
        obj["status"] = {"state": state}
    return obj


def kai(name, *, parent=None, priority=None, created=None, **resources) -> dict:
    """kai("q", gpu=dict(quota=2, limit=-1, overQuotaWeight=1), cpu=...)."""
    meta = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    spec = {"resources": resources}
    if parent is not None:
        spec["parentQueue"] = parent
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": KAI_API, "kind": "Queue", "metadata": meta, "spec": spec}


def kueue(name, *, cohort=None, covered=("cpu", "memory"), flavors=None, preemption=None, stop=None) -> dict:
    """flavors: [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": 9, ...}, ...]}]."""
    spec = {"resourceGroups": [{"coveredResources": list(covered), "flavors": flavors or []}]}
    if cohort is not None:
        spec["cohort"] = cohort
    if preemption is not None:
        spec["preemption"] = preemption
    if stop is not None:
        spec["stopPolicy"] = stop
    return {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def tree(*objects, default_queue=True) -> QueueTree:
    t = QueueTree(default_queue=default_queue)
    for obj in objects:
        t.add(QueueSpec.from_object(obj))
    return t


def usage(names=NAMES, *, allocated=None, pending=None, inqueue=None, elastic=None) -> QueueUsage:
    """A queue's usage; request = allocated + pending."""
    z = np.zeros(len(names), dtype=np.int64)
    allocated = z if allocated is None else allocated
    pending = z if pending is None else pending
    return QueueUsage(
        allocated, allocated + pending, z if inqueue is None else inqueue, z if elastic is None else elastic
    )


def opened(plugin, queue_tree, total, usages, names=NAMES):
    plugin.open(queue_tree, names, total, usages)
    return plugin
