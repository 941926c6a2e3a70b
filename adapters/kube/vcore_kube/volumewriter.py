"""VolumeBinding's PreBind writes through the API, with bounded concurrency: for a placed pod whose claims are not
all bound, the PVs vcore chose get their claimRef and the claims to provision their selected-node annotation
(vcore.Cluster.volume_writes builds the objects), each an update (PUT) at the resourceVersion the cache holds, so
an object changed since fails with a conflict instead of being overwritten. The result (the resourceVersions the
writes returned, or the error in kube-scheduler's words) goes back to the scheduling loop, which waits for the PV
controller and the provisioner to bind the claims before it binds the pod.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import urllib3

from vcore_kube.kubeclient import Api, ApiException

log = logging.getLogger(__name__)

PERSISTENT_VOLUME, CLAIM = "persistentvolume", "persistentvolumeclaim"


@dataclass(frozen=True)
class WriteResult:
    key: str  # the pod's namespace/name
    uid: str
    written: dict[str, str] = field(default_factory=dict)  # "<kind>/<key>" -> resourceVersion returned
    error: str = ""  # kube-scheduler's words for a failed write ("" when every write landed)


def object_path(kind: str, obj: dict) -> str:
    meta = obj["metadata"]
    if kind == PERSISTENT_VOLUME:
        return f"/api/v1/persistentvolumes/{meta['name']}"
    return f"/api/v1/namespaces/{meta.get('namespace') or 'default'}/persistentvolumeclaims/{meta['name']}"


def object_key(kind: str, obj: dict) -> str:
    meta = obj["metadata"]
    return (
        f"{kind}/{meta['name']}"
        if kind == PERSISTENT_VOLUME
        else f"{kind}/{meta.get('namespace') or 'default'}/{meta['name']}"
    )


def api_error(e: ApiException) -> str:
    """The API server's message of a failed request, as the Go client's error reads."""
    try:
        message = json.loads(e.body or "{}").get("message")
    except (ValueError, AttributeError):
        message = None
    return message or f"HTTP {e.status}: {(e.body or e.reason or '')[:200]}"


class VolumeWriter:
    def __init__(
        self, api: Api, concurrency: int, done: Callable[[WriteResult], None], request_timeout: float = 30.0
    ) -> None:
        self.api, self.done, self.request_timeout = api, done, request_timeout
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="volume-write")
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, key: str, uid: str, writes: list[tuple[str, dict]]) -> bool:
        """Queue a pod's writes (in order); False once shut down."""
        with self._lock:
            if self._closed:
                return False
            self._pool.submit(self._write, key, uid, writes)
            return True

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _write(self, key: str, uid: str, writes: list[tuple[str, dict]]) -> None:
        written: dict[str, str] = {}
        error = ""
        try:
            for kind, obj in writes:
                answer = self.api.put(object_path(kind, obj), obj, timeout=self.request_timeout)
                written[object_key(kind, obj)] = ((answer or {}).get("metadata") or {}).get("resourceVersion", "")
        except ApiException as e:
            error = api_error(e)
        except (urllib3.exceptions.HTTPError, OSError, TimeoutError) as e:
            error = f"updating volumes: {e}"
        except Exception as e:  # a bug must not strand the pod: its binding fails and it is tried again
            log.exception("PreBind writes of %s", key)
            error = f"updating volumes: {e}"
        self.done(WriteResult(key, uid, written, error))
