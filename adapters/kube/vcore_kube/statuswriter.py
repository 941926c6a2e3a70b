"""The status writer: makes the status the API server holds for an object (a PodGroup, a Queue) what vcore wants
it to be, and keeps it so.

Per object it keeps the latest wanted status and the newest version of the object it has seen (the informer
cache's, or a write's answer, whichever is newer by resourceVersion). A write is made only when the two differ;
wanting again before the write goes out replaces the wanted status (one write, the latest status), never adds a
second. Nothing is dropped: memory is one entry per object (gone when the object is deleted or replaced), not a
queue of writes. Each write is a merge patch preconditioned on the UID and resourceVersion it was decided
against: a conflict (someone wrote in between) re-reads the object and decides again at once; any other failure
(the API server down, 5xx, 429, a timeout) is retried by the writer's own threads after an exponential backoff
(capped, with jitter), whether or not a scheduling cycle runs. Should the object later change away from the
wanted status (another writer, a restore), it is written back.

The writer's threads are its own: writing statuses never waits behind events, nor events behind statuses.
Thread contract: want, observed, pending and close may be called from any thread.
"""

from __future__ import annotations

import functools
import heapq
import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vcore_kube.kubeclient import ApiException

if TYPE_CHECKING:
    from vcore_kube.kubeclient import Api
    from vcore_kube.metrics import Metrics

log = logging.getLogger(__name__)

WORKERS = 16
RETRY_INITIAL, RETRY_CAP = 0.25, 30.0  # seconds: the backoff of a failed write doubles from 0.25 s up to 30 s
CONFLICTS_AT_ONCE = 3  # conflicts re-read and retried at once; beyond that, with the backoff
# What a write came to (the metric's `result` label).
OK, CONFLICT, NOT_FOUND, ERROR = "ok", "conflict", "not_found", "error"
_IDLE, _READY, _WAITING, _WRITING = range(4)


@dataclass(frozen=True)
class StatusKind:
    """How one kind's status is written: where (the object itself, or its status subresource), where the object is
    read after a conflict, when the status the server has already is the wanted one, and the patch's status part
    (from the server's status and the wanted one)."""

    name: str
    write_path: Callable[[str], str]
    read_path: Callable[[str], str]
    same: Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
    patch: Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]


class _Entry:
    __slots__ = ("kind", "key", "known", "want", "state", "failures", "conflicts", "gone")

    def __init__(self, kind: StatusKind, key: str, known: dict[str, Any]) -> None:
        self.kind, self.key, self.known = kind, key, known
        self.want: dict[str, Any] | None = None
        self.state = _IDLE
        self.failures = 0  # failed writes in a row (the backoff's exponent)
        self.conflicts = 0
        self.gone = False  # deleted while a write was in flight

    def satisfied(self) -> bool:
        return self.want is None or self.kind.same(self.known.get("status") or {}, self.want)


def retry_delay(failures: int, rng: random.Random, initial: float = RETRY_INITIAL, cap: float = RETRY_CAP) -> float:
    """Seconds before retrying a write that failed `failures` times in a row: initial * 2**(failures-1), capped,
    with full jitter over its upper half (many objects failing together do not retry in lockstep)."""
    d = min(cap, initial * 2 ** min(failures - 1, 32))
    return d / 2 + rng.random() * d / 2


class StatusWriter:
    def __init__(
        self,
        api: Api,
        kinds: Iterable[StatusKind],
        *,
        workers: int = WORKERS,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.api, self.metrics, self.clock = api, metrics, clock
        self.kinds = {k.name: k for k in kinds}
        self.rng = rng or random.Random()
        self._cond = threading.Condition()
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._ready: deque[_Entry] = deque()
        self._waiting: list[tuple[float, int, _Entry]] = []  # (due, tie, entry): failed writes backing off
        self._tie = 0
        self._writing = 0
        self._stopping = False
        self._failing = False  # logged once per run of failures, not once per object
        self._threads = [
            threading.Thread(target=self._run, name=f"status-writer-{i}", daemon=True) for i in range(workers)
        ]
        if metrics is not None:
            for name in self.kinds:
                metrics.status_writes_pending.labels(name).set_function(functools.partial(self.pending, name))

    def start(self) -> StatusWriter:
        for t in self._threads:
            t.start()
        return self

    # -- what the scheduling loop says --------------------------------------------------------------------
    def want(self, kind: str, key: str, current: dict[str, Any], status: dict[str, Any]) -> bool:
        """The status object `key` should have; `current` is the object as the informer cache has it. Returns
        whether a write is needed (the newest version seen says otherwise)."""
        k = self.kinds[kind]
        with self._cond:
            entry = self._entries.get((kind, key))
            if entry is not None and _uid(current) != _uid(entry.known):  # another object of that name now
                self._forget(entry)
                entry = None
            if entry is None:
                entry = self._entries[(kind, key)] = _Entry(k, key, current)
            elif _newer(current, entry.known):
                entry.known = current
            entry.want = status
            if entry.satisfied():
                return False
            self._schedule(entry)
            return True

    def observed(self, kind: str, key: str, obj: dict[str, Any] | None) -> None:
        """The informer cache's new version of an object (None: deleted)."""
        with self._cond:
            entry = self._entries.get((kind, key))
            if entry is None:
                return
            if obj is None or _uid(obj) != _uid(entry.known):  # gone, or replaced by a new object of that name
                self._forget(entry)
                return
            if not _newer(obj, entry.known):  # our own write coming back, or older still
                return
            entry.known = obj
            if not entry.satisfied():  # changed away from what vcore wants: write it back
                self._schedule(entry)

    def pending(self, kind: str | None = None) -> int:
        """Objects whose status is still to be written (queued or backing off, and not yet what the server has), or
        being written."""
        with self._cond:
            return sum(
                1
                for e in self._entries.values()
                if (kind is None or e.kind.name == kind)
                and (e.state == _WRITING or (e.state != _IDLE and not e.satisfied()))
            )

    def wanted(self, kind: str, key: str) -> dict[str, Any] | None:
        with self._cond:
            entry = self._entries.get((kind, key))
            return entry.want if entry is not None else None

    def close(self, timeout: float = 5.0) -> None:
        """Write what is due (up to timeout), then stop the threads."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while (self._ready or self._writing) and any(t.is_alive() for t in self._threads):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            self._stopping = True
            self._cond.notify_all()
        for t in self._threads:
            if t.is_alive():
                t.join(max(0.1, deadline - time.monotonic()))

    # -- bookkeeping (the lock held) ------------------------------------------------------------------------
    def _schedule(self, entry: _Entry) -> None:
        if entry.state == _IDLE:  # queued, waiting out a backoff or being written: the latest want goes then
            entry.state = _READY
            self._ready.append(entry)
            self._cond.notify()

    def _forget(self, entry: _Entry) -> None:
        if self._entries.get((entry.kind.name, entry.key)) is entry:
            del self._entries[(entry.kind.name, entry.key)]
        if entry.state == _WRITING:
            entry.gone = True  # the writer drops it when the write returns
        entry.state = _IDLE  # a queued or backing-off copy is skipped when taken

    def _take(self) -> _Entry | None:
        while not self._stopping:
            now = self.clock()
            while self._waiting and self._waiting[0][0] <= now:
                entry = heapq.heappop(self._waiting)[2]
                if entry.state == _WAITING:
                    entry.state = _READY
                    self._ready.append(entry)
            while self._ready:
                entry = self._ready.popleft()
                if entry.state != _READY:  # forgotten meanwhile
                    continue
                if entry.satisfied():  # the cache caught up, or the want changed back
                    entry.state = _IDLE
                    continue
                entry.state = _WRITING
                self._writing += 1
                return entry
            self._cond.wait(self._waiting[0][0] - now if self._waiting else None)
        return None

    # -- the writers' threads -----------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                entry = self._take()
                if entry is None:
                    return
                known, want = entry.known, entry.want
            assert want is not None, "a satisfied entry is never written"
            try:
                result, obj, error = self._write(entry.kind, entry.key, known, want)
            except Exception as e:  # a bug must not stop the writer: the write is retried like any failure
                log.exception("writing the status of %s %s", entry.kind.name, entry.key)
                result, obj, error = ERROR, None, e
            if self.metrics is not None:
                self.metrics.status_writes.labels(entry.kind.name, result).inc()
            with self._cond:
                self._writing -= 1
                self._done(entry, result, obj, error)
                self._cond.notify_all()  # close() waits for the writing to end

    def _write(
        self, kind: StatusKind, key: str, known: dict[str, Any], want: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None, Exception | None]:
        meta = known.get("metadata") or {}
        body = {
            "metadata": {"uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")},
            "status": kind.patch(known.get("status") or {}, want),
        }
        try:
            return OK, self.api.patch(kind.write_path(key), body), None
        except ApiException as e:
            if e.status == 404:
                return NOT_FOUND, None, e
            if e.status != 409:
                return ERROR, None, e
        except (ConnectionError, TimeoutError, OSError) as e:
            return ERROR, None, e
        # 409: the object changed since (or is another object of that name): read it, then decide again.
        try:
            return CONFLICT, self.api.get(kind.read_path(key)), None
        except ApiException as e:
            return (NOT_FOUND if e.status == 404 else ERROR), None, e
        except (ConnectionError, TimeoutError, OSError) as e:
            return ERROR, None, e

    def _done(self, entry: _Entry, result: str, obj: dict[str, Any] | None, error: Exception | None) -> None:
        entry.state = _IDLE
        if entry.gone or result == NOT_FOUND:
            self._forget(entry)
            return
        if result == ERROR:
            entry.failures += 1
            if not self._failing:
                self._failing = True
                log.warning(
                    "status writes fail (retried with backoff): %s %s: %s", entry.kind.name, entry.key, _describe(error)
                )
        else:
            assert obj is not None, "a write or a read that succeeded returns the object"
            if result == OK:
                entry.failures = entry.conflicts = 0
                if self._failing:
                    self._failing = False
                    log.info("status writes succeed again")
            else:
                entry.conflicts += 1
            if _uid(obj) != _uid(entry.known):  # replaced by a new object: what was wanted was for the old one
                self._forget(entry)
                return
            if _newer(obj, entry.known):
                entry.known = obj
        if entry.satisfied():
            if result != CONFLICT:
                entry.conflicts = 0
            return
        if result == ERROR or entry.conflicts > CONFLICTS_AT_ONCE:
            entry.state = _WAITING
            self._tie += 1
            delay = retry_delay(max(entry.failures, entry.conflicts - CONFLICTS_AT_ONCE), self.rng)
            heapq.heappush(self._waiting, (self.clock() + delay, self._tie, entry))
        else:
            entry.state = _READY
            self._ready.append(entry)


def _uid(obj: Mapping[str, Any]) -> str | None:
    return (obj.get("metadata") or {}).get("uid")


def _newer(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether object version a is newer than b. resourceVersions are etcd revisions, compared as integers (an
    object's versions only grow); an unreadable one counts as newer when it differs."""
    ra, rb = (a.get("metadata") or {}).get("resourceVersion"), (b.get("metadata") or {}).get("resourceVersion")
    try:
        return int(str(ra)) > int(str(rb))
    except (TypeError, ValueError):
        return ra != rb


def _describe(error: Exception | None) -> str:
    if isinstance(error, ApiException):
        return f"HTTP {error.status} {error.reason or ''}".strip()
    return f"{type(error).__name__}: {error}"
