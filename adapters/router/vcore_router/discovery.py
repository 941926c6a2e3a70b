"""Endpoints from Kubernetes: the pods of each ModelServer's workloadSelector, kept current by vcore_kube's
reflector (list+watch with resourceVersion and bookmarks, relist on 410 Gone, capped backoff with jitter).

One reflector per ModelServer lists and watches the pods of its namespace that match its matchLabels (the
selection is the API server's). A pod is an endpoint while it is Ready, has a pod IP and is not being deleted;
its URL is ``<protocol>://<podIP>:<port>``, the port being the configured number or the container port of the
configured name (so pods of one ModelServer may listen on different ports). Its role and PD group come from the
pdGroup labels, its network domain from the domain label. The endpoint's name is
``<ModelServer>/<namespace>/<pod>``: a pod selected by two ModelServers is an endpoint of each.

The reflector thread turns every watch event, and every relist as a whole, into one change (endpoints removed,
endpoints added; an endpoint whose pod changed in a way that matters is removed and added again, with an empty
prefix record) and hands it to the router's event loop, which owns the endpoint table. A relist after a 410
reconciles: pods deleted while the watch was away leave, pods created meanwhile join.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import client
from kubernetes.config import ConfigException

from vcore.routing import Role
from vcore_kube.kubeclient import load_api
from vcore_kube.reflector import Reflector, Resource
from vcore_router.config import ConfigError, StaticEndpoint, WorkloadSelector

log = logging.getLogger("vcore_router.discovery")

# (ModelServer, names of endpoints that left, endpoints that joined), applied on the event loop in that order.
Change = Callable[[str, list[str], list[StaticEndpoint]], None]


def endpoint_name(server: str, pod: dict[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{server}/{meta.get('namespace', '')}/{meta.get('name', '')}"


def pod_port(pod: dict[str, Any], port: int | str) -> int | None:
    """The port to reach a pod on: ``port`` itself when it is a number, else the containerPort of the
    container port of that name (None when the pod has none)."""
    if isinstance(port, int):
        return port
    for container in (pod.get("spec") or {}).get("containers") or []:
        for p in container.get("ports") or []:
            if p.get("name") == port and p.get("containerPort"):
                return int(p["containerPort"])
    return None


def is_ready(pod: dict[str, Any]) -> bool:
    """Ready condition True, a pod IP, not terminating (as the EndpointSlice controller counts ready)."""
    status = pod.get("status") or {}
    if not status.get("podIP") or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def pod_endpoint(server: str, pod: dict[str, Any], selector: WorkloadSelector) -> StaticEndpoint | None:
    """The endpoint a pod (the API server's JSON) stands for, or None when it is not ready or has no port of
    the configured name."""
    if not is_ready(pod):
        return None
    port = pod_port(pod, selector.port)
    if port is None:
        return None
    labels = (pod.get("metadata") or {}).get("labels") or {}
    role: Role = "both"
    group = None
    pd = selector.pd_group
    if pd is not None:
        group = labels.get(pd.group_key)
        if all(labels.get(k) == v for k, v in pd.prefill_labels.items()):
            role = "prefill"
        elif all(labels.get(k) == v for k, v in pd.decode_labels.items()):
            role = "decode"
    ip = pod["status"]["podIP"]
    host = f"[{ip}]" if ":" in ip else ip  # IPv6
    return StaticEndpoint(
        endpoint_name(server, pod),
        f"{selector.protocol}://{host}:{port}",
        role,
        group,
        labels.get(selector.domain_label),
        selector.max_loras,
    )


class PodEndpoints:
    """The reflector's sink for one ModelServer (called on the reflector's thread only): which of its pods are
    endpoints, and the change each event or relist makes to that."""

    def __init__(self, server: str, selector: WorkloadSelector, publish: Change) -> None:
        self.server, self.selector, self.publish = server, selector, publish
        self.endpoints: dict[str, StaticEndpoint] = {}  # endpoint name -> endpoint
        self._warned: set[str] = set()  # ready pods without the named port, said once

    def _endpoint(self, pod: dict[str, Any]) -> StaticEndpoint | None:
        ep = pod_endpoint(self.server, pod, self.selector)
        name = endpoint_name(self.server, pod)
        if ep is None and isinstance(self.selector.port, str) and is_ready(pod):
            if name not in self._warned:
                self._warned.add(name)
                log.warning(
                    "pod %s of ModelServer %s is ready but has no container port named %r: not routed to",
                    name.split("/", 1)[1],
                    self.server,
                    self.selector.port,
                )
        else:
            self._warned.discard(name)
        return ep

    def replace(self, kind: str, items: list[dict[str, Any]], resource_version: str) -> None:
        fresh = {}
        for pod in items:
            ep = self._endpoint(pod)
            if ep is not None:
                fresh[ep.name] = ep
        removed = [name for name, ep in self.endpoints.items() if fresh.get(name) != ep]
        added = [ep for name, ep in fresh.items() if self.endpoints.get(name) != ep]
        self.endpoints = fresh
        self._warned &= {endpoint_name(self.server, pod) for pod in items}
        if removed or added:
            self.publish(self.server, removed, added)

    def event(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        name = endpoint_name(self.server, obj)
        if event_type == "DELETED":
            self._warned.discard(name)
            ep = None
        else:
            ep = self._endpoint(obj)
        old = self.endpoints.get(name)
        if ep == old:
            return  # a status heartbeat, a label that routing does not read, a pod that is still not ready
        if ep is None:
            del self.endpoints[name]
        else:
            self.endpoints[name] = ep
        self.publish(self.server, [name] if old is not None else [], [ep] if ep is not None else [])


class Discovery:
    """The reflectors of every ModelServer with a workloadSelector, on one API connection pool; changes are
    applied by ``apply`` on the event loop given to start()."""

    def __init__(
        self,
        selectors: Mapping[str, WorkloadSelector],
        kubeconfig: str | None = None,
        *,
        on_relist: Callable[[str, str], None] | None = None,
    ) -> None:
        try:
            # One connection per ModelServer: its reflector's lists and watches take turns on it.
            self.api = load_api(kubeconfig, pool_size=len(selectors))
        except (ConfigException, OSError) as e:
            where = kubeconfig or "the in-cluster service account (no --kubeconfig)"
            raise ConfigError(
                f"modelServers {', '.join(selectors)}: workloadSelector needs Kubernetes credentials; {where}: {e}"
            ) from None
        self.stop_event = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.apply: Change | None = None
        self.sinks = {server: PodEndpoints(server, selector, self._publish) for server, selector in selectors.items()}
        relist: Callable[[str, str], None] = on_relist or (lambda server, reason: None)

        def relisted(server: str) -> Callable[[str, str], None]:  # a reflector's relist, told as its server's
            return lambda kind, reason: relist(server, reason)

        self.reflectors = [
            Reflector(
                self.api.api_client,
                Resource(
                    "Pod",
                    lambda c: client.CoreV1Api(c).list_namespaced_pod,
                    (selector.namespace,),
                    label_selector=selector.label_selector or None,
                ),
                self.sinks[server],
                self.stop_event,
                on_relist=relisted(server),
            )
            for server, selector in selectors.items()
        ]
        for server, r in zip(selectors, self.reflectors):
            r.name = f"discovery-{server}"

    def start(self, loop: asyncio.AbstractEventLoop, apply: Change) -> None:
        self.loop, self.apply = loop, apply
        for r in self.reflectors:
            r.start()

    def stop(self) -> None:
        self.stop_event.set()
        for r in self.reflectors:
            r.close()
        self.api.close()

    def _publish(self, server: str, removed: list[str], added: list[StaticEndpoint]) -> None:
        loop, apply = self.loop, self.apply
        if self.stop_event.is_set() or loop is None or apply is None:  # stopping, or not started (no reflector is)
            return
        try:
            loop.call_soon_threadsafe(apply, server, removed, added)
        except RuntimeError:  # the event loop is closed: the router is stopping
            pass
