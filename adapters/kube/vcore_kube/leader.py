"""Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules.

A candidate takes the Lease when it does not exist, when it is released (no holder), or when this candidate
has watched the holder's record stay unchanged for leaseDuration (measured on its own monotonic clock from
when it last saw the record change, so clock skew between machines does not matter). Every write carries the
resourceVersion it read, so two candidates cannot both win. The leader renews every retryPeriod and gives up
leading when it has not renewed for renewDeadline. release() hands the Lease over at once on shutdown.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from vcore_kube.kubeclient import Api, ApiException

log = logging.getLogger(__name__)


def _micro_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector(threading.Thread):
    def __init__(
        self,
        api: Api,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
        stop: threading.Event,
    ) -> None:
        super().__init__(name="leader-election", daemon=True)
        self.api, self.identity = api, identity
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
        self.collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self.name, self.namespace = name, namespace
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.on_started, self.on_stopped, self.stop_event = on_started, on_stopped, stop
        self.leading = threading.Event()
        self._observed: tuple | None = None  # (holder, renewTime, leaseTransitions) last seen
        self._observed_at = 0.0
        self._lease: dict[str, Any] | None = None

    def run(self) -> None:
        # Candidate: try every retryPeriod until the Lease is ours.
        while not self.stop_event.is_set():
            if self._try_acquire_or_renew():
                break
            self.stop_event.wait(self.retry_period)
        else:
            return
        log.info("leader election: %s leads (lease %s/%s)", self.identity, self.namespace, self.name)
        self.leading.set()
        self.on_started()
        # Leader: renew; a renewal that keeps failing past renewDeadline ends the leadership.
        last_renew = time.monotonic()
        while not self.stop_event.wait(self.retry_period):
            if self._try_acquire_or_renew():
                last_renew = time.monotonic()
            elif time.monotonic() - last_renew > self.renew_deadline or not self._still_ours():
                log.error("leader election: lost the lease %s/%s", self.namespace, self.name)
                self.leading.clear()
                self.on_stopped()
                return

    def _still_ours(self) -> bool:
        return self._observed is None or self._observed[0] == self.identity

    def _try_acquire_or_renew(self) -> bool:
        now = _micro_now()
        try:
            lease = self.api.get(self.path)
        except ApiException as e:
            if e.status != 404:
                log.warning("leader election: reading the lease: HTTP %s", e.status)
                return False
            try:
                self._lease = self.api.create(
                    self.collection,
                    {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "metadata": {"name": self.name, "namespace": self.namespace},
                        "spec": self._spec(now, now, 0),
                    },
                )
                self._observe(self._lease)
                return True
            except Exception as e:  # 409: another candidate created it first
                log.info("leader election: creating the lease: %s", e)
                return False
        except Exception as e:  # API server unreachable
            log.warning("leader election: reading the lease: %s", e)
            return False
        self._observe(lease)
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        if (
            holder
            and holder != self.identity
            and time.monotonic() < self._observed_at + (spec.get("leaseDurationSeconds") or self.lease_duration)
        ):
            return False  # someone else holds a lease that has not expired
        transitions = spec.get("leaseTransitions") or 0
        acquire = spec.get("acquireTime") if holder == self.identity else now
        if holder != self.identity:
            transitions += 1
        lease["spec"] = self._spec(acquire, now, transitions)
        try:
            self._lease = self.api.put(self.path, lease)  # carries the resourceVersion read: 409 if it moved
        except Exception as e:
            log.info("leader election: updating the lease: %s", e)
            return False
        self._observe(self._lease)
        return True

    def _spec(self, acquire: str | None, renew: str, transitions: int) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, round(self.lease_duration)),
            "acquireTime": acquire,
            "renewTime": renew,
            "leaseTransitions": transitions,
        }

    def _observe(self, lease: dict[str, Any]) -> None:
        spec = lease.get("spec") or {}
        record = (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("leaseTransitions"))
        if record != self._observed:
            self._observed, self._observed_at = record, time.monotonic()

    def release(self) -> None:
        """Give the Lease up (no holder, 1 s duration) so a standby takes over without waiting it out."""
        if not self.leading.is_set() or self._lease is None:
            return
        self.leading.clear()
        lease = self._lease
        lease["spec"] = {
            **lease.get("spec", {}),
            "holderIdentity": None,
            "leaseDurationSeconds": 1,
            "renewTime": _micro_now(),
        }
        try:
            self.api.put(self.path, lease)
        except Exception as e:
            log.warning("leader election: releasing the lease: %s", e)
