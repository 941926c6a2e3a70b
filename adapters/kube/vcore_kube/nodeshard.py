"""Volcano's NodeShard (shard.volcano.sh/v1alpha1, cluster-scoped) as the sharding controller and the scheduler
instances read and write it: ``spec.nodesDesired`` is the controller's, ``status`` (``nodesInUse``,
``nodesToAdd``, ``nodesToRemove``, ``lastUpdateTime``) the instance's. Every write carries the resourceVersion it
read, so a write based on a stale read fails (409) instead of undoing another's.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from vcore_kube.kubeclient import Api, ApiException
from vcore_kube.reflector import Resource

GROUP, VERSION, PLURAL = "shard.volcano.sh", "v1alpha1", "nodeshards"
COLLECTION = f"/apis/{GROUP}/{VERSION}/{PLURAL}"
# What the scheduler instances and the sharding controller watch (a CRD that may not be installed).
RESOURCE = Resource(
    "NodeShard",
    lambda c: client.CustomObjectsApi(c).list_cluster_custom_object,
    (GROUP, VERSION, PLURAL),
    optional=True,
)


def path(name: str, subresource: str = "") -> str:
    return f"{COLLECTION}/{name}" + (f"/{subresource}" if subresource else "")


@dataclass(frozen=True)
class Shard:
    """What one NodeShard says."""

    name: str
    desired: frozenset[str]
    in_use: frozenset[str]
    to_add: frozenset[str]
    to_remove: frozenset[str]
    resource_version: str

    @classmethod
    def of(cls, obj: dict[str, Any]) -> Shard:
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        return cls(
            obj["metadata"]["name"],
            frozenset(spec.get("nodesDesired") or ()),
            frozenset(status.get("nodesInUse") or ()),
            frozenset(status.get("nodesToAdd") or ()),
            frozenset(status.get("nodesToRemove") or ()),
            obj["metadata"].get("resourceVersion", ""),
        )


def now_time() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_body(in_use: Iterable[str], desired: Iterable[str]) -> dict[str, Any]:
    """An instance's status: the nodes it uses, the desired ones it does not use yet, the used ones not desired."""
    used, wanted = set(in_use), set(desired)
    return {
        "nodesInUse": sorted(used),
        "nodesToAdd": sorted(wanted - used),
        "nodesToRemove": sorted(used - wanted),
        "lastUpdateTime": now_time(),
    }


def list_shards(api: Api, timeout: float = 10) -> dict[str, dict[str, Any]]:
    """Every NodeShard, read from etcd (a quorum read: at least as new as any write that finished before)."""
    return {o["metadata"]["name"]: o for o in api.get(COLLECTION, timeout=timeout)["items"]}


def put_status(api: Api, obj: dict[str, Any], status: dict[str, Any], timeout: float = 10) -> dict[str, Any]:
    """Replace the status of the NodeShard `obj` (as read: its resourceVersion is the precondition)."""
    return api.put(path(obj["metadata"]["name"], "status"), {**obj, "status": status}, timeout=timeout)


def put_desired(
    api: Api, obj: dict[str, Any] | None, name: str, nodes: Iterable[str], timeout: float = 10
) -> dict[str, Any]:
    """Set spec.nodesDesired of NodeShard `name`: create it when `obj` is None, else replace `obj`'s spec (its
    resourceVersion is the precondition). The status is the instance's and is left alone."""
    desired = sorted(set(nodes))
    if obj is None:
        return api.create(
            COLLECTION,
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "NodeShard",
                "metadata": {"name": name},
                "spec": {"nodesDesired": desired},
            },
            timeout=timeout,
        )
    return api.put(path(name), {**obj, "spec": {**(obj.get("spec") or {}), "nodesDesired": desired}}, timeout=timeout)


def apply_assignment(api: Api, desired: dict[str, Iterable[str]], *, attempts: int = 5, timeout: float = 10) -> int:
    """Publish the controller's assignment: each named NodeShard's nodesDesired (creating missing ones). Nodes
    are taken from their old shards in a first round of writes and given to their new ones in a second, so an
    instance never sees a node desired by two shards at once (the hand-over relies on it). A write that meets a
    concurrent one (409) is redone from a fresh read. Returns the number of NodeShards written."""
    wanted = {name: frozenset(nodes) for name, nodes in desired.items()}
    written = 0
    for first_round in (True, False):
        for name in sorted(wanted):
            for attempt in range(attempts):
                try:
                    obj = api.get(path(name), timeout=timeout)
                except ApiException as e:
                    if e.status != 404:
                        raise
                    obj = None
                have = Shard.of(obj).desired if obj is not None else None
                target = (have & wanted[name]) if first_round and have is not None else wanted[name]
                if have == target or (first_round and obj is None):
                    break
                try:
                    put_desired(api, obj, name, target, timeout=timeout)
                    written += 1
                    break
                except ApiException as e:
                    if e.status != 409 or attempt == attempts - 1:
                        raise
    return written


__all__ = [
    "ApiException",
    "COLLECTION",
    "Shard",
    "apply_assignment",
    "list_shards",
    "path",
    "put_desired",
    "put_status",
    "status_body",
]
