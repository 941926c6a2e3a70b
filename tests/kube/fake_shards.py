"""An in-memory stand-in for the API server's NodeShard (and pod list) endpoints with its concurrency rules
(resourceVersion preconditions, 404, 409), for the hand-over protocol's unit and property tests. The e2e tests
run the same code against the real API server."""

from __future__ import annotations

import copy

from vcore_kube import nodeshard
from vcore_kube.kubeclient import ApiException


class FakeApi:
    def __init__(self) -> None:
        self.objects: dict[str, dict] = {}
        self.revision = 0
        self.pods: dict[str, list[dict]] = {}  # node -> bound pods
        self.watchers: list[list] = []  # each a list of (name, object or None) events, appended on every write

    def _commit(self, name: str, obj: dict | None) -> dict | None:
        self.revision += 1
        if obj is None:
            self.objects.pop(name, None)
        else:
            obj["metadata"]["resourceVersion"] = str(self.revision)
            self.objects[name] = obj
        for events in self.watchers:
            events.append((name, copy.deepcopy(obj)))
        return copy.deepcopy(obj)

    def get(self, path: str, **query):
        if path == nodeshard.COLLECTION:
            return {"items": [copy.deepcopy(o) for o in self.objects.values()]}
        if path == "/api/v1/pods":
            node = query.get("fieldSelector", "").split("spec.nodeName=")[-1].split(",")[0]
            return {"items": copy.deepcopy(self.pods.get(node, []))}
        name = path.rsplit("/", 1)[1]
        if name not in self.objects:
            raise ApiException(status=404, reason="Not Found")
        return copy.deepcopy(self.objects[name])

    def create(self, path: str, body: dict, **query):
        name = body["metadata"]["name"]
        if name in self.objects:
            raise ApiException(status=409, reason="AlreadyExists")
        return self._commit(name, copy.deepcopy(body))

    def put(self, path: str, body: dict, **query):
        status = path.endswith("/status")
        name = path.rsplit("/", 2)[1] if status else path.rsplit("/", 1)[1]
        current = self.objects.get(name)
        if current is None:
            raise ApiException(status=404, reason="Not Found")
        if body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise ApiException(status=409, reason="Conflict")
        new = copy.deepcopy(current)
        if status:
            new["status"] = copy.deepcopy(body.get("status") or {})
        else:
            new["spec"] = copy.deepcopy(body.get("spec") or {})
        return self._commit(name, new)

    def delete(self, path: str, **query):
        name = path.rsplit("/", 1)[1]
        if name not in self.objects:
            raise ApiException(status=404, reason="Not Found")
        self._commit(name, None)

    def watch(self) -> list:
        """A new watcher: its event list starts with the current objects (a list), then every write."""
        events = [(name, copy.deepcopy(obj)) for name, obj in self.objects.items()]
        self.watchers.append(events)
        return events
