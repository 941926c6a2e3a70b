"""The adapter's object cache: the latest version of every watched object, by kind and key, and the deltas
that turn one state into the next (a watch event, or a relist replacing everything of one kind).

Owned by the scheduling loop's thread (reflectors hand it events through the loop's inbox), so it needs no lock.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

NAMESPACED = {"Pod", "PodGroup", "WarmPool", "PersistentVolumeClaim", "CSIStorageCapacity"}
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"  # Volcano's pod -> PodGroup link


def object_key(kind: str, obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}" if kind in NAMESPACED else meta.get("name", "")


@dataclass(frozen=True)
class Delta:
    kind: str
    key: str
    old: dict[str, Any] | None  # None: added
    new: dict[str, Any] | None  # None: deleted


class Cache:
    def __init__(self) -> None:
        self._objects: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        self._group_pods: dict[str, set[str]] = defaultdict(set)  # "ns/podgroup" -> pod keys

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        return self._objects[kind].get(key)

    def items(self, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
        return iter(self._objects[kind].items())

    def count(self, kind: str) -> int:
        return len(self._objects[kind])

    def pods_of_group(self, group_key: str) -> set[str]:
        return self._group_pods.get(group_key, set())

    def apply(self, kind: str, event_type: str, obj: dict[str, Any]) -> Delta | None:
        """One watch event (ADDED, MODIFIED, DELETED) -> the delta, or None when nothing changed."""
        key = object_key(kind, obj)
        store = self._objects[kind]
        old = store.get(key)
        if event_type == "DELETED":
            if old is None:
                return None
            del store[key]
            self._index(kind, key, old, None)
            return Delta(kind, key, old, None)
        store[key] = obj
        self._index(kind, key, old, obj)
        return Delta(kind, key, old, obj)

    def replace(self, kind: str, items: list[dict[str, Any]]) -> list[Delta]:
        """A relist: everything of this kind is now `items`; objects missing from it were deleted meanwhile."""
        store = self._objects[kind]
        fresh = {object_key(kind, item): item for item in items}
        deltas = [Delta(kind, key, old, None) for key, old in store.items() if key not in fresh]
        for key, item in fresh.items():
            old = store.get(key)
            if old is None or _rv(old) != _rv(item):
                deltas.append(Delta(kind, key, old, item))
        for d in deltas:
            self._index(kind, d.key, d.old, d.new)
        self._objects[kind] = fresh
        return deltas

    def _index(self, kind: str, key: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if kind != "Pod":
            return
        before, after = _group_of(old), _group_of(new)
        if before != after:
            if before:
                self._group_pods[before].discard(key)
                if not self._group_pods[before]:
                    del self._group_pods[before]
            if after:
                self._group_pods[after].add(key)


def _rv(obj: dict[str, Any]) -> str | None:
    return (obj.get("metadata") or {}).get("resourceVersion")


def _group_of(pod: dict[str, Any] | None) -> str | None:
    if not pod:
        return None
    meta = pod.get("metadata") or {}
    group = (meta.get("annotations") or {}).get(GROUP_ANNOTATION)
    return f"{meta.get('namespace', '')}/{group}" if group else None
