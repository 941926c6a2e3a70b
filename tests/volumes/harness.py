"""Running the volume plugins the way kube-scheduler's unit tests do: a cluster holding the objects of a case, a
scheduler whose profile enables just the plugins under test, and what each node says about the pod.

``outcome`` gives, per node, the reasons that node was filtered out (empty when the pod fits it), or the pod-wide
rejection a PreFilter (or an error) gave, in kube-scheduler's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import vcore
from vcore.reasons import PodRejection


@dataclass
class Objects:
    """The objects of one case."""

    nodes: Sequence[dict] = ()
    pvs: Sequence[dict] = ()
    pvcs: Sequence[dict] = ()
    classes: Sequence[dict] = ()
    csi_nodes: Sequence[dict] = ()
    csi_drivers: Sequence[dict] = ()
    capacities: Sequence[dict] = ()
    attachments: Sequence[dict] = ()
    bound: Sequence[tuple[dict, str]] = ()  # (pod, node name) already on the nodes


def cluster_of(objects: Objects) -> vcore.Cluster:
    cluster = vcore.Cluster()
    for n in objects.nodes:
        cluster.add_node(n)
    for add, items in (
        (cluster.add_storage_class, objects.classes),
        (cluster.add_persistent_volume, objects.pvs),
        (cluster.add_persistent_volume_claim, objects.pvcs),
        (cluster.add_csi_node, objects.csi_nodes),
        (cluster.add_csi_driver, objects.csi_drivers),
        (cluster.add_csi_storage_capacity, objects.capacities),
        (cluster.add_volume_attachment, objects.attachments),
    ):
        for item in items:
            add(item)
    for p, node_name in objects.bound:
        cluster.bind(p, node_name)
    return cluster


def only(*plugins: str) -> dict:
    """A profile running just these plugins (at every point they implement)."""
    return {"plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": p} for p in plugins]}}}


@dataclass
class Outcome:
    rejection: str | None = None  # PreFilter's (pod-wide)
    error: str | None = None  # an error status (pod-wide)
    nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per node its reasons, () when it fits


def outcome(cluster: vcore.Cluster, pod: Any, plugins: Iterable[str]) -> Outcome:
    scheduler = vcore.Scheduler(cluster, only(*plugins))
    out = Outcome()
    for name in cluster.node_names:
        scheduler.set_node_scope([name])
        reasons = scheduler.filter(pod).reasons
        rejections = [r for r in reasons if isinstance(r, PodRejection)]
        if rejections:
            assert len(rejections) == 1 and len(reasons) == 1, reasons
            if rejections[0].error:
                out.error = str(rejections[0])
            else:
                out.rejection = str(rejections[0])
            continue
        out.nodes[name] = tuple(sorted(reasons))
    if out.rejection is not None or out.error is not None:
        out.nodes = {}
    return out


def expect(*, rejection: str | None = None, error: str | None = None, **nodes: Any) -> Outcome:
    """An expected outcome: node=() or node=("reason", ...) (node names with '-' written with '_')."""
    return Outcome(
        rejection,
        error,
        {k.replace("_", "-"): tuple(sorted(v if isinstance(v, tuple) else (v,))) for k, v in nodes.items()},
    )
