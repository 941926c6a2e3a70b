"""Binding decisions to the API server through the pods/binding subresource, with bounded concurrency.

A GPU pod first gets its ``volcano.sh/gpu-index`` annotation (a merge patch), then the binding. Both requests
carry the pod's UID as a precondition, so a pod deleted and re-created under the same name is never bound by a
decision made for its predecessor. A binding may first delete pods that give it their place (a warm pool's
placeholders; UID preconditions too, and one already gone is fine): the node is never over-committed. The result
is classified, never retried here: the scheduling loop decides (a 409 means someone else bound it or it was
replaced; a 404 that it is gone; anything else backs off).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import urllib3

from vcore_kube.convert import GPU_INDEX_ANNOTATION
from vcore_kube.kubeclient import Api, ApiException, pod_path

log = logging.getLogger(__name__)

OK, CONFLICT, NOT_FOUND, ERROR = "ok", "conflict", "not_found", "error"


@dataclass(frozen=True)
class BindResult:
    key: str
    uid: str
    node: str
    outcome: str  # OK, CONFLICT, NOT_FOUND or ERROR
    reason: str = ""  # for errors: server_error, timeout, connection, forbidden, ...
    finished: float = 0.0  # wall clock (time.time) when the API server answered
    requested: float = 0.0  # perf_counter when the binding request was sent


class Binder:
    def __init__(
        self, api: Api, concurrency: int, done: Callable[[BindResult], None], request_timeout: float = 30.0
    ) -> None:
        self.api, self.done, self.request_timeout = api, done, request_timeout
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="bind")
        self._lock = threading.Lock()
        self._closed = False

    def submit(
        self, pod: dict[str, Any], node: str, gpu_index: str | None = None, evict: Sequence[dict[str, Any]] = ()
    ) -> bool:
        """Queue a binding (after deleting the `evict` pods); False once the binder is shut down (the caller
        forgets the decision)."""
        with self._lock:
            if self._closed:
                return False
            self._pool.submit(self._bind, pod, node, gpu_index, list(evict))
            return True

    def shutdown(self) -> None:
        """Finish the bindings already started, drop the queued ones (their pods stay pending for the next
        scheduler: nothing is half-done), and wait."""
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _bind(self, pod: dict[str, Any], node: str, gpu_index: str | None, evict: list[dict[str, Any]]) -> None:
        meta = pod["metadata"]
        namespace, name, uid = meta.get("namespace", ""), meta["name"], meta.get("uid", "")
        requested = 0.0
        try:
            for victim in evict:
                delete_pod(self.api, victim, self.request_timeout)
            if gpu_index is not None:
                self.api.patch(
                    pod_path(namespace, name),
                    {"metadata": {"uid": uid, "annotations": {GPU_INDEX_ANNOTATION: gpu_index}}},
                    timeout=self.request_timeout,
                )
            requested = time.perf_counter()
            self.api.request(
                "POST",
                pod_path(namespace, name, "binding"),
                timeout=self.request_timeout,
                body={
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": name, "namespace": namespace, "uid": uid},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": node},
                },
            )
            result = BindResult(f"{namespace}/{name}", uid, node, OK, finished=time.time(), requested=requested)
        except ApiException as e:
            outcome = {409: CONFLICT, 404: NOT_FOUND}.get(e.status, ERROR)
            reason = {403: "forbidden", 429: "throttled"}.get(
                e.status, "server_error" if (e.status or 0) >= 500 else f"http_{e.status}"
            )
            if outcome == ERROR:
                log.warning("binding %s/%s to %s: HTTP %s %s", namespace, name, node, e.status, (e.body or "")[:300])
            result = BindResult(
                f"{namespace}/{name}", uid, node, outcome, "" if outcome != ERROR else reason, time.time(), requested
            )
        except (urllib3.exceptions.TimeoutError, TimeoutError):
            result = BindResult(f"{namespace}/{name}", uid, node, ERROR, "timeout", time.time())
        except (urllib3.exceptions.HTTPError, OSError):
            result = BindResult(f"{namespace}/{name}", uid, node, ERROR, "connection", time.time())
        except Exception:  # a bug must not strand the pod in flight: report it as a failed binding
            log.exception("binding %s/%s to %s", namespace, name, node)
            result = BindResult(f"{namespace}/{name}", uid, node, ERROR, "internal", time.time())
        self.done(result)


def delete_pod(api: Api, pod: dict[str, Any], timeout: float = 30.0) -> None:
    """Delete a pod at once (grace period 0), only the one of this UID; one already gone is fine."""
    meta = pod["metadata"]
    try:
        api.delete(
            pod_path(meta.get("namespace", ""), meta["name"]),
            {"gracePeriodSeconds": 0, "preconditions": {"uid": meta.get("uid")}},
            timeout=timeout,
        )
    except ApiException as e:
        if e.status not in (404, 409):  # gone, or a new pod of that name: nothing of this one is left
            raise
