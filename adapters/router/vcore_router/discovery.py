"""Endpoints from Kubernetes: list + watch the pods of a ModelServer's workloadSelector.

Uses the official ``kubernetes`` client's list and watch of pods by label selector (relisting on 410 Gone), so
that it can later be switched to vcore_kube's watch. A Ready pod with an IP becomes an endpoint
(``<namespace>/<pod>`` at ``http://<podIP>:<port>``); its role and PD group come from the pdGroup labels, its
network domain from the domain label; a pod that is deleted or stops being Ready is removed.
"""
from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from vcore_router.config import StaticEndpoint, WorkloadSelector

log = logging.getLogger("vcore_router.discovery")


def pod_endpoint(pod, selector: WorkloadSelector) -> StaticEndpoint | None:
    """The endpoint a pod stands for, or None when it is not Ready or has no IP."""
    status = pod.status
    if status is None or not status.pod_ip or pod.metadata.deletion_timestamp is not None:
        return None
    ready = any(c.type == "Ready" and c.status == "True" for c in (status.conditions or []))
    if not ready:
        return None
    labels = pod.metadata.labels or {}
    role, group = "both", None
    pd = selector.pd_group
    if pd is not None:
        group = labels.get(pd.group_key)
        if all(labels.get(k) == v for k, v in pd.prefill_labels.items()):
            role = "prefill"
        elif all(labels.get(k) == v for k, v in pd.decode_labels.items()):
            role = "decode"
    return StaticEndpoint(f"{pod.metadata.namespace}/{pod.metadata.name}", f"http://{status.pod_ip}:{selector.port}",
                          role, group, labels.get(selector.domain_label), selector.max_loras)


class PodWatcher:
    """Runs list+watch in a thread and calls ``on_add(endpoint)`` / ``on_remove(name)`` on the event loop."""

    def __init__(self, api, selector: WorkloadSelector, loop: asyncio.AbstractEventLoop,
                 on_add: Callable[[StaticEndpoint], None], on_remove: Callable[[str], None]):
        self.api, self.selector, self.loop = api, selector, loop
        self.on_add, self.on_remove = on_add, on_remove
        self.known: dict[str, StaticEndpoint] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vcore-router-pod-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _selector(self) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(self.selector.match_labels.items()))

    def _apply(self, pod) -> None:
        name = f"{pod.metadata.namespace}/{pod.metadata.name}"
        ep = pod_endpoint(pod, self.selector)
        old = self.known.get(name)
        if ep == old:
            return
        if old is not None:
            del self.known[name]
            self.loop.call_soon_threadsafe(self.on_remove, name)
        if ep is not None:
            self.known[name] = ep
            self.loop.call_soon_threadsafe(self.on_add, ep)

    def _delete(self, pod) -> None:
        name = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if self.known.pop(name, None) is not None:
            self.loop.call_soon_threadsafe(self.on_remove, name)

    def _run(self) -> None:
        from kubernetes import watch
        from kubernetes.client.rest import ApiException

        while not self._stop.is_set():
            try:
                listing = self.api.list_namespaced_pod(self.selector.namespace, label_selector=self._selector())
                seen = set()
                for pod in listing.items:
                    seen.add(f"{pod.metadata.namespace}/{pod.metadata.name}")
                    self._apply(pod)
                for gone in [n for n in self.known if n not in seen]:
                    del self.known[gone]
                    self.loop.call_soon_threadsafe(self.on_remove, gone)
                w = watch.Watch()
                for event in w.stream(self.api.list_namespaced_pod, self.selector.namespace,
                                      label_selector=self._selector(),
                                      resource_version=listing.metadata.resource_version, timeout_seconds=30):
                    if self._stop.is_set():
                        w.stop()
                        return
                    if event["type"] == "DELETED":
                        self._delete(event["object"])
                    elif event["type"] in ("ADDED", "MODIFIED"):
                        self._apply(event["object"])
            except ApiException as e:
                if e.status != 410:  # 410 Gone: resourceVersion too old, relist at once
                    log.warning("pod watch failed (%s); relisting in 2 s", e.status)
                    self._stop.wait(2)
            except Exception as e:  # network errors: back off and relist
                log.warning("pod watch failed (%s); relisting in 2 s", e)
                self._stop.wait(2)
